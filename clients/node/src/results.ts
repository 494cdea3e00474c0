/**
 * What a handler's return value or exception claims (the `result` message's outcome).
 *
 * The rules, in order (as the Python client's):
 * 1. A {@link Result} (from {@link ok}, {@link failed}, {@link unknown}) is the claim itself;
 *    an `ok` without a receipt takes `ctx.receipt`.
 * 2. `undefined`, `null`, a string or a plain object is success: `ok`, receipt `ctx.receipt`.
 * 3. Any other value (an array, a number, a `Response`...) claims `unknown`, naming its type.
 * 4. Throwing {@link Definite} claims `failed` (definite), detail = its message.
 * 5. Throwing {@link Indefinite} claims `unknown`, detail = its message.
 * 6. Throwing anything else claims `unknown`, detail `"Name: message"` (plus
 *    ` (caused by ...)` for an error's `cause`): an exception does not prove that nothing
 *    happened.
 */

import { Definite, Indefinite } from "./errors.js";
import { FROM_EXEC_FIELDS, type Outcome } from "./protocol.js";

export type { Outcome };

/** The outcomes a `result` may claim (from the protocol's schema). */
const OUTCOMES = FROM_EXEC_FIELDS.result.outcome.spec.enum as readonly string[];

const MAX_DETAIL = 2000;

/** The claim a handler makes about its tool call. */
export class Result {
  readonly outcome: Outcome;
  /** The provider's id of the resource (`ok` only). */
  readonly receipt: string | null;
  /** Why (`failed` and `unknown` only). */
  readonly detail: string | null;
  /** What the handler returned (production callers only; never sent). */
  readonly value: unknown;
  /** What the handler threw (production callers only; never sent). */
  readonly error: unknown;

  constructor(
    outcome: Outcome,
    opts: { receipt?: string | null; detail?: string | null; value?: unknown; error?: unknown } = {},
  ) {
    if (!OUTCOMES.includes(outcome)) {
      throw new RangeError(`outcome must be "ok", "failed" or "unknown", not ${JSON.stringify(outcome)}`);
    }
    const receipt = opts.receipt ?? null;
    const detail = opts.detail ?? null;
    if (receipt !== null) {
      if (typeof receipt !== "string") throw new TypeError(`a receipt is the provider's resource id as a string, not ${typeof receipt}`);
      if (outcome !== "ok") throw new RangeError(`only an ok result carries a receipt (this one is ${outcome})`);
    }
    if (detail !== null) {
      if (typeof detail !== "string") throw new TypeError(`a detail is a string, not ${typeof detail}`);
      if (outcome === "ok") throw new RangeError("an ok result carries no detail (protocol 1's ok result has a receipt only)");
    }
    this.outcome = outcome;
    this.receipt = receipt;
    this.detail = detail;
    this.value = opts.value;
    this.error = opts.error;
  }
}

/** Success: the effect exists. Without `receipt`, the handler's `ctx.receipt` is used. */
export function ok(receipt: string | null = null, opts: { value?: unknown } = {}): Result {
  return new Result("ok", { receipt, value: opts.value });
}

/** A **definite** failure: the effect does not exist and never will. */
export function failed(detail: string): Result {
  return new Result("failed", { detail });
}

/** An indefinite outcome: the effect may exist. When in doubt, `unknown` is always honest. */
export function unknown(detail: string): Result {
  return new Result("unknown", { detail });
}

function errorName(e: object): string {
  const name = (e as { name?: unknown }).name;
  if (typeof name === "string" && name !== "") return name;
  return e.constructor?.name ?? "Error";
}

/** A deterministic one-line description of a thrown value: `"Name: message"`. */
export function describeError(e: unknown, depth = 0): string {
  let text: string;
  if (e !== null && typeof e === "object") {
    const name = errorName(e);
    const message = String((e as { message?: unknown }).message ?? "").trim();
    text = message ? `${name}: ${message}` : name;
    const cause = (e as { cause?: unknown }).cause;
    if (cause !== undefined && depth < 3) text += ` (caused by ${describeError(cause, depth + 1)})`;
  } else {
    text = `thrown ${typeof e}: ${String(e)}`;
  }
  return text.slice(0, MAX_DETAIL);
}

/** Rules 4-6: the claim of a handler that threw `e`. */
export function fromError(e: unknown): Result {
  if (e instanceof Definite) return new Result("failed", { detail: e.message || "Definite", error: e });
  if (e instanceof Indefinite) return new Result("unknown", { detail: e.message || "Indefinite", error: e });
  return new Result("unknown", { detail: describeError(e), error: e });
}

function isPlainObject(v: unknown): boolean {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v !== null && typeof v === "object") return v.constructor?.name ?? "object";
  return typeof v;
}

/** Rules 1-3: the claim of a handler that returned `value`; `receipt` is `ctx.receipt`. */
export function fromReturn(value: unknown, receipt: string | null, tool: string): Result {
  if (value instanceof Result) {
    if (value.outcome === "ok" && value.receipt === null && receipt !== null) {
      return new Result("ok", { receipt, value: value.value });
    }
    return value;
  }
  if (value === undefined || value === null || typeof value === "string" || isPlainObject(value)) {
    return new Result("ok", { receipt, value });
  }
  return new Result("unknown", {
    detail:
      `TypeError: the handler of ${JSON.stringify(tool)} returned a ${typeName(value)}; return a plain ` +
      "object, a string, undefined or retrylab.ok()/failed()/unknown() (an unrecognised return value " +
      "claims unknown)",
    value,
  });
}
