/**
 * The running tool call's `ctx` from anywhere below the handler: {@link current}.
 *
 * A LangChain tool body, a library callback or a helper three calls down cannot take `ctx` as a
 * parameter; they call `current()` instead:
 *
 * ```ts
 * import { current } from "retrylab";
 * async function rememberKey(ref: string) {      // not given ctx
 *   const call = current();
 *   return call.kv.get(`key:${call.authorization}:${ref}`);
 * }
 * ```
 *
 * The call is held in an `AsyncLocalStorage` that the client enters around each handler (under
 * the simulator and in production's `call()`): promises, `await`, timers (virtual ones too) and
 * tasks the handler starts keep it, so concurrent calls in production each see their own.
 *
 * `current()` returns the same {@link Context} the handler received: it exposes what `ctx`
 * exposes and nothing more (the store, the call's id, its issue, its `authorization`, the
 * clock), never the intent the call serves nor anything of the simulator's ground truth (the
 * protocol keeps them out of the executor's reach, or certificates would be unsound).
 */

import { AsyncLocalStorage } from "node:async_hooks";

import type { Context } from "./context.js";
import { RetrylabError } from "./errors.js";

/** The store behind {@link current}: the call whose handler (or code it calls) runs. */
export const callStorage = new AsyncLocalStorage<Context>();

export const NO_CALL = "no tool call is running: retrylab.current() is only available inside a tool handler or code it calls";

/**
 * {@link current} was called while no tool call is running: at import time, in `onReset`, or
 * in code the client did not call for a tool call.
 */
export class NoCallError extends RetrylabError {
  override name = "NoCallError";
}

/**
 * The running tool call's {@link Context} (`ctx`): its `kv` store, `call` id, `issue`,
 * `authorization`, clock, `log` and `state`, as the handler received it. Throws
 * {@link NoCallError} when no tool call is running.
 */
export function current(): Context {
  const ctx = callStorage.getStore();
  if (ctx === undefined) throw new NoCallError(NO_CALL);
  return ctx;
}
