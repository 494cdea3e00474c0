/** What a handler is given: the tool call, the store, the clock, and the model's settings. */

import { FROM_EXEC_FIELDS, type StateName } from "./protocol.js";

/** A store entry as `list` returns it: key, value, version. */
export type Entry = [key: string, value: string, version: number];

/**
 * The durable store (the simulator's `kv`; production: a {@link MemoryStore} or
 * {@link FileStore}). Keys and values are strings; every write takes the next version of
 * the whole store (from 1, never reused: a fencing token); an absent key reads
 * `{value: null, version: 0}`.
 */
export interface Kv {
  /** The value, or `null` when absent. */
  get(key: string): Promise<string | null>;
  /** The value (`null` when absent) and its version (0 when absent). */
  getVersioned(key: string): Promise<{ value: string | null; version: number }>;
  /** Write; returns the version of the write. */
  put(key: string, value: string): Promise<number>;
  /**
   * Write only if the entry's version is `expectVersion` (0: absent). Returns whether it
   * wrote, and the entry's value and version after the operation (the written ones, or the
   * current ones).
   */
  cas(key: string, expectVersion: number, value: string): Promise<{ ok: boolean; value: string | null; version: number }>;
  /** Remove; returns whether the key existed. */
  delete(key: string): Promise<boolean>;
  /** The entries whose key starts with `prefix`, in key order (code unit order). */
  list(prefix: string): Promise<Entry[]>;
}

/** `init.provider`: where the provider answers and how its keys travel. */
export interface Provider {
  base_url: string;
  preset?: string;
  key_header?: string | null;
  [field: string]: unknown;
}

/** The operation states a handler may record with {@link Context.state}. */
export type OperationState = StateName;

/** The services a context reaches: the simulator's, or production's. */
export interface Backend {
  nowMs(): number;
  sleep(ms: number): Promise<void>;
  log(text: string): void;
  state(call: string, name: OperationState, receipt: string | null): void;
}

export interface ContextInit {
  call: string;
  issue: number;
  tool: string;
  args: Record<string, unknown>;
  worker: number;
  incarnation: number;
  redelivery: boolean;
  cancelled: boolean;
  params: Record<string, unknown>;
  config: Record<string, unknown>;
  provider: Provider;
  kv: Kv;
  backend: Backend;
}

/** The operation states a `state` message may record (from the protocol's schema). */
const STATES = FROM_EXEC_FIELDS.state.state.spec.enum as readonly string[];

/** The second argument of a handler. */
export class Context {
  /** The tool call's id (a replan is a new call). */
  readonly call: string;
  /** Counts the agent's re-runs of the same call (1, 2, ...). */
  readonly issue: number;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The simulated worker (production: 0). */
  readonly worker: number;
  /** n after n crashes of the worker. */
  readonly incarnation: number;
  /** A restarted worker is handed again a call its crashed incarnation did not answer. */
  readonly redelivery: boolean;
  /** The agent stopped waiting (a `cancel` arrived). */
  cancelled: boolean;
  /**
   * The resource id an `ok` reports: set by the client to the string `id` of every 2xx JSON
   * object response of this call; assign it to report another id, or `null` for none.
   */
  receipt: string | null = null;
  /** `init.params`: the design entry's own parameters. */
  readonly params: Record<string, unknown>;
  /** `init.config`: the model's `executor` section. */
  readonly config: Record<string, unknown>;
  /** `init.provider`: `base_url`, `preset`, `key_header`. */
  readonly provider: Provider;
  /** The durable store. */
  readonly kv: Kv;
  readonly #backend: Backend;

  constructor(init: ContextInit) {
    this.call = init.call;
    this.issue = init.issue;
    this.tool = init.tool;
    this.args = init.args;
    this.worker = init.worker;
    this.incarnation = init.incarnation;
    this.redelivery = init.redelivery;
    this.cancelled = init.cancelled;
    this.params = init.params;
    this.config = init.config;
    this.provider = init.provider;
    this.kv = init.kv;
    this.#backend = init.backend;
  }

  /** The user's authorization of the action the call serves (`args.authorization`; `null` when the call carries none). */
  get authorization(): string | null {
    const value = this.args.authorization;
    return typeof value === "string" ? value : null;
  }

  /** Virtual ms since the run began (production: Unix ms). */
  nowMs(): number {
    return this.#backend.nowMs();
  }

  /** Sleep `ms` milliseconds (virtual under the simulator: a `sleep` message). */
  sleep(ms: number): Promise<void> {
    return this.#backend.sleep(ms);
  }

  /** A line in retrylab's `trace` (production: `console.error`). */
  log(text: string): void {
    this.#backend.log(String(text));
  }

  /** Record the operation's state: `confirmed` (optionally with its receipt), `failed`, `escalated`. */
  state(name: OperationState, receipt: string | null = null): void {
    if (!STATES.includes(name)) throw new RangeError(`state is one of ${STATES.join(", ")}, not ${JSON.stringify(name)}`);
    if (receipt !== null && name !== "confirmed") throw new RangeError("only a confirmed state carries a receipt");
    this.#backend.state(this.call, name, receipt);
  }
}

export function checkKey(key: unknown): string {
  if (typeof key !== "string") throw new TypeError(`a store key is a string, not ${typeof key}`);
  return key;
}

export function checkValue(value: unknown): string {
  if (typeof value !== "string") {
    throw new TypeError(`a store value is a string, not ${typeof value} (JSON.stringify it)`);
  }
  return value;
}

export function checkVersion(version: unknown): number {
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) {
    throw new TypeError(`a version is an integer >= 0, not ${String(version)}`);
  }
  return version;
}
