// current(): the running call's ctx from code below the handler, under the simulator and in
// production, with concurrent production calls each seeing their own (issue 40, part 6).
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { setTimeout as realSleep } from "node:timers/promises";

import { current, NoCallError, RetrylabError, tool } from "../dist/index.js";
import { call, MemoryStore } from "../dist/production.js";
import { started } from "./fakesim.mjs";

const APP = fileURLToPath(new URL("./executors/current_app.mjs", import.meta.url));
const NO_CALL = "no tool call is running: retrylab.current() is only available inside a tool handler or code it calls";

test("a helper not given ctx reaches the store of its call, across a timer", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "create", { ref: "r1", tenant: "t0", authorization: "a1" }, { nowMs: 0 });
  sim.wake(await sim.expect("sleep", { ms: 10 }));
  await sim.kvRound({ op: "put", key: "seen:c1:1:a1", value: "r1" });
  await sim.expect("result", { call: "c1", issue: 1, outcome: "ok" });
  // Another call, a re-run (issue 2): its own id, issue and authorization.
  sim.invoke("c2", "create", { ref: "r2", tenant: "t0", authorization: "a2" }, { issue: 2 });
  sim.wake(await sim.expect("sleep", { ms: 10 }));
  await sim.kvRound({ op: "put", key: "seen:c2:2:a2", value: "r2" });
  await sim.expect("result", { call: "c2", issue: 2, outcome: "ok" });
  assert.equal(await sim.shutdown(), 0);
});

test("outside a call current() says so; inside, it exposes ctx and nothing of the intent", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "outside", {});
  assert.equal((await sim.expect("log")).text, `NoCallError: ${NO_CALL}`);
  const exposed = JSON.parse((await sim.expect("log")).text);
  await sim.expect("result", { call: "c1", outcome: "ok" });
  assert.deepEqual(exposed, ["args", "call", "cancelled", "config", "incarnation", "issue", "kv", "params", "provider", "receipt", "redelivery", "tool", "worker"]);
  assert.equal(await sim.shutdown(), 0);
});

test("current() outside any call throws a named error", () => {
  assert.throws(() => current(), (e) => e instanceof NoCallError && e instanceof RetrylabError && e.name === "NoCallError" && e.message === NO_CALL);
});

test("production: a helper reaches the store, and concurrent calls each see their own", async () => {
  const remember = async (ref) => {
    const c = current();
    await c.kv.put(`seen:${c.call}:${c.issue}:${c.authorization}`, ref);
    return c.call;
  };
  tool("p_current", async (args, ctx) => {
    // The longer wait first: the two calls interleave.
    await realSleep(args.wait);
    await Promise.resolve();
    const fromTimer = await new Promise((resolve) => setTimeout(() => resolve(current().call), 1));
    return { call: await remember(args.ref), fromTimer, same: current() === ctx };
  });
  const store = new MemoryStore();
  const [a, b] = await Promise.all([
    call("p_current", { ref: "r1", authorization: "a1", wait: 30 }, { store, callId: "job-1", issue: 3 }),
    call("p_current", { ref: "r2", authorization: "a2", wait: 1 }, { store, callId: "job-2" }),
  ]);
  assert.deepEqual(a.value, { call: "job-1", fromTimer: "job-1", same: true });
  assert.deepEqual(b.value, { call: "job-2", fromTimer: "job-2", same: true });
  assert.deepEqual(await store.list("seen:"), [["seen:job-1:3:a1", "r1", 2], ["seen:job-2:1:a2", "r2", 1]]);
  // After the calls, and after a handler that threw, no call is current.
  assert.throws(() => current(), NoCallError);
  tool("p_throw", async () => {
    throw new Error(current().call);
  });
  assert.equal((await call("p_throw", {}, { callId: "job-3" })).detail, "Error: job-3");
  assert.throws(() => current(), NoCallError);
});

test("a real socket to an OTLP collector's port is refused naming OpenTelemetry and OTEL_SDK_DISABLED", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "otlp_socket", {});
  const text = (await sim.expect("log")).text;
  assert.equal(await sim.expectEof(), 4);
  assert.equal(
    text,
    'retrylab strict mode violation: real socket: net.Socket.connect({"host":"127.0.0.1","port":4318}) - use fetch (simulated under retrylab)' +
      "; this looks like OpenTelemetry SDK (an OTLP exporter), switched on by the environment the executor inherits: set OTEL_SDK_DISABLED=true",
  );
});
