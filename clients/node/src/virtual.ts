/**
 * The virtual world the patched globals read: the clock, the timer queue and the seeded
 * random streams. Nothing here touches the real clock or real entropy.
 */

import { AsyncResource } from "node:async_hooks";

import { Prng } from "./random.js";

/** The wall clock at `now_ms` 0: 2026-01-01T00:00:00Z, as the protocol says. */
export const EPOCH_MS = Date.UTC(2026, 0, 1);

/** Node's largest timer delay; longer (and shorter than 1 ms) delays become 1 ms, as in Node. */
const TIMEOUT_MAX = 2 ** 31 - 1;

let nowMs = 0;
let nextId = 1;
let nextSeq = 1;
const timers = new Map<number, VirtualTimeout>();

/** `Math.random`'s stream. */
export const random = new Prng(0);
/** The stream of `crypto.randomUUID`, `getRandomValues`, `randomBytes`... */
export const entropy = new Prng(1);

/** Virtual ms since the run began. */
export function now(): number {
  return nowMs;
}

/** Set by the runtime from every simulator message's `now_ms`. */
export function setNow(ms: number): void {
  nowMs = ms;
}

/** Seed both streams from `start.seed`. */
export function seed(value: number): void {
  random.seed(value);
  // A second stream, so that Math.random calls do not shift the keys a handler mints.
  entropy.seed(value + 0x6a09e667);
}

/** Forget every timer and the clock: a new run (`start`, or `start` with `reset: true`). */
export function reset(startMs: number): void {
  timers.clear();
  nowMs = startMs;
  nextId = 1;
  nextSeq = 1;
}

/** A virtual timer; shaped as Node's `Timeout` (ref/unref/hasRef/refresh, a number when coerced). */
export class VirtualTimeout {
  readonly id: number;
  due: number;
  seq: number;
  readonly #delay: number;
  readonly #callback: (...args: unknown[]) => void;
  readonly #args: unknown[];
  readonly #repeat: boolean;
  #ref = true;
  /** A timer no code awaits by itself (an `AbortSignal.timeout`): the runtime never sleeps for it alone while others are due later. */
  weak = false;

  constructor(callback: (...args: unknown[]) => void, delay: unknown, args: unknown[], repeat: boolean) {
    if (typeof callback !== "function") {
      const err = new TypeError(`The "callback" argument must be of type function. Received ${typeof callback}`);
      (err as { code?: string }).code = "ERR_INVALID_ARG_TYPE";
      throw err;
    }
    let d = Number(delay);
    if (!(d >= 1 && d <= TIMEOUT_MAX)) d = 1;
    this.#delay = Math.trunc(d);
    // As Node's own timers do, the callback runs in the async context that set the timer, so
    // that an AsyncLocalStorage (retrylab's current(), a tracer's) sees there what it saw here.
    this.#callback = AsyncResource.bind(callback);
    this.#args = args;
    this.#repeat = repeat;
    this.id = nextId++;
    this.due = nowMs + this.#delay;
    this.seq = nextSeq++;
    timers.set(this.id, this);
  }

  /** Run the callback (the timer is due); an interval is scheduled again. */
  fire(): void {
    if (this.#repeat) {
      this.due = nowMs + this.#delay;
      this.seq = nextSeq++;
    } else {
      timers.delete(this.id);
    }
    this.#callback(...this.#args);
  }

  ref(): this {
    this.#ref = true;
    return this;
  }
  unref(): this {
    this.#ref = false;
    return this;
  }
  hasRef(): boolean {
    return this.#ref;
  }
  refresh(): this {
    if (timers.has(this.id)) {
      this.due = nowMs + this.#delay;
      this.seq = nextSeq++;
    }
    return this;
  }
  close(): this {
    timers.delete(this.id);
    return this;
  }
  /** Whether the runtime may sleep for this timer while stronger ones are pending. */
  get strong(): boolean {
    return this.#ref && !this.weak;
  }
  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

export function clearTimer(handle: unknown): void {
  if (handle instanceof VirtualTimeout) {
    handle.close();
  } else if (typeof handle === "number" || typeof handle === "string") {
    timers.delete(Number(handle));
  }
}

function earlier(a: VirtualTimeout, b: VirtualTimeout): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}

/**
 * The timer the runtime sleeps for when the handler waits: the earliest referenced one,
 * else the earliest of all (an unref'd or signal timer is still the only thing that can
 * wake a handler that waits for nothing else).
 */
export function nextWake(): VirtualTimeout | undefined {
  let strong: VirtualTimeout | undefined;
  let any: VirtualTimeout | undefined;
  for (const t of timers.values()) {
    if (any === undefined || earlier(t, any)) any = t;
    if (t.strong && (strong === undefined || earlier(t, strong))) strong = t;
  }
  return strong ?? any;
}

/** The earliest timer due at or before now, if any. */
export function nextDue(): VirtualTimeout | undefined {
  let best: VirtualTimeout | undefined;
  for (const t of timers.values()) {
    if (t.due <= nowMs && (best === undefined || earlier(t, best))) best = t;
  }
  return best;
}

/** The earliest pending referenced timer's due time (a deadline that may abort a fetch). */
export function nextStrongDue(): number | undefined {
  let due: number | undefined;
  for (const t of timers.values()) {
    if (t.strong && (due === undefined || t.due < due)) due = t.due;
  }
  return due;
}

/** The abort deadlines (virtual ms) of the signals made by the patched `AbortSignal.timeout`/`any`. */
export const signalDeadlines = new WeakMap<AbortSignal, number>();
