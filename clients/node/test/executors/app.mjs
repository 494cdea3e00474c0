// The executor the client's tests run under the fake simulator: one tool per feature.
import * as net from "node:net";
import { setTimeout as sleepPromise } from "node:timers/promises";
import { randomBytes, randomUUID as nodeUUID } from "node:crypto";

import { Definite, failed, Indefinite, ok, run, tool, unknown } from "../../dist/index.js";

let cache = [];

// A create with a durable key: get, else cas a fresh (seeded) UUID; 400 is definite.
tool("create", async (args, ctx) => {
  const name = `key:${args.ref}`;
  let key = await ctx.kv.get(name);
  if (key === null) {
    key = crypto.randomUUID();
    const won = await ctx.kv.cas(name, 0, key);
    key = won.ok ? key : won.value;
  }
  const r = await fetch(`${ctx.provider.base_url}/v1/resources`, {
    method: "POST",
    headers: { "content-type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify({ ref: args.ref, tenant: args.tenant }),
    signal: AbortSignal.timeout(5000),
  });
  if (r.status === 400) throw new Definite(`400 ${await r.text()}`);
  if (!r.ok) throw new Error(`HTTP ${r.status}`);
  return r.json();
});

// The store's operations, a state and a log line.
tool("journal", async (args, ctx) => {
  const k = `op:${args.ref}`;
  await ctx.kv.get(k);
  const v1 = await ctx.kv.put(k, "started");
  const a = await ctx.kv.cas(k, v1, "sent");
  const b = await ctx.kv.cas(k, v1, "stale");
  const l = await ctx.kv.cas(`lease:${args.ref}`, 0, "w0");
  const entries = await ctx.kv.list("op:");
  ctx.log(`put=${v1} cas=${JSON.stringify(a)} stale=${JSON.stringify(b)} lease=${l.version} entries=${JSON.stringify(entries)}`);
  const d1 = await ctx.kv.delete(`lease:${args.ref}`);
  const d2 = await ctx.kv.delete(`lease:${args.ref}`);
  const gone = await ctx.kv.getVersioned(`lease:${args.ref}`);
  ctx.log(`deleted=${d1},${d2} after=${JSON.stringify(gone)}`);
  ctx.state("confirmed", "res_3");
  return ok("res_3");
});

// A hand-written retry loop: setTimeout backoff, retrying on TimeoutError.
tool("retrying", async (args, ctx) => {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await fetch(`${ctx.provider.base_url}/v1/resources`, {
        method: "POST",
        body: JSON.stringify({ ref: args.ref }),
        signal: AbortSignal.timeout(1000),
      });
      return await r.json();
    } catch (e) {
      ctx.log(`attempt ${attempt}: ${e.name}: ${e.message}`);
      if (e.name !== "TimeoutError" || attempt === 3) throw e;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 1)));
    }
  }
});

// What fetch throws, by how the request is bounded (args.bound).
tool("fetch_errors", async (args, ctx) => {
  const init = { method: "GET" };
  if (args.bound === "signal") init.signal = AbortSignal.timeout(750);
  if (args.bound === "any") init.signal = AbortSignal.any([new AbortController().signal, AbortSignal.timeout(900)]);
  if (args.bound === "controller") {
    const c = new AbortController();
    setTimeout(() => c.abort(), 2500);
    init.signal = c.signal;
  }
  try {
    await fetch(`${ctx.provider.base_url}/v1/resources/res_0`, init);
    return "answered";
  } catch (e) {
    ctx.log(`${e.constructor.name} ${e.name}: ${e.message}; cause ${e.cause?.name} ${e.cause?.code}; now ${ctx.nowMs()}`);
    throw e;
  }
});

// Headers, bodies and the Response.
tool("fetch_misc", async (args, ctx) => {
  const r = await fetch(new URL("/v1/resources?ref=r1", ctx.provider.base_url), { headers: { "X-Trace": "t1" } });
  ctx.log(`status=${r.status} ok=${r.ok} url=${r.url} type=${r.headers.get("content-type")} replayed=${r.headers.get("idempotent-replayed")}`);
  ctx.log(`body=${await r.text()}`);
  const bin = await fetch(`${ctx.provider.base_url}/v1/blob`, { method: "PUT", body: new Uint8Array([0xff, 0x00, 0x41]) });
  ctx.log(`bin=${bin.status} ${[...new Uint8Array(await bin.arrayBuffer())].join(",")}`);
  const empty = await fetch(`${ctx.provider.base_url}/v1/resources/res_9`, { method: "DELETE" });
  ctx.log(`empty=${empty.status} body=${JSON.stringify(await empty.text())}`);
  ctx.receipt = null;
  return {};
});

// The virtual clock and timers.
tool("clock", async (args, ctx) => {
  const t0 = performance.now();
  ctx.log(`now=${Date.now()} iso=${new Date().toISOString()} perf=${t0} hr=${process.hrtime.bigint()} ctx=${ctx.nowMs()} date=${Date()}`);
  await ctx.sleep(1500);
  ctx.log(`after ctx.sleep: ${new Date().toISOString()} perf=${performance.now() - t0}`);
  await sleepPromise(250);
  ctx.log(`after timers/promises: ${Date.now() - Date.UTC(2026, 0, 1)}`);
  const ticks = [];
  await new Promise((resolve) => {
    const h = setInterval(() => {
      ticks.push(ctx.nowMs());
      if (ticks.length === 3) {
        clearInterval(h);
        resolve();
      }
    }, 40);
  });
  const cleared = setTimeout(() => ctx.log("never"), 10);
  clearTimeout(cleared);
  const order = [];
  await Promise.all([
    new Promise((r) => setTimeout(() => (order.push("b"), r()), 20)),
    new Promise((r) => setTimeout(() => (order.push("a"), r()), 10)),
    new Promise((r) => setTimeout(() => (order.push("c"), r()), 20)),
  ]);
  ctx.log(`ticks=${ticks.join(",")} order=${order.join("")} now=${ctx.nowMs()}`);
});

// Seeded randomness.
tool("mint", async (args, ctx) => {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  ctx.log(`uuid=${crypto.randomUUID()} node=${nodeUUID()} random=${Math.random()} bytes=${bytes.join(",")} rb=${randomBytes(3).toString("hex")}`);
  cache.push(ctx.call);
  ctx.log(`cache=${cache.join(",")}`);
});

// What a handler claims (args.kind).
tool("claims", async (args) => {
  switch (args.kind) {
    case "ok":
      return ok("res_9");
    case "failed":
      return failed("400 rejected");
    case "unknown":
      return unknown("who knows");
    case "definite":
      throw new Definite("nothing was created");
    case "indefinite":
      throw new Indefinite("maybe");
    case "error":
      throw new Error("outer", { cause: new RangeError("inner") });
    case "string":
      throw "a string";
    case "array":
      return [1];
    case "number":
      return 42;
    case "text":
      return "done";
    case "sync":
      return undefined;
  }
});

// Blocks in a request until the simulator answers (or cuts the run); reports ctx.cancelled.
tool("wait_for_answer", async (args, ctx) => {
  await fetch(`${ctx.provider.base_url}/v1/resources/res_0`);
  ctx.log(`cancelled=${ctx.cancelled}`);
});

// A real socket: strict mode refuses it, even when the handler catches the error.
tool("strict_socket", async (args, ctx) => {
  try {
    net.connect(443, "93.184.216.34");
  } catch (e) {
    ctx.log(`caught ${e.name}`);
  }
  return "done";
});

run({
  assumptions: ["durable_journal", "atomic_dedup"],
  guarantee: ["at_most_once"],
  onReset: () => {
    cache = [];
  },
});
