/** The sync-mode loop of protocol 1 and the handler registry. */

import * as fs from "node:fs";

import { Channel, simulatorFds } from "./channel.js";
import { checkKey, checkValue, checkVersion, Context, type Entry, type Kv, type OperationState, type Provider } from "./context.js";
import { callStorage } from "./current.js";
import { OutsideHandlerError, ProtocolError, RetrylabError, StrictModeError } from "./errors.js";
import { isUtf8, setExchange, type HttpErrorKind, type SimAnswer, type SimRequest } from "./fetch.js";
import { install, installed, onViolation, realSetImmediate, realSetTimeout } from "./install.js";
import { describeError, fromError, fromReturn, Result } from "./results.js";
import { ERROR_CODE_NAMES, PROTOCOL_VERSION } from "./protocol.js";
import { carries, toExecProblem } from "./validate.js";
import * as v from "./virtual.js";

export const PROTOCOL = PROTOCOL_VERSION;
export const CLIENT = "retrylab-node/0.1.0";

/** Exit status after the simulator's `error` message. */
export const EXIT_SIMULATOR_ERROR = 3;
/** Exit status after a strict-mode violation. */
export const EXIT_STRICT_VIOLATION = 4;

/** What a handler may return (see {@link fromReturn}). */
export type HandlerReturn = Result | Record<string, unknown> | string | null | undefined | void;
/** A tool handler: `async (args, ctx) => ...`. */
export type Handler = (args: Record<string, unknown>, ctx: Context) => HandlerReturn | Promise<HandlerReturn>;

const registry = new Map<string, Handler>();

/**
 * Register `handler` as the handler of tool `name` (`"create"`, `"compensate"`). Its return
 * value or exception is its claim (see the README's table).
 */
export function tool(name: string, handler: Handler): void {
  if (typeof name !== "string" || name === "") throw new TypeError("tool(name, handler) needs the tool's name");
  if (typeof handler !== "function") throw new TypeError(`the handler of ${JSON.stringify(name)} is not a function`);
  if (registry.has(name)) throw new RetrylabError(`tool ${JSON.stringify(name)} is registered twice`);
  registry.set(name, handler);
}

/** The registered tools' names, in registration order. */
export function registeredTools(): string[] {
  return [...registry.keys()];
}

/** The registered handler of `name` (production's `call()` uses it). */
export function handlerOf(name: string): Handler | undefined {
  return registry.get(name);
}

type Msg = Record<string, unknown> & { type: string };

function short(msg: unknown): string {
  const text = JSON.stringify(msg);
  return text.length > 300 ? text.slice(0, 300) + "..." : text;
}

function writeStderr(text: string): void {
  try {
    fs.writeSync(2, text.endsWith("\n") ? text : text + "\n");
  } catch {
    // stderr closed: the exit status still says it
  }
}

const ABANDONED = Symbol("abandoned");

export interface RunOptions {
  /** The contract assumptions the executor's guarantee rests on (`retrylab assumptions`). */
  assumptions?: string[];
  /** The properties it promises where they hold (with `assumptions`). */
  guarantee?: string[];
  /** Called on `start` with `reset: true`: clear your own caches there. */
  onReset?: () => void;
}

class Runtime {
  readonly channel: Channel;
  readonly handlers: Map<string, Handler>;
  readonly onReset: (() => void) | undefined;
  init: Msg | null = null;
  started: Msg | null = null;
  current: Context | null = null;
  nextMsgId = 1;
  cancels = new Set<string>();
  abandoned: Msg | null = null;
  violation: StrictModeError | null = null;
  handshakeDone = false;
  readonly kvStore: Kv;

  constructor(channel: Channel, handlers: Map<string, Handler>, onReset?: () => void) {
    this.channel = channel;
    this.handlers = handlers;
    this.onReset = onReset;
    this.kvStore = new SimKv(this);
  }

  // -- the channel --

  fatal(error: Error, status = 1): never {
    writeStderr(`retrylab: ${error.stack ?? describeError(error)}`);
    process.exit(status);
  }

  protocolError(text: string): never {
    this.fatal(new ProtocolError(text));
  }

  send(msg: Msg): void {
    if (this.violation !== null) this.abortStrict();
    this.channel.writeLine(JSON.stringify(msg));
  }

  recv(): Msg {
    const line = this.channel.readLine();
    if (line === null) process.exit(0);
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.protocolError(`the simulator sent a line that is not JSON: ${line.slice(0, 300)}`);
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) this.protocolError(`not a JSON object: ${short(msg)}`);
    const m = msg as Msg;
    const problem = toExecProblem(m, PROTOCOL);
    if (problem !== null) this.protocolError(`${problem}: ${short(m)}`);
    if (carries(m.type, "now_ms")) {
      const now = m.now_ms as number;
      if (m.type !== "start" && now < v.now()) {
        this.protocolError(`time went backwards: now_ms ${now} after ${v.now()}: ${short(m)}`);
      }
      if (m.type !== "start") v.setNow(now);
    }
    if (m.type === "error") {
      const code = m.code as number;
      writeStderr(`retrylab: the simulator refused a message (error code ${code}, ${ERROR_CODE_NAMES[code] ?? "unknown"}): ${String(m.text)}`);
      process.exit(EXIT_SIMULATOR_ERROR);
    }
    if (m.type === "fork") {
      this.protocolError(`\`fork\`, but this process did not declare "fork": true in its hello (the Node client does not fork): ${short(m)}`);
    }
    if (m.type === "shutdown") process.exit(0);
    return m;
  }

  /** Block until the answer to `msgId`; `cancel`s meanwhile are recorded. */
  awaitReply(msgId: number, kinds: string[], sent: string): Msg | typeof ABANDONED {
    for (;;) {
      const m = this.recv();
      if (m.type === "cancel") {
        this.noteCancel(m);
        continue;
      }
      if (kinds.includes(m.type) && m.in_reply_to === msgId) return m;
      if (m.type === "start" && m.reset === true && this.current !== null) {
        this.abandoned = m;
        return ABANDONED;
      }
      this.protocolError(`after \`${sent}\` msg_id ${msgId}, expected ${kinds.map((k) => `\`${k}\``).join(" or ")} in_reply_to ${msgId}, got: ${short(m)}`);
    }
  }

  noteCancel(m: Msg): void {
    const key = `${String(m.call)}\u0000${String(m.issue)}`;
    this.cancels.add(key);
    const ctx = this.current;
    if (ctx !== null && ctx.call === m.call && ctx.issue === m.issue) ctx.cancelled = true;
  }

  newMsgId(): number {
    return this.nextMsgId++;
  }

  requireHandler(what: string): Context {
    const ctx = this.current;
    if (ctx === null) {
      throw new OutsideHandlerError(
        `${what} while no tool handler is running: in sync mode, requests, sleeps, store operations and ` +
          "log lines belong to the turn of a tool call, so make them from a handler registered with tool() " +
          "(not at import time, nor in onReset)",
      );
    }
    return ctx;
  }

  // -- strict mode --

  recordViolation(e: StrictModeError): void {
    if (this.violation === null) this.violation = e;
  }

  abortStrict(): never {
    const e = this.violation!;
    if (this.handshakeDone) {
      try {
        this.channel.writeLine(JSON.stringify({ type: "log", text: `retrylab strict mode violation: ${e.message}` }));
      } catch {
        // the simulator may be gone; the exit status still says it
      }
    }
    writeStderr(
      `retrylab: strict mode violation; the executor exits with status ${EXIT_STRICT_VIOLATION} (a violation ` +
        `is fatal even when the handler catches the StrictModeError):\n${e.stack ?? e.message}`,
    );
    process.exit(EXIT_STRICT_VIOLATION);
  }

  // -- simulated operations --

  /** One `kv` exchange (inside the turn). */
  kv(op: string, fields: Record<string, unknown>, mayFail = false): Msg | typeof ABANDONED {
    this.requireHandler(`ctx.kv.${op}()`);
    if (this.abandoned !== null) return ABANDONED;
    const msgId = this.newMsgId();
    this.send({ type: "kv", msg_id: msgId, op, ...fields });
    const reply = this.awaitReply(msgId, ["kv_ok"], `kv ${op}`);
    if (reply === ABANDONED) return reply;
    if (reply.ok !== true && !mayFail) this.protocolError(`\`kv_ok\` with ok false for a ${op} (only a cas and a delete answer false): ${short(reply)}`);
    return reply;
  }

  /** An `http` message for the running handler's call, and its answer. */
  http(req: SimRequest): SimAnswer {
    const ctx = this.requireHandler(`a request (${req.method} ${req.url})`);
    if (this.abandoned !== null) return { kind: "abandoned" };
    const msgId = this.newMsgId();
    const msg: Msg = { type: "http", msg_id: msgId, call: ctx.call, method: req.method, url: req.url, headers: req.headers };
    if (isUtf8(req.body)) msg.body = Buffer.from(req.body).toString("utf8");
    else msg.body_b64 = Buffer.from(req.body).toString("base64");
    msg.timeout_ms = req.timeoutMs;
    this.send(msg);
    const reply = this.awaitReply(msgId, ["http_response", "http_error"], "http");
    if (reply === ABANDONED) return { kind: "abandoned" };
    if (reply.type === "http_error") {
      // One of HTTP_ERRORS, the headers' values strings, the body text: the tables checked them.
      return { kind: "error", error: reply.error as HttpErrorKind };
    }
    const headers = reply.headers as Record<string, string>;
    const body = new Uint8Array(Buffer.from(reply.body as string, "utf8"));
    const status = reply.status as number;
    if (status < 200 || status > 599) this.protocolError(`\`http_response\`.status ${status} is not a final status (200-599): ${short(reply)}`);
    if (status < 300) noteReceipt(ctx, body);
    return { kind: "response", status, headers, body };
  }

  /** A `sleep` message; blocks until `wake`. */
  sleep(ms: number): void {
    if (this.abandoned !== null) return;
    const msgId = this.newMsgId();
    this.send({ type: "sleep", msg_id: msgId, ms });
    this.awaitReply(msgId, ["wake"], "sleep");
  }

  log(text: string): void {
    this.requireHandler("ctx.log()");
    if (this.abandoned !== null) return;
    this.send({ type: "log", text });
  }

  state(call: string, name: OperationState, receipt: string | null): void {
    this.requireHandler("ctx.state()");
    if (this.abandoned !== null) return;
    const msg: Msg = { type: "state", call, state: name };
    if (receipt !== null) msg.receipt = receipt;
    this.send(msg);
  }

  // -- the loop --

  async serve(hello: Msg): Promise<never> {
    this.send(hello);
    const init = this.recv();
    if (init.type !== "init") this.protocolError(`after \`hello\`, expected \`init\`, got: ${short(init)}`);
    if (init.protocol !== PROTOCOL) this.protocolError(`\`init\`.protocol is ${String(init.protocol)}; this client speaks protocol ${PROTOCOL} only`);
    this.init = init;
    this.send({ type: "init_ok" });
    this.handshakeDone = true;
    for (;;) {
      const m = this.recv();
      if (m.type === "cancel") {
        this.noteCancel(m);
      } else if (m.type === "start") {
        this.start(m);
        this.send({ type: "ready" });
      } else if (m.type === "invoke") {
        await this.invoke(m);
      } else {
        this.protocolError(`between turns, expected \`start\`, \`invoke\`, \`cancel\` or \`shutdown\`, got: ${short(m)}`);
      }
    }
  }

  start(m: Msg): void {
    if (this.started !== null && m.reset !== true) {
      this.protocolError(
        `\`start\` with reset false, but this process already started (worker ${String(this.started.worker)}, incarnation ` +
          `${String(this.started.incarnation)}): a reused process must be told reset: true: ${short(m)}`,
      );
    }
    if (m.reset === true) {
      this.nextMsgId = 1;
      this.cancels.clear();
      this.current = null;
      this.abandoned = null;
      v.reset(m.now_ms as number);
      this.onReset?.();
    } else {
      v.setNow(m.now_ms as number);
    }
    v.seed(m.seed as number);
    this.started = m;
  }

  /** Let the real event loop run until no immediate is pending: every promise that can settle has. */
  async settle(): Promise<void> {
    for (let round = 0; round < 1000; round++) {
      await new Promise<void>((resolve) => realSetImmediate(resolve));
      if (!process.getActiveResourcesInfo().includes("Immediate")) return;
    }
  }

  async invoke(m: Msg): Promise<void> {
    const started = this.started;
    const init = this.init!;
    if (started === null) this.protocolError(`\`invoke\` before \`start\`: ${short(m)}`);
    const name = m.tool as string;
    const handler = this.handlers.get(name);
    if (handler === undefined) {
      this.protocolError(
        `\`invoke\` of tool ${JSON.stringify(name)}, which this process did not declare in \`hello\` (it handles ` +
          `${[...this.handlers.keys()].join(", ")}): ${short(m)}`,
      );
    }
    const call = m.call as string;
    const issue = m.issue as number;
    const ctx = new Context({
      call,
      issue,
      tool: name,
      args: m.args as Record<string, unknown>,
      worker: started.worker as number,
      incarnation: started.incarnation as number,
      redelivery: m.redelivery as boolean,
      cancelled: this.cancels.has(`${call}\u0000${issue}`),
      params: init.params as Record<string, unknown>,
      config: init.config as Record<string, unknown>,
      provider: init.provider as Provider,
      kv: this.kvStore,
      backend: {
        nowMs: () => v.now(),
        sleep: (ms) => virtualSleep(ms),
        log: (text) => this.log(text),
        state: (c, s, r) => this.state(c, s, r),
      },
    });
    this.current = ctx;
    let result: Result | null = null;
    Promise.resolve()
      .then(() => callStorage.run(ctx, () => handler(ctx.args, ctx))) // current() below the handler
      .then(
        (value) => {
          try {
            result = fromReturn(value, ctx.receipt, name);
          } catch (e) {
            result = new Result("unknown", { detail: describeError(e) });
          }
        },
        (e: unknown) => {
          result = fromError(e);
        },
      );
    for (;;) {
      await this.settle();
      if (this.abandoned !== null) {
        // The run was cut short while the handler waited: start the next one.
        const next = this.abandoned;
        this.current = null;
        this.start(next);
        this.send({ type: "ready" });
        return;
      }
      if (result !== null) break;
      const due = v.nextDue();
      if (due !== undefined) {
        try {
          due.fire();
        } catch (e) {
          this.fatal(new RetrylabError(`uncaught exception in a timer callback: ${describeError(e)}`, { cause: e }));
        }
        continue;
      }
      const wake = v.nextWake();
      if (wake !== undefined) {
        this.sleep(wake.due - v.now());
        continue;
      }
      await this.waitReal(() => result !== null, name);
    }
    this.current = null;
    const r: Result = result;
    const reply: Msg = { type: "result", call, issue, outcome: r.outcome };
    if (r.receipt !== null) reply.receipt = r.receipt;
    if (r.detail !== null) reply.detail = r.detail;
    else if (r.outcome !== "ok") reply.detail = r.outcome;
    this.send(reply);
  }

  /**
   * The handler waits for neither a request, a timer nor the store: real I/O (a file read) or
   * a promise that never settles. Give real I/O a few seconds of the real event loop.
   */
  async waitReal(done: () => boolean, name: string): Promise<void> {
    for (let i = 0; i < 5000; i++) {
      await new Promise<void>((resolve) => realSetTimeout(resolve, 1));
      if (done() || v.nextWake() !== undefined || this.abandoned !== null) return;
    }
    this.fatal(
      new RetrylabError(
        `the handler of ${JSON.stringify(name)} waits for something that is neither a request (fetch), a timer ` +
          "nor the store: a promise that never settles, or real I/O that did not finish within 5 s",
      ),
    );
  }
}

function virtualSleep(ms: number): Promise<void> {
  const n = Math.ceil(Number(ms));
  if (!(n > 0)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    new v.VirtualTimeout(resolve as () => void, n, [], false);
  });
}

function noteReceipt(ctx: Context, body: Uint8Array): void {
  const text = Buffer.from(body).toString("utf8").trimStart();
  if (!text.startsWith("{")) return;
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === "object" && typeof (value as { id?: unknown }).id === "string") {
      ctx.receipt = (value as { id: string }).id;
    }
  } catch {
    // not JSON: no receipt
  }
}

const never = <T>(): Promise<T> => new Promise<T>(() => {});

/** The simulator's store, through `kv` messages. */
class SimKv implements Kv {
  readonly #rt: Runtime;
  constructor(rt: Runtime) {
    this.#rt = rt;
  }
  async get(key: string): Promise<string | null> {
    return (await this.getVersioned(key)).value;
  }
  getVersioned(key: string): Promise<{ value: string | null; version: number }> {
    const r = this.#rt.kv("get", { key: checkKey(key) });
    if (r === ABANDONED) return never();
    return Promise.resolve({ value: (r.value as string | null | undefined) ?? null, version: (r.version as number | undefined) ?? 0 });
  }
  put(key: string, value: string): Promise<number> {
    const r = this.#rt.kv("put", { key: checkKey(key), value: checkValue(value) });
    if (r === ABANDONED) return never();
    return Promise.resolve(r.version as number);
  }
  cas(key: string, expectVersion: number, value: string): Promise<{ ok: boolean; value: string | null; version: number }> {
    const r = this.#rt.kv("cas", { key: checkKey(key), expect_version: checkVersion(expectVersion), value: checkValue(value) }, true);
    if (r === ABANDONED) return never();
    return Promise.resolve({ ok: r.ok as boolean, value: (r.value as string | null | undefined) ?? null, version: (r.version as number | undefined) ?? 0 });
  }
  delete(key: string): Promise<boolean> {
    const r = this.#rt.kv("delete", { key: checkKey(key) }, true);
    if (r === ABANDONED) return never();
    return Promise.resolve(r.ok as boolean);
  }
  list(prefix: string): Promise<Entry[]> {
    const r = this.#rt.kv("list", { prefix: checkKey(prefix) });
    if (r === ABANDONED) return never();
    return Promise.resolve(((r.entries as Entry[] | undefined) ?? []).map((e) => [e[0], e[1], e[2]] as Entry));
  }
}

let active: Runtime | null = null;

/** Whether this process runs under retrylab (`run()` serves, or `RETRYLAB_FD_IN` is set). */
export function underSimulator(): boolean {
  return active !== null || process.env.RETRYLAB_FD_IN !== undefined;
}

function names(values: unknown, what: string): string[] {
  if (!Array.isArray(values) || !values.every((x) => typeof x === "string")) {
    throw new TypeError(`${what} is a list of names (strings)`);
  }
  return [...values];
}

/**
 * Serve the registered tools to the simulator (sync mode); never returns.
 *
 * Sends `hello` (protocol 1, mode `"sync"`, the registered tools, and the assumptions and
 * guarantee when given), answers `init`, then each `start` (`ready`; on `reset: true` the
 * client forgets its clock, timers, random state, message ids and pending cancels, and calls
 * `onReset`) and each `invoke` (the handler's `result`). Exits with status 0 on `shutdown`
 * or EOF, 3 after the simulator's `error` message, 4 after a strict-mode violation, 1 on a
 * protocol error. Installs the virtual clock, timers, seeded randomness, the simulated fetch
 * and strict mode ({@link install}) unless already installed.
 */
export async function run(options: RunOptions = {}): Promise<never> {
  if (active !== null) throw new RetrylabError("retrylab's run() is already serving in this process");
  const [fdIn, fdOut] = simulatorFds();
  const tools = registeredTools();
  if (tools.length === 0) {
    throw new RetrylabError('no tool is registered: register the handlers with tool("create", async (args, ctx) => ...) before run()');
  }
  const hello: Msg = { type: "hello", protocol: PROTOCOL, mode: "sync", client: CLIENT, tools };
  if (options.assumptions !== undefined) hello.assumptions = names(options.assumptions, "assumptions");
  if (options.guarantee !== undefined) {
    if (options.assumptions === undefined) {
      throw new TypeError("a guarantee holds under assumptions: pass assumptions with guarantee (protocol 1: `guarantee` is optional, with `assumptions`)");
    }
    hello.guarantee = names(options.guarantee, "guarantee");
  }
  if (!installed()) install({ strict: true });
  const rt = new Runtime(new Channel(fdIn, fdOut), new Map(registry), options.onReset);
  active = rt;
  onViolation((e) => rt.recordViolation(e));
  setExchange((req) => rt.http(req));
  try {
    return await rt.serve(hello);
  } catch (e) {
    return rt.fatal(e instanceof Error ? e : new RetrylabError(describeError(e)));
  }
}
