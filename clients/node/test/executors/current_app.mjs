// An executor whose code below the handlers reaches the call through current() (issue 40, part 6).
import * as net from "node:net";

import { current, run, tool } from "../../dist/index.js";

// Outside a tool call, current() says so.
let atImport = "current() answered at import time";
try {
  current();
} catch (e) {
  atImport = `${e.name}: ${e.message}`;
}

// A helper the handler calls without giving it ctx, as a library would be.
async function remember(ref) {
  const call = current();
  await call.kv.put(`seen:${call.call}:${call.issue}:${call.authorization}`, ref);
  return call.call;
}

// A LangChain-style tool body: the model's arguments only, never ctx.
const lookupTool = async ({ ref }) => ({ call: await remember(ref) });

tool("create", async (args, ctx) => {
  // A (virtual) timer: its callback and the code after it keep the call.
  const fromTimer = await new Promise((resolve) => setTimeout(() => resolve(current().call), 10));
  const out = await lookupTool({ ref: args.ref });
  if (current() !== ctx || fromTimer !== ctx.call) throw new Error("current() is not the handler's ctx");
  return out;
});

tool("outside", async (args, ctx) => {
  ctx.log(atImport);
  // What current() exposes: ctx's public fields, nothing about the intent.
  ctx.log(JSON.stringify(Object.keys(current()).sort()));
});

// An OTLP exporter's connection to its default collector port (issue 40, part 5).
tool("otlp_socket", async () => {
  net.connect({ host: "127.0.0.1", port: 4318 });
});

run();
