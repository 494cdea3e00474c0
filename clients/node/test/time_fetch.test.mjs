// Virtual time, seeded randomness and fetch's mapping of the simulator's answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

import { started } from "./fakesim.mjs";

const APP = fileURLToPath(new URL("./executors/app.mjs", import.meta.url));

async function logText(sim) {
  return (await sim.expect("log")).text;
}

test("the clock reads now_ms; ctx.sleep, timers/promises, setInterval and setTimeout are protocol sleeps", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "clock", {}, { nowMs: 1210 });
  assert.equal(
    await logText(sim),
    "now=1767225601210 iso=2026-01-01T00:00:01.210Z perf=1210 hr=1210000000 ctx=1210 date=Thu Jan 01 2026 00:00:01 GMT+0000 (Coordinated Universal Time)",
  );
  let s = await sim.expect("sleep", { ms: 1500 });
  sim.wake(s);
  assert.equal(await logText(sim), "after ctx.sleep: 2026-01-01T00:00:02.710Z perf=1500");
  s = await sim.expect("sleep", { ms: 250 });
  sim.wake(s);
  assert.equal(await logText(sim), "after timers/promises: 2960");
  for (let i = 0; i < 3; i++) sim.wake(await sim.expect("sleep", { ms: 40 }));
  // three timers, due at +10, +20, +20: two sleeps; same-instant timers in creation order
  sim.wake(await sim.expect("sleep", { ms: 10 }));
  sim.wake(await sim.expect("sleep", { ms: 10 }));
  assert.equal(await logText(sim), "ticks=3000,3040,3080 order=abc now=3100");
  await sim.expect("result", { outcome: "ok" });
  assert.equal(await sim.shutdown(), 0);
});

async function mint(seed, { reset = false } = {}) {
  return async (t) => {
    const sim = await started(t, APP, { start: { seed } });
    const out = [];
    sim.invoke("c1", "mint", {});
    out.push(await logText(sim), await logText(sim));
    await sim.expect("result");
    if (reset) {
      await sim.start({ reset: true, seed });
      sim.invoke("c2", "mint", {});
      out.push(await logText(sim), await logText(sim));
      await sim.expect("result");
    }
    await sim.shutdown();
    return out;
  };
}

test("randomness is seeded by start: the same seed gives the same values, in a fresh and in a reset process", async (t) => {
  const a = await (await mint(1157098542, { reset: true }))(t);
  const b = await (await mint(1157098542))(t);
  const c = await (await mint(7))(t);
  assert.match(a[0], /^uuid=[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12} node=\S+ random=0\.\d+ bytes=\d+,\d+,\d+,\d+ rb=[0-9a-f]{6}$/);
  assert.equal(a[0], b[0]);
  assert.notEqual(a[0], c[0]);
  // after a reset, the same values again, and onReset cleared the application's cache
  assert.equal(a[2], a[0]);
  assert.equal(a[1], "cache=c1");
  assert.equal(a[3], "cache=c2");
});

test("a timeout retried by hand: AbortSignal.timeout is timeout_ms, TimeoutError, a virtual backoff", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "retrying", { ref: "r1" }, { nowMs: 0 });
  let http = await sim.expect("http", { timeout_ms: 1000 });
  sim.httpError(http, "read_timeout", { afterMs: 1000 });
  assert.equal(await logText(sim), "attempt 1: TimeoutError: The operation was aborted due to timeout");
  sim.wake(await sim.expect("sleep", { ms: 100 }));
  http = await sim.expect("http", { timeout_ms: 1000 });
  sim.httpError(http, "read_timeout", { afterMs: 1000 });
  await logText(sim);
  sim.wake(await sim.expect("sleep", { ms: 200 }));
  http = await sim.expect("http");
  sim.httpRespond(http, 201, { id: "res_1" }, { afterMs: 30 });
  await sim.expect("result", { outcome: "ok", receipt: "res_1" });
  assert.equal(sim.nowMs, 2330);
  assert.equal(await sim.shutdown(), 0);
});

const ERRORS = [
  // [bound, error, timeout_ms, the handler's log line, the result's detail]
  [
    "none",
    "read_timeout",
    300000,
    "TypeError TypeError: fetch failed; cause HeadersTimeoutError UND_ERR_HEADERS_TIMEOUT; now 300000",
    "TypeError: fetch failed (caused by HeadersTimeoutError: Headers Timeout Error)",
  ],
  [
    "signal",
    "read_timeout",
    750,
    "DOMException TimeoutError: The operation was aborted due to timeout; cause undefined undefined; now 750",
    "TimeoutError: The operation was aborted due to timeout",
  ],
  [
    "any",
    "read_timeout",
    900,
    "DOMException TimeoutError: The operation was aborted due to timeout; cause undefined undefined; now 900",
    "TimeoutError: The operation was aborted due to timeout",
  ],
  [
    "controller",
    "read_timeout",
    2500,
    "DOMException AbortError: This operation was aborted; cause undefined undefined; now 2500",
    "AbortError: This operation was aborted",
  ],
  [
    "signal",
    "connect_timeout",
    750,
    "TypeError TypeError: fetch failed; cause ConnectTimeoutError UND_ERR_CONNECT_TIMEOUT; now 750",
    "TypeError: fetch failed (caused by ConnectTimeoutError: Connect Timeout Error)",
  ],
  [
    "none",
    "refused",
    300000,
    "TypeError TypeError: fetch failed; cause Error ECONNREFUSED; now 0",
    "TypeError: fetch failed (caused by Error: connect ECONNREFUSED provider.sim)",
  ],
  [
    "none",
    "reset",
    300000,
    "TypeError TypeError: fetch failed; cause SocketError UND_ERR_SOCKET; now 20",
    "TypeError: fetch failed (caused by SocketError: other side closed)",
  ],
];

test("transport errors surface as Node's fetch throws them", async (t) => {
  const sim = await started(t, APP);
  let n = 0;
  for (const [bound, error, timeout, line, detail] of ERRORS) {
    await sim.start({ reset: true });
    sim.invoke(`c${++n}`, "fetch_errors", { bound }, { nowMs: 0 });
    const http = await sim.expect("http", { method: "GET", url: "http://provider.sim/v1/resources/res_0", timeout_ms: timeout });
    const afterMs = error === "read_timeout" || error === "connect_timeout" ? timeout : error === "reset" ? 20 : 0;
    sim.httpError(http, error, { afterMs });
    assert.equal(await logText(sim), line, `${bound} ${error}`);
    await sim.expect("result", { outcome: "unknown", detail });
  }
  assert.equal(await sim.shutdown(), 0);
});

test("requests and responses: headers, query, binary bodies, a bodiless status, the receipt left to the handler", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "fetch_misc", {});
  let http = await sim.expect("http", { method: "GET", url: "http://provider.sim/v1/resources?ref=r1", body: "" });
  assert.deepEqual(http.headers, { "x-trace": "t1" });
  sim.httpRespond(http, 200, { id: "res_4", ref: "r1" }, { headers: { "content-type": "application/json", "idempotent-replayed": "true" } });
  assert.equal(await logText(sim), "status=200 ok=true url=http://provider.sim/v1/resources?ref=r1 type=application/json replayed=true");
  assert.equal(await logText(sim), 'body={"id":"res_4","ref":"r1"}');
  http = await sim.expect("http", { method: "PUT", body_b64: "/wBB" });
  // An answer's body is text (the protocol has no body_b64 in http_response).
  sim.httpRespond(http, 200, "\u0000\u0001\u0002", { headers: {} });
  assert.equal(await logText(sim), "bin=200 0,1,2");
  http = await sim.expect("http", { method: "DELETE" });
  sim.httpRespond(http, 204, "");
  assert.equal(await logText(sim), 'empty=204 body=""');
  const result = await sim.expect("result", { outcome: "ok" });
  assert.equal(result.receipt, undefined);
  assert.equal(await sim.shutdown(), 0);
});
