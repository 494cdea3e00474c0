/**
 * install()/uninstall(): the virtual clock, virtual timers, seeded randomness, the simulated
 * `fetch` and strict mode, patched into Node's globals and built-in modules.
 */

import { createRequire, syncBuiltinESMExports } from "node:module";

import { addressAdvice, connectAddress } from "./culprits.js";
import { StrictModeError } from "./errors.js";
import { simFetch } from "./fetch.js";
import * as v from "./virtual.js";

const require = createRequire(import.meta.url);
const timersModule = require("node:timers") as Record<string, unknown>;
const timersPromises = require("node:timers/promises") as Record<string, unknown> & { scheduler?: Record<string, unknown> };
const cryptoModule = require("node:crypto") as Record<string, unknown>;
const netModule = require("node:net") as { Socket: { prototype: Record<string, unknown> } } & Record<string, unknown>;
const dnsModule = require("node:dns") as Record<string, unknown> & { promises: Record<string, unknown> };
const workerModule = require("node:worker_threads") as Record<string, unknown>;

/** The real `setImmediate`: the runtime's way to let the event loop run a round. */
export const realSetImmediate: typeof setImmediate = globalThis.setImmediate;
/** The real `setTimeout`, for the runtime's wall-clock guards (never for virtual time). */
export const realSetTimeout: typeof setTimeout = globalThis.setTimeout;

type Restore = () => void;
let restores: Restore[] | null = null;
let strictMode = false;
let violationHook: ((e: StrictModeError) => void) | null = null;

/** Whether {@link install} is in effect. */
export function installed(): boolean {
  return restores !== null;
}

/** Whether strict mode is on. */
export function strict(): boolean {
  return strictMode;
}

/** The runtime learns of strict-mode violations here (even those a handler catches). */
export function onViolation(hook: ((e: StrictModeError) => void) | null): void {
  violationHook = hook;
}

function patch(target: object, name: string, value: unknown, out: Restore[]): void {
  const had = Object.prototype.hasOwnProperty.call(target, name);
  const old = Object.getOwnPropertyDescriptor(target, name);
  Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: old?.enumerable ?? true });
  out.push(() => {
    if (had && old) Object.defineProperty(target, name, old);
    else delete (target as Record<string, unknown>)[name];
  });
}

function violation(text: string): never {
  const e = new StrictModeError(text);
  violationHook?.(e);
  throw e;
}

function virtualDate(): DateConstructor {
  const RealDate = Date;
  const wall = () => v.EPOCH_MS + v.now();
  return new Proxy(RealDate, {
    construct(target, args, newTarget) {
      return Reflect.construct(target, args.length === 0 ? [wall()] : args, newTarget);
    },
    apply() {
      return new RealDate(wall()).toString();
    },
    get(target, prop, receiver) {
      if (prop === "now") return wall;
      return Reflect.get(target, prop, receiver);
    },
  });
}

function setTimeoutV(callback: (...a: unknown[]) => void, delay?: unknown, ...args: unknown[]): v.VirtualTimeout {
  return new v.VirtualTimeout(callback, delay, args, false);
}
function setIntervalV(callback: (...a: unknown[]) => void, delay?: unknown, ...args: unknown[]): v.VirtualTimeout {
  return new v.VirtualTimeout(callback, delay, args, true);
}

/** `timers/promises.setTimeout(delay, value, {signal, ref})` on the virtual clock. */
function promiseTimeout<T>(delay?: number, value?: T, options: { signal?: AbortSignal; ref?: boolean } = {}): Promise<T> {
  const signal = options.signal;
  if (signal?.aborted) {
    return Promise.reject(Object.assign(new DOMException("The operation was aborted", "AbortError"), { cause: signal.reason }));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      timer.close();
      reject(Object.assign(new DOMException("The operation was aborted", "AbortError"), { cause: signal?.reason }));
    };
    const timer = new v.VirtualTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(value as T);
      },
      delay,
      [],
      false,
    );
    if (options.ref === false) timer.unref();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function signalTimeout(ms: number): AbortSignal {
  const controller = new AbortController();
  const timer = new v.VirtualTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
    [],
    false,
  );
  timer.weak = true;
  v.signalDeadlines.set(controller.signal, timer.due);
  return controller.signal;
}

function fillRandom<T extends ArrayBufferView | null>(view: T): T {
  if (view === null || !ArrayBuffer.isView(view)) {
    throw new TypeError("The data argument must be an integer-type TypedArray");
  }
  v.entropy.fill(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  return view;
}

/**
 * Patch the globals (see the README's table). `run()` calls it with `strict: true` unless
 * already installed; call it yourself first for `strict: false`.
 */
export function install(options: { strict?: boolean } = {}): void {
  if (restores !== null) return;
  const out: Restore[] = [];
  const g = globalThis as unknown as Record<string, unknown>;
  const RealAbortSignal = AbortSignal as unknown as Record<string, unknown>;
  const realAny = RealAbortSignal.any as ((signals: AbortSignal[]) => AbortSignal) | undefined;

  // The clock.
  patch(g, "Date", virtualDate(), out);
  patch(performance, "now", () => v.now(), out);
  const hrtime = (prev?: [number, number]): [number, number] => {
    const ns = BigInt(v.now()) * 1_000_000n;
    let sec = Number(ns / 1_000_000_000n);
    let nsec = Number(ns % 1_000_000_000n);
    if (prev) {
      sec -= prev[0];
      nsec -= prev[1];
      if (nsec < 0) {
        sec -= 1;
        nsec += 1e9;
      }
    }
    return [sec, nsec];
  };
  hrtime.bigint = () => BigInt(v.now()) * 1_000_000n;
  patch(process, "hrtime", hrtime, out);

  // Timers.
  for (const target of [g, timersModule]) {
    patch(target, "setTimeout", setTimeoutV, out);
    patch(target, "setInterval", setIntervalV, out);
    patch(target, "clearTimeout", v.clearTimer, out);
    patch(target, "clearInterval", v.clearTimer, out);
  }
  patch(timersPromises, "setTimeout", promiseTimeout, out);
  if (timersPromises.scheduler) {
    patch(timersPromises.scheduler, "wait", (delay: number, options?: { signal?: AbortSignal }) => promiseTimeout(delay, undefined, options), out);
  }
  patch(AbortSignal, "timeout", signalTimeout, out);
  if (realAny) {
    patch(
      AbortSignal,
      "any",
      (signals: AbortSignal[]) => {
        const combined = realAny.call(AbortSignal, signals);
        let deadline: number | undefined;
        for (const s of signals) {
          const d = v.signalDeadlines.get(s);
          if (d !== undefined && (deadline === undefined || d < deadline)) deadline = d;
        }
        if (deadline !== undefined) v.signalDeadlines.set(combined, deadline);
        return combined;
      },
      out,
    );
  }

  // Randomness.
  patch(Math, "random", () => v.random.nextFloat(), out);
  const uuid = () => v.entropy.uuid4();
  const webcrypto = globalThis.crypto as unknown as object;
  patch(webcrypto, "randomUUID", uuid, out);
  patch(webcrypto, "getRandomValues", fillRandom, out);
  patch(cryptoModule, "randomUUID", uuid, out);
  patch(
    cryptoModule,
    "randomBytes",
    (size: number, callback?: (err: Error | null, buf: Buffer) => void) => {
      const buf = Buffer.alloc(size);
      fillRandom(buf);
      if (callback) {
        queueMicrotask(() => callback(null, buf));
        return undefined;
      }
      return buf;
    },
    out,
  );
  patch(
    cryptoModule,
    "randomFillSync",
    (buf: ArrayBufferView, offset = 0, size?: number) => {
      const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      v.entropy.fill(bytes.subarray(offset, size === undefined ? undefined : offset + size));
      return buf;
    },
    out,
  );
  patch(
    cryptoModule,
    "randomInt",
    (a: number, b?: number | ((e: Error | null, n: number) => void), c?: (e: Error | null, n: number) => void) => {
      const [min, max, cb] = typeof b === "number" ? [a, b, c] : [0, a, b];
      const n = min + Math.floor(v.entropy.nextFloat() * (max - min));
      if (cb) {
        queueMicrotask(() => cb(null, n));
        return undefined;
      }
      return n;
    },
    out,
  );

  // The network.
  patch(g, "fetch", simFetch, out);

  // Strict mode: real sockets, DNS and threads would make a run depend on the real world.
  strictMode = options.strict ?? true;
  // Read by retrylab's shim: in strict mode a write outside the run's storage, or before the
  // first `start`, is refused (docs/executor-protocol.md, section 9).
  process.env.RETRYLAB_STRICT = strictMode ? "1" : "0";
  if (strictMode) {
    patch(
      netModule.Socket.prototype,
      "connect",
      function (this: unknown, ...args: unknown[]) {
        const [host, port] = connectAddress(args);
        violation(`real socket: net.Socket.connect(${describeArgs(args)}) - use fetch (simulated under retrylab)${addressAdvice(host, port)}`);
      },
      out,
    );
    const lookup = (host: unknown) =>
      violation(`real DNS lookup: dns.lookup(${JSON.stringify(host)}) - use fetch (simulated under retrylab)${addressAdvice(host, undefined)}`);
    patch(dnsModule, "lookup", lookup, out);
    patch(dnsModule.promises, "lookup", lookup, out);
    patch(
      workerModule,
      "Worker",
      function Worker(filename: unknown) {
        // Named by its script, so that the library that starts it can be found.
        violation(`worker_threads.Worker(${JSON.stringify(String(filename))}) - an executor runs single-threaded in sync mode`);
      },
      out,
    );
  }
  syncBuiltinESMExports();
  restores = out;
}

function describeArgs(args: unknown[]): string {
  const first = args[0];
  // net.connect() hands Socket.connect its arguments normalized: [options, callback].
  if (Array.isArray(first)) return describeArgs(first as unknown[]);
  if (first !== null && typeof first === "object") {
    const o = first as { host?: unknown; port?: unknown; path?: unknown };
    return JSON.stringify({ host: o.host, port: o.port, path: o.path });
  }
  return args
    .filter((a) => typeof a !== "function")
    .map((a) => JSON.stringify(a))
    .join(", ");
}

/** Undo {@link install}. */
export function uninstall(): void {
  if (restores === null) return;
  for (const restore of restores.reverse()) restore();
  restores = null;
  strictMode = false;
  syncBuiltinESMExports();
}
