// The handshake, turns, the store, results and the process's exits, through the fake simulator.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";

import { ANY, FakeSim, started } from "./fakesim.mjs";

const APP = fileURLToPath(new URL("./executors/app.mjs", import.meta.url));
const TOOLS = ["create", "journal", "retrying", "fetch_errors", "fetch_misc", "clock", "mint", "claims", "wait_for_answer", "strict_socket"];

test("the handshake declares the tools, assumptions and guarantee", async (t) => {
  const sim = new FakeSim(APP);
  t.after(() => sim.close());
  const hello = await sim.handshake();
  assert.deepEqual(hello, {
    type: "hello",
    protocol: 1,
    mode: "sync",
    client: "retrylab-node/0.1.0",
    tools: TOOLS,
    assumptions: ["durable_journal", "atomic_dedup"],
    guarantee: ["at_most_once"],
  });
  await sim.start({ worker: 2, seed: 7 });
  assert.equal(await sim.shutdown(), 0);
});

test("EOF on the input descriptor is shutdown, also while blocked in a request", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "wait_for_answer", {}, { nowMs: 10 });
  await sim.expect("http");
  sim.closeChannel();
  assert.equal(await sim.expectEof(), 0);
});

test("a create: the key is minted once, kept in the store, sent in the header; ok with the receipt", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "create", { ref: "r1", tenant: "t0" }, { nowMs: 1210 });
  assert.equal((await sim.kvRound({ op: "get", key: "key:r1" })).msg_id, 1);
  const cas = await sim.kvRound({ op: "cas", key: "key:r1", expect_version: 0 });
  const http = await sim.expect("http", { msg_id: 3, call: "c1", method: "POST", url: "http://provider.sim/v1/resources", timeout_ms: 5000 });
  assert.equal(http.headers["idempotency-key"], cas.value);
  assert.equal(http.headers["content-type"], "application/json");
  assert.equal(http.body, '{"ref":"r1","tenant":"t0"}');
  sim.httpRespond(http, 201, { id: "res_0", ref: "r1" }, { afterMs: 195 });
  await sim.expect("result", { call: "c1", issue: 1, outcome: "ok", receipt: "res_0" });
  // The agent's re-run reads the key back: the same key is sent again.
  sim.invoke("c1", "create", { ref: "r1", tenant: "t0" }, { issue: 2 });
  await sim.kvRound({ op: "get", key: "key:r1" });
  const again = await sim.expect("http");
  assert.equal(again.headers["idempotency-key"], cas.value);
  sim.httpRespond(again, 400, '{"error":"rejected"}');
  await sim.expect("result", { call: "c1", issue: 2, outcome: "failed", detail: '400 {"error":"rejected"}' });
  assert.equal(await sim.shutdown(), 0);
});

test("the store's operations, a state and log lines", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "journal", { ref: "r1" }, { nowMs: 5 });
  await sim.kvRound({ op: "get", key: "op:r1" });
  await sim.kvRound({ op: "put", key: "op:r1", value: "started" });
  await sim.kvRound({ op: "cas", key: "op:r1", expect_version: 1, value: "sent" });
  await sim.kvRound({ op: "cas", key: "op:r1", expect_version: 1, value: "stale" });
  await sim.kvRound({ op: "cas", key: "lease:r1", expect_version: 0, value: "w0" });
  await sim.kvRound({ op: "list", prefix: "op:" });
  await sim.expect("log", {
    text: 'put=1 cas={"ok":true,"value":"sent","version":2} stale={"ok":false,"value":"sent","version":2} lease=3 entries=[["op:r1","sent",2]]',
  });
  await sim.kvRound({ op: "delete", key: "lease:r1" });
  await sim.kvRound({ op: "delete", key: "lease:r1" });
  await sim.kvRound({ op: "get", key: "lease:r1" });
  await sim.expect("log", { text: 'deleted=true,false after={"value":null,"version":0}' });
  await sim.expect("state", { call: "c1", state: "confirmed", receipt: "res_3" });
  await sim.expect("result", { outcome: "ok", receipt: "res_3" });
  assert.equal(await sim.shutdown(), 0);
});

const CLAIMS = [
  ["ok", { outcome: "ok", receipt: "res_9" }],
  ["failed", { outcome: "failed", detail: "400 rejected" }],
  ["unknown", { outcome: "unknown", detail: "who knows" }],
  ["definite", { outcome: "failed", detail: "nothing was created" }],
  ["indefinite", { outcome: "unknown", detail: "maybe" }],
  ["error", { outcome: "unknown", detail: "Error: outer (caused by RangeError: inner)" }],
  ["string", { outcome: "unknown", detail: "thrown string: a string" }],
  [
    "array",
    {
      outcome: "unknown",
      detail:
        'TypeError: the handler of "claims" returned a array; return a plain object, a string, undefined or retrylab.ok()/failed()/unknown() (an unrecognised return value claims unknown)',
    },
  ],
  ["text", { outcome: "ok" }],
  ["sync", { outcome: "ok" }],
];

test("what a handler's return value or exception claims", async (t) => {
  const sim = await started(t, APP);
  let n = 0;
  for (const [kind, want] of CLAIMS) {
    sim.invoke(`c${++n}`, "claims", { kind });
    const got = await sim.expect("result", { call: `c${n}`, ...want });
    assert.deepEqual(Object.keys(got).sort(), ["call", "issue", "type", ...Object.keys(want)].sort(), kind);
  }
  assert.equal(await sim.shutdown(), 0);
});

test("a start with reset while blocked in a request abandons the call; a cancel sets ctx.cancelled", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "wait_for_answer", {}, { nowMs: 100 });
  await sim.expect("http", { msg_id: 1 });
  await sim.start({ reset: true, seed: 9 });
  // message ids start again at 1; the abandoned handler never resumes
  sim.invoke("c2", "wait_for_answer", {}, { nowMs: 50 });
  const http = await sim.expect("http", { msg_id: 1, call: "c2" });
  sim.send({ type: "cancel", call: "c2", issue: 1, now_ms: 60 });
  sim.httpRespond(http, 404, "{}");
  await sim.expect("log", { text: "cancelled=true" });
  await sim.expect("result", { call: "c2", outcome: "ok" });
  assert.equal(await sim.shutdown(), 0);
});

test("an unknown field from the simulator is ignored (a newer simulator may add fields)", async (t) => {
  const sim = await started(t, APP);
  sim.send({ type: "invoke", call: "c1", issue: 1, tool: "create", args: { ref: "r1", tenant: "t0" }, redelivery: false, now_ms: 10, extra: 1 }, { checkSchema: false });
  const get = await sim.expect("kv", { op: "get", key: "key:r1" });
  sim.send({ type: "kv_ok", in_reply_to: get.msg_id, ok: true, value: null, version: 0, vesion: 0, lease: { ms: 5 }, now_ms: 10 }, { checkSchema: false });
  const cas = await sim.kvRound({ op: "cas", key: "key:r1", expect_version: 0 });
  const http = await sim.expect("http", { call: "c1" });
  assert.equal(http.headers["idempotency-key"], cas.value);
  sim.send({ type: "http_response", in_reply_to: http.msg_id, status: 201, headers: {}, body: '{"id":"res_0"}', now_ms: 20, trailers: {} }, { checkSchema: false });
  await sim.expect("result", { call: "c1", outcome: "ok", receipt: "res_0" });
  sim.send({ type: "shutdown", reason: "done" }, { checkSchema: false });
  assert.equal(await sim.expectEof(), 0);
});

test("a missing required field is a protocol error: exit 1 with the message on stderr", async (t) => {
  const sim = await started(t, APP);
  sim.send({ type: "invoke", call: "c1", issue: 1, tool: "claims", args: {}, now_ms: 0 }, { checkSchema: false });
  assert.equal(await sim.expectEof(), 1);
  assert.match(sim.stderr(), /ProtocolError: `invoke` lacks its field "redelivery" \(protocol 1\)/);
});

test("a field of the wrong type is a protocol error", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "create", { ref: "r1", tenant: "t0" });
  const get = await sim.expect("kv", { op: "get" });
  sim.send({ type: "kv_ok", in_reply_to: get.msg_id, ok: true, value: null, version: "0", now_ms: 0 }, { checkSchema: false });
  assert.equal(await sim.expectEof(), 1);
  assert.match(sim.stderr(), /ProtocolError: `kv_ok`.version must be an integer >= 0, not "0"/);
});

test("a nested object is checked, its unknown fields ignored", async (t) => {
  const init = { type: "init", protocol: 1, executor: "x", config: {}, params: {}, tools: ["create"] };
  const sim = new FakeSim(APP);
  t.after(() => sim.close());
  await sim.expect("hello");
  sim.send({ ...init, provider: { base_url: "http://provider.sim", key_header: null, http: {}, region: "eu" } }, { checkSchema: false });
  await sim.expect("init_ok");
  const other = new FakeSim(APP);
  t.after(() => other.close());
  await other.expect("hello");
  other.send({ ...init, provider: { base_url: "http://provider.sim", http: {} } }, { checkSchema: false });
  assert.equal(await other.expectEof(), 1);
  assert.match(other.stderr(), /`init`.provider must be an object with .*key_header \(a string or null\)/);
});

test("fork to a process that did not declare it is a protocol error", async (t) => {
  const sim = new FakeSim(APP);
  t.after(() => sim.close());
  await sim.handshake();
  sim.send({ type: "fork", in: "/nonexistent/in", out: "/nonexistent/out" });
  assert.equal(await sim.expectEof(), 1);
  assert.match(sim.stderr(), /`fork`, but this process did not declare "fork": true in its hello/);
});

test("a reply to the wrong msg_id is a protocol error", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "wait_for_answer", {});
  const http = await sim.expect("http");
  sim.send({ type: "wake", in_reply_to: http.msg_id, now_ms: 0 });
  assert.equal(await sim.expectEof(), 1);
  assert.match(sim.stderr(), /after `http` msg_id 1, expected `http_response` or `http_error` in_reply_to 1/);
});

test("time going backwards is a protocol error", async (t) => {
  const sim = await started(t, APP, { start: { nowMs: 100 } });
  sim.send({ type: "invoke", call: "c1", issue: 1, tool: "claims", args: {}, redelivery: false, now_ms: 50 }, { checkClock: false });
  assert.equal(await sim.expectEof(), 1);
  assert.match(sim.stderr(), /time went backwards: now_ms 50 after 100/);
});

test("the simulator's error message: exit 3, quoted on stderr", async (t) => {
  const sim = await started(t, APP);
  sim.send({ type: "error", code: 20, text: "result for call c9, which this process was not given" });
  assert.equal(await sim.expectEof(), 3);
  assert.match(sim.stderr(), /error code 20, unknown_call\): result for call c9/);
});

test("strict mode: a real socket is fatal even when the handler catches it (exit 4)", async (t) => {
  const sim = await started(t, APP);
  sim.invoke("c1", "strict_socket", {});
  await sim.expect("log", { text: ANY });
  const msgs = sim.executorMessages();
  assert.match(msgs[msgs.length - 1].text, /^retrylab strict mode violation: real socket: net\.Socket\.connect/);
  assert.equal(await sim.expectEof(), 4);
  assert.match(sim.stderr(), /StrictModeError/);
});

test("run() outside the simulator says how to run under retrylab", () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RETRYLAB_")));
  const r = spawnSync(process.execPath, [APP], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /NotUnderSimulatorError: retrylab.run\(\) serves the simulator's protocol on fds 3 and 4/);
});

test("run() without a registered tool refuses to start", () => {
  const r = spawnSync(process.execPath, [fileURLToPath(new URL("./executors/no_tools.mjs", import.meta.url))], {
    env: { ...process.env, RETRYLAB_FD_IN: "0", RETRYLAB_FD_OUT: "1" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /no tool is registered/);
});
