// A fake retrylab simulator for the client's tests: it spawns an executor script with the
// protocol's channel on two extra descriptors (named by RETRYLAB_FD_IN/RETRYLAB_FD_OUT),
// speaks protocol 1 from the simulator's side, and checks every message the executor sends
// as strictly as retrylab does (known types, required fields and their types, no unknown
// field, increasing msg_id). Wall-clock timeouts only guard against a hung executor.

import { spawn } from "node:child_process";
import assert from "node:assert/strict";

const RECV_TIMEOUT_MS = 20_000;

const isInt = (v) => Number.isSafeInteger(v);
const STR = [(v) => typeof v === "string", "a string"];
const INT = [isInt, "an integer"];
const NONNEG = [(v) => isInt(v) && v >= 0, "an integer >= 0"];
const STRLIST = [(v) => Array.isArray(v) && v.every((x) => typeof x === "string"), "a list of strings"];
const HEADERS = [
  (v) => v !== null && typeof v === "object" && Object.entries(v).every(([k, x]) => k === k.toLowerCase() && typeof x === "string"),
  "an object of lowercase names to strings",
];
const TIMEOUT = [(v) => v === null || (isInt(v) && v >= 0), "null or an integer >= 0"];

const SCHEMA = {
  hello: { protocol: [INT, true], mode: [STR, true], client: [STR, true], tools: [STRLIST, true], assumptions: [STRLIST, false], guarantee: [STRLIST, false] },
  init_ok: {},
  ready: {},
  http: {
    msg_id: [INT, true],
    call: [STR, true],
    method: [STR, true],
    url: [STR, true],
    headers: [HEADERS, true],
    body: [STR, false],
    body_b64: [STR, false],
    timeout_ms: [TIMEOUT, true],
  },
  sleep: { msg_id: [INT, true], ms: [NONNEG, true] },
  kv: { msg_id: [INT, true], op: [[(v) => ["get", "put", "cas", "delete", "list"].includes(v), "a kv op"], true], key: [STR, false], value: [STR, false], expect_version: [NONNEG, false], prefix: [STR, false] },
  result: {
    call: [STR, true],
    issue: [INT, true],
    outcome: [[(v) => ["ok", "failed", "unknown"].includes(v), "ok, failed or unknown"], true],
    receipt: [STR, false],
    detail: [STR, false],
  },
  state: { call: [STR, true], state: [[(v) => ["confirmed", "failed", "escalated"].includes(v), "a state"], true], receipt: [STR, false] },
  log: { text: [STR, true] },
};

const KV_FIELDS = { get: ["key"], put: ["key", "value"], cas: ["key", "expect_version", "value"], delete: ["key"], list: ["prefix"] };

export function checkMessage(msg, lastMsgId) {
  const fail = (text) => assert.fail(`${text}: ${JSON.stringify(msg)}`);
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) fail("not a JSON object");
  const schema = SCHEMA[msg.type];
  if (!schema) fail(`unknown message type ${JSON.stringify(msg.type)}`);
  for (const [name, value] of Object.entries(msg)) {
    if (name === "type") continue;
    if (!schema[name]) fail(`unknown field ${name} in ${msg.type}`);
    const [[check, what]] = schema[name];
    if (!check(value)) fail(`${msg.type}.${name} must be ${what}`);
  }
  for (const [name, [, required]] of Object.entries(schema)) if (required && !(name in msg)) fail(`${msg.type} lacks ${name}`);
  if (msg.type === "http" && ("body" in msg) === ("body_b64" in msg)) fail("http carries exactly one of body, body_b64");
  if (msg.type === "kv") {
    const fields = Object.keys(msg).filter((k) => !["type", "msg_id", "op"].includes(k)).sort();
    if (JSON.stringify(fields) !== JSON.stringify([...KV_FIELDS[msg.op]].sort())) fail(`kv ${msg.op} carries exactly ${KV_FIELDS[msg.op]}`);
  }
  if (msg.type === "result") {
    if (msg.outcome === "ok" && "detail" in msg) fail("an ok result carries no detail");
    if (msg.outcome !== "ok" && "receipt" in msg) fail("only an ok result carries a receipt");
  }
  if ("msg_id" in msg) {
    if (msg.msg_id <= lastMsgId) fail(`msg_id must increase (last ${lastMsgId})`);
    return msg.msg_id;
  }
  return lastMsgId;
}

/** The simulator's store: store-wide versions from 1, never reused. */
export class Store {
  entries = new Map();
  last = 0;
  answer(msg, nowMs) {
    const reply = { type: "kv_ok", in_reply_to: msg.msg_id, ok: true, now_ms: nowMs };
    const cur = this.entries.get(msg.key) ?? [null, 0];
    switch (msg.op) {
      case "get":
        Object.assign(reply, { value: cur[0], version: cur[1] });
        break;
      case "put":
        this.entries.set(msg.key, [msg.value, ++this.last]);
        reply.version = this.last;
        break;
      case "cas":
        if (cur[1] === msg.expect_version) {
          this.entries.set(msg.key, [msg.value, ++this.last]);
          Object.assign(reply, { value: msg.value, version: this.last });
        } else {
          Object.assign(reply, { ok: false, value: cur[0], version: cur[1] });
        }
        break;
      case "delete":
        reply.ok = this.entries.delete(msg.key);
        break;
      case "list":
        reply.entries = [...this.entries.entries()]
          .filter(([k]) => k.startsWith(msg.prefix))
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, [v, ver]]) => [k, v, ver]);
        break;
    }
    return reply;
  }
}

export const ANY = Symbol("any");

export class FakeSim {
  transcript = [];
  store = new Store();
  nowMs = 0;
  #lastMsgId = 0;
  #buffer = "";
  #lines = [];
  #waiters = [];
  #eof = false;
  #stderr = "";
  #stdout = "";

  constructor(script, { env = {}, args = [] } = {}) {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RETRYLAB_")));
    this.proc = spawn(process.execPath, [script, ...args], {
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
      env: { ...clean, RETRYLAB_PROTOCOL: "1", RETRYLAB_FD_IN: "3", RETRYLAB_FD_OUT: "4", TZ: "UTC", ...env },
    });
    this.exited = new Promise((resolve) => this.proc.on("exit", (code, signal) => resolve(code ?? signal)));
    this.proc.stdout.on("data", (d) => (this.#stdout += d));
    this.proc.stderr.on("data", (d) => (this.#stderr += d));
    this.#out = this.proc.stdio[3];
    this.proc.stdio[4].setEncoding("utf8");
    this.proc.stdio[4].on("data", (d) => {
      this.#buffer += d;
      let at;
      while ((at = this.#buffer.indexOf("\n")) >= 0) {
        this.#lines.push(this.#buffer.slice(0, at));
        this.#buffer = this.#buffer.slice(at + 1);
      }
      this.#wake();
    });
    this.proc.stdio[4].on("end", () => {
      this.#eof = true;
      this.#wake();
    });
    this.#out.on("error", () => {});
  }
  #out;

  #wake() {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  stderr() {
    return this.#stderr;
  }
  stdout() {
    return this.#stdout;
  }

  fail(text) {
    assert.fail(`${text}\n--- executor stderr ---\n${this.#stderr}`);
  }

  send(msg, { checkClock = true } = {}) {
    if ("now_ms" in msg && msg.type !== "start" && checkClock) {
      assert.ok(msg.now_ms >= this.nowMs, "the fake sim's clock went backwards");
    }
    if ("now_ms" in msg) this.nowMs = msg.now_ms;
    this.transcript.push(["sim", msg]);
    this.#out.write(JSON.stringify(msg) + "\n");
  }

  sendRaw(text) {
    this.#out.write(text);
  }

  /** The executor's next message, validated; null at EOF. */
  async recv(timeoutMs = RECV_TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    while (this.#lines.length === 0) {
      if (this.#eof) return null;
      const left = deadline - Date.now();
      if (left <= 0) this.fail(`no message from the executor within ${timeoutMs} ms`);
      await new Promise((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    const line = this.#lines.shift();
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.fail(`the executor wrote a line that is not JSON: ${line}`);
    }
    try {
      this.#lastMsgId = checkMessage(msg, this.#lastMsgId);
    } catch (e) {
      this.fail(e.message);
    }
    this.transcript.push(["exec", msg]);
    return msg;
  }

  async expect(type, fields = {}) {
    const msg = await this.recv();
    if (msg === null) this.fail(`expected ${type}, got EOF (exit ${await this.exited})`);
    if (msg.type !== type) this.fail(`expected ${type}, got ${JSON.stringify(msg)}`);
    for (const [name, value] of Object.entries(fields)) {
      if (value === ANY) {
        if (!(name in msg)) this.fail(`${type} lacks ${name}: ${JSON.stringify(msg)}`);
      } else {
        try {
          assert.deepStrictEqual(msg[name], value);
        } catch {
          this.fail(`${type}.${name}: expected ${JSON.stringify(value)}, got ${JSON.stringify(msg[name])}: ${JSON.stringify(msg)}`);
        }
      }
    }
    return msg;
  }

  async expectEof() {
    const msg = await this.recv();
    if (msg !== null) this.fail(`expected the executor to exit, got ${JSON.stringify(msg)}`);
    return this.exited;
  }

  close() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill("SIGKILL");
  }

  closeChannel() {
    this.#out.end();
  }

  async handshake({ tools, config, params, provider } = {}) {
    const hello = await this.expect("hello", { protocol: 1, mode: "sync", client: "retrylab-node/0.1.0" });
    this.send({
      type: "init",
      protocol: 1,
      executor: "node-test",
      config: config ?? { attempts: 3, timeout_ms: 5000, backoff_ms: 100 },
      params: params ?? {},
      provider: provider ?? { base_url: "http://provider.sim", preset: "stripe_v1", key_header: "Idempotency-Key" },
      tools: tools ?? ["create", "compensate"],
    });
    await this.expect("init_ok");
    return hello;
  }

  async start({ seed = 1157098542, worker = 0, incarnation = 0, reset = false, nowMs = 0 } = {}) {
    if (reset) this.#lastMsgId = 0;
    this.send({ type: "start", worker, incarnation, seed, reset, now_ms: nowMs });
    await this.expect("ready");
  }

  invoke(call, tool, args, { issue = 1, nowMs, redelivery = false } = {}) {
    this.send({ type: "invoke", call, issue, tool, args, redelivery, now_ms: nowMs ?? this.nowMs });
  }

  async kvRound(fields = {}) {
    const msg = await this.expect("kv", fields);
    this.send(this.store.answer(msg, this.nowMs));
    return msg;
  }

  httpRespond(msg, status, body = "", { headers, afterMs = 0 } = {}) {
    this.send({
      type: "http_response",
      in_reply_to: msg.msg_id,
      status,
      headers: headers ?? { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
      now_ms: this.nowMs + afterMs,
    });
  }

  httpError(msg, error, { afterMs = 0 } = {}) {
    this.send({ type: "http_error", in_reply_to: msg.msg_id, error, now_ms: this.nowMs + afterMs });
  }

  wake(msg) {
    this.send({ type: "wake", in_reply_to: msg.msg_id, now_ms: this.nowMs + msg.ms });
  }

  async shutdown() {
    this.send({ type: "shutdown" });
    return this.expectEof();
  }

  executorMessages() {
    return this.transcript.filter(([who]) => who === "exec").map(([, m]) => m);
  }
}

/** A started executor (handshake and start done); closed after the test. */
export async function started(t, script, opts = {}) {
  const sim = new FakeSim(script, opts);
  t.after(() => sim.close());
  await sim.handshake(opts.handshake);
  await sim.start(opts.start);
  return sim;
}
