// A fake retrylab simulator for the client's tests: it spawns an executor script with the
// protocol's channel on two extra descriptors (named by RETRYLAB_FD_IN/RETRYLAB_FD_OUT),
// speaks protocol 1 from the simulator's side, and checks every message the executor sends
// as strictly as retrylab does, against the protocol's schema (api/protocol.schema.json, read
// at run time: known types, required fields and their types, no unknown field), and the
// clients' conventions beyond it (increasing msg_id...); every message it sends is checked
// against the same schema. Wall-clock timeouts only guard against a hung executor.

import { spawn } from "node:child_process";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const RECV_TIMEOUT_MS = 20_000;

/** The protocol's one source, read at run time: the schema the Rust types generate. */
export const SCHEMA_PATH = fileURLToPath(new URL("../../../api/protocol.schema.json", import.meta.url));

/** The integer ranges of schemars' `format` values (Rust's integer types); u64 as far as a number holds. */
const FORMAT_RANGES = {
  uint8: [0, 2 ** 8 - 1],
  uint16: [0, 2 ** 16 - 1],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, Number.MAX_SAFE_INTEGER],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

function jsonType(v) {
  if (v === null) return "null";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number") return Number.isSafeInteger(v) ? "integer" : "number";
  if (typeof v === "string") return "string";
  if (Array.isArray(v)) return "array";
  return "object";
}

const show = (v) => String(JSON.stringify(v)).slice(0, 80);

/**
 * `api/protocol.schema.json`, checked as strictly as the simulator reads: the subset of JSON
 * Schema 2020-12 that schemars writes, and an object's unknown field is an error even where
 * the schema leaves `additionalProperties` open (the simulator stays strict; only the clients
 * ignore unknown fields).
 */
export class ProtocolSchema {
  constructor(path = SCHEMA_PATH) {
    this.schema = JSON.parse(readFileSync(path, "utf8"));
    this.defs = this.schema.$defs;
    this.version = this.schema["x-protocol-version"];
    this.variants = { ToExec: this.#variants("ToExec"), FromExec: this.#variants("FromExec") };
  }

  #variants(direction) {
    const out = new Map();
    for (const variant of this.defs[direction].oneOf) {
      const v = this.#resolve(variant);
      out.set(v.properties.type.const, v);
    }
    return out;
  }

  #resolve(node) {
    while (node && typeof node === "object" && "$ref" in node) node = this.defs[node.$ref.replace("#/$defs/", "")];
    return node;
  }

  /** What is wrong with `msg` as a message of `direction` ("ToExec": the simulator sends it), or null. */
  problem(direction, msg) {
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return "not a JSON object";
    const variant = this.variants[direction].get(msg.type);
    if (variant === undefined) {
      return `unknown message type ${JSON.stringify(msg.type)} (protocol ${this.version} has ${[...this.variants[direction].keys()].join(", ")})`;
    }
    return this.#problem(variant, msg, msg.type);
  }

  #problem(node, v, at) {
    if (node === true) return null;
    if (node === false) return `${at} is not allowed`;
    if ("$ref" in node) {
      const found = this.#problem(this.#resolve(node), v, at);
      if (found) return found;
    }
    for (const key of ["anyOf", "oneOf"]) {
      if (key in node) {
        const matched = node[key].filter((b) => this.#problem(b, v, at) === null).length;
        if (matched === 0 || (key === "oneOf" && matched > 1)) return `${at} matches ${matched} of the ${key} alternatives: ${show(v)}`;
      }
    }
    const kind = jsonType(v);
    if (node.type !== undefined) {
      const types = typeof node.type === "string" ? [node.type] : node.type;
      if (!types.includes(kind) && !(kind === "integer" && types.includes("number"))) return `${at} must be ${types.join(" or ")}, not ${show(v)}`;
    }
    if ("const" in node && v !== node.const) return `${at} must be ${JSON.stringify(node.const)}, not ${show(v)}`;
    if ("enum" in node && !node.enum.includes(v)) return `${at} must be one of ${node.enum.join(", ")}, not ${show(v)}`;
    if (kind === "integer" || kind === "number") {
      const [low, high] = FORMAT_RANGES[node.format] ?? [undefined, undefined];
      const min = node.minimum ?? low;
      const max = Math.min(node.maximum ?? high ?? Infinity, Number.MAX_SAFE_INTEGER);
      if ((min !== undefined && v < min) || v > max) return `${at} must be in [${min}, ${max}], not ${v}`;
    }
    if (kind === "array") {
      const prefix = node.prefixItems ?? [];
      for (const [i, item] of v.entries()) {
        const found = this.#problem(i < prefix.length ? prefix[i] : (node.items ?? true), item, `${at}[${i}]`);
        if (found) return found;
      }
      if (v.length < (node.minItems ?? 0) || v.length > (node.maxItems ?? v.length)) return `${at} has ${v.length} items`;
    }
    if (kind === "object") {
      const props = node.properties ?? {};
      for (const name of node.required ?? []) if (!Object.hasOwn(v, name)) return `${at} lacks ${JSON.stringify(name)}`;
      const extra = node.additionalProperties ?? !("properties" in node);
      for (const [name, item] of Object.entries(v)) {
        const sub = Object.hasOwn(props, name) ? props[name] : extra;
        if (sub === false) return `unknown field ${JSON.stringify(name)} in ${at}`;
        const found = this.#problem(sub, item, `${at}.${name}`);
        if (found) return found;
      }
    }
    return null;
  }
}

export const PROTOCOL_SCHEMA = new ProtocolSchema();

// What the schema cannot say: conventions of the clients this fake simulator also holds them to.
const KV_FIELDS = { get: ["key"], put: ["key", "value"], cas: ["key", "expect_version", "value"], delete: ["key"], list: ["prefix"] };

/** Validate one executor message as retrylab reads it (the schema's `FromExec`, strictly), and the clients' conventions beyond it. */
export function checkMessage(msg, lastMsgId) {
  const fail = (text) => assert.fail(`${text}: ${JSON.stringify(msg)}`);
  const problem = PROTOCOL_SCHEMA.problem("FromExec", msg);
  if (problem !== null) fail(problem);
  if (msg.type === "hello" && !("client" in msg)) fail("hello names its client");
  if (msg.type === "hello" && "fork" in msg) fail("the Node client does not fork");
  if (msg.type === "http") {
    if (("body" in msg) === ("body_b64" in msg)) fail("http carries exactly one of body, body_b64");
    if (!("headers" in msg) || !("timeout_ms" in msg)) fail("the clients send headers and timeout_ms");
    if (!Object.keys(msg.headers).every((k) => k === k.toLowerCase())) fail("header names are lowercase");
  }
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

  /** Send `msg`, checked against the schema's ToExec (`checkSchema: false`: a test sends what the protocol does not allow). */
  send(msg, { checkClock = true, checkSchema = true } = {}) {
    if (checkSchema) {
      const problem = PROTOCOL_SCHEMA.problem("ToExec", msg);
      assert.equal(problem, null, `the fake sim would send what the protocol does not allow: ${JSON.stringify(msg)}`);
    }
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
      protocol: PROTOCOL_SCHEMA.version,
      executor: "node-test",
      config: config ?? { attempts: 3, timeout_ms: 5000, backoff_ms: 100 },
      params: params ?? {},
      provider: provider ?? { base_url: "http://provider.sim", key_header: "Idempotency-Key", http: {} },
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
