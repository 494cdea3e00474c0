/**
 * The production path: the same handlers, outside the simulator. Nothing is patched: `fetch`
 * is Node's, the clock is real, `ctx.sleep` is a real timer, and the store is yours.
 *
 * ```ts
 * import { call, FileStore } from "retrylab/production";
 * import "./executor.js"; // registers the handlers with tool(...)
 * const result = await call("create", { ref: "r1", tenant: "t0" }, {
 *   store: new FileStore("/var/lib/executor/journal.json"),
 *   provider: { base_url: "https://api.example.com" },
 * });
 * result.outcome; result.receipt; result.detail; result.value; result.error;
 * ```
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { setTimeout as realSleep } from "node:timers/promises";

import { checkKey, checkValue, checkVersion, Context, type Entry, type Kv, type OperationState, type Provider } from "./context.js";
import { callStorage } from "./current.js";
import { RetrylabError } from "./errors.js";
import { describeError, fromError, fromReturn, Result } from "./results.js";
import { handlerOf, registeredTools } from "./runtime.js";

export { Result } from "./results.js";

interface Stored {
  last: number;
  entries: Record<string, [string, number]>;
}

/** The store's semantics over a snapshot (shared by the two stores). */
class Entries {
  constructor(readonly data: Stored) {}
  getVersioned(key: string): { value: string | null; version: number } {
    const e = this.data.entries[checkKey(key)];
    return e ? { value: e[0], version: e[1] } : { value: null, version: 0 };
  }
  put(key: string, value: string): number {
    this.data.last += 1;
    this.data.entries[checkKey(key)] = [checkValue(value), this.data.last];
    return this.data.last;
  }
  cas(key: string, expectVersion: number, value: string): { ok: boolean; value: string | null; version: number } {
    checkVersion(expectVersion);
    checkValue(value);
    const current = this.getVersioned(key);
    if (current.version !== expectVersion) return { ok: false, ...current };
    return { ok: true, value, version: this.put(key, value) };
  }
  delete(key: string): boolean {
    const had = Object.prototype.hasOwnProperty.call(this.data.entries, checkKey(key));
    delete this.data.entries[key];
    return had;
  }
  list(prefix: string): Entry[] {
    checkKey(prefix);
    return Object.keys(this.data.entries)
      .filter((k) => k.startsWith(prefix))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((k) => [k, this.data.entries[k]![0], this.data.entries[k]![1]]);
  }
}

/** An in-memory store with the simulator's semantics (one process; lost at exit). */
export class MemoryStore implements Kv {
  readonly #e = new Entries({ last: 0, entries: Object.create(null) as Record<string, [string, number]> });
  async get(key: string) {
    return this.#e.getVersioned(key).value;
  }
  async getVersioned(key: string) {
    return this.#e.getVersioned(key);
  }
  async put(key: string, value: string) {
    return this.#e.put(key, value);
  }
  async cas(key: string, expectVersion: number, value: string) {
    return this.#e.cas(key, expectVersion, value);
  }
  async delete(key: string) {
    return this.#e.delete(key);
  }
  async list(prefix: string) {
    return this.#e.list(prefix);
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A JSON file store with the simulator's semantics. Each operation holds an exclusive lock
 * file (`PATH.lock`, created with O_EXCL) while it reads the file and writes it back through
 * a rename, so `cas` is atomic between processes on one machine and a crash leaves the old or
 * the new file, never half of one. Fit for a journal of modest size (it rewrites the file).
 */
export class FileStore implements Kv {
  readonly path: string;
  /** A lock older than this is taken to be left by a crashed process and broken. */
  readonly staleLockMs: number;

  constructor(file: string, options: { staleLockMs?: number } = {}) {
    this.path = path.resolve(file);
    this.staleLockMs = options.staleLockMs ?? 30_000;
    fs.mkdirSync(path.dirname(this.path), { recursive: true });
  }

  #locked<T>(write: boolean, fn: (e: Entries) => T): T {
    const lock = `${this.path}.lock`;
    for (;;) {
      try {
        fs.closeSync(fs.openSync(lock, "wx"));
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== "EEXIST") throw e;
        try {
          if (Date.now() - fs.statSync(lock).mtimeMs > this.staleLockMs) fs.rmSync(lock, { force: true });
        } catch {
          // the holder just released it
        }
        Atomics.wait(pause, 0, 0, 2);
      }
    }
    try {
      let data: Stored = { last: 0, entries: Object.create(null) as Record<string, [string, number]> };
      try {
        data = JSON.parse(fs.readFileSync(this.path, "utf8")) as Stored;
      } catch (e) {
        if ((e as { code?: string }).code !== "ENOENT") throw e;
      }
      const entries = new Entries(data);
      const out = fn(entries);
      if (write) {
        const tmp = `${this.path}.tmp`;
        fs.writeFileSync(tmp, JSON.stringify(data));
        const fd = fs.openSync(tmp, "r+");
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        fs.renameSync(tmp, this.path);
      }
      return out;
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }

  async get(key: string) {
    return this.#locked(false, (e) => e.getVersioned(key).value);
  }
  async getVersioned(key: string) {
    return this.#locked(false, (e) => e.getVersioned(key));
  }
  async put(key: string, value: string) {
    return this.#locked(true, (e) => e.put(key, value));
  }
  async cas(key: string, expectVersion: number, value: string) {
    return this.#locked(true, (e) => e.cas(key, expectVersion, value));
  }
  async delete(key: string) {
    return this.#locked(true, (e) => e.delete(key));
  }
  async list(prefix: string) {
    return this.#locked(false, (e) => e.list(prefix));
  }
}

export interface CallOptions {
  /** The store `ctx.kv` is (default: a new {@link MemoryStore}). */
  store?: Kv;
  /** `ctx.provider` (default: `{ base_url: "" }`). */
  provider?: Provider;
  params?: Record<string, unknown>;
  config?: Record<string, unknown>;
  /** The call's id (default: a counter, `p1`, `p2`...). */
  callId?: string;
  issue?: number;
  /** Where `ctx.log` and `ctx.state` go (default: `console.error`). */
  log?: (line: string) => void;
}

let calls = 0;

/**
 * Run the handler of `tool` once, in production, and return its claim as a {@link Result}
 * (with `value`, what it returned, and `error`, what it threw). Never throws for the
 * handler's own errors; throws for a tool no handler was registered for.
 */
export async function call(tool: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<Result> {
  const handler = handlerOf(tool);
  if (handler === undefined) {
    throw new RetrylabError(`no handler for tool ${JSON.stringify(tool)} (registered: ${registeredTools().join(", ") || "none"})`);
  }
  const log = options.log ?? ((line: string) => console.error(line));
  const callId = options.callId ?? `p${++calls}`;
  const ctx = new Context({
    call: callId,
    issue: options.issue ?? 1,
    tool,
    args,
    worker: 0,
    incarnation: 0,
    redelivery: false,
    cancelled: false,
    params: options.params ?? {},
    config: options.config ?? {},
    provider: options.provider ?? { base_url: "" },
    kv: options.store ?? new MemoryStore(),
    backend: {
      nowMs: () => Date.now(),
      sleep: (ms) => realSleep(Math.max(0, ms)).then(() => undefined),
      log: (text) => log(`retrylab ${callId}: ${text}`),
      state: (c, name: OperationState, receipt) => log(`retrylab ${c}: state ${name}${receipt ? ` ${receipt}` : ""}`),
    },
  });
  try {
    const value = await callStorage.run(ctx, () => handler(args, ctx)); // current() below the handler
    try {
      return fromReturn(value, ctx.receipt, tool);
    } catch (e) {
      return new Result("unknown", { detail: describeError(e), error: e });
    }
  } catch (e) {
    return fromError(e);
  }
}
