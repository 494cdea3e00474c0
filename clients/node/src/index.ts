/**
 * retrylab's TypeScript/Node client of the external-executor protocol, version 1 (sync
 * mode). Register tool handlers with {@link tool}, then call {@link run}:
 *
 * ```ts
 * import { tool, run } from "retrylab";
 * tool("create", async (args, ctx) => {
 *   const r = await fetch(`${ctx.provider.base_url}/v1/resources`, {
 *     method: "POST", body: JSON.stringify({ ref: args.ref }), signal: AbortSignal.timeout(5000),
 *   });
 *   if (!r.ok) throw new Error(`status ${r.status}`);
 *   return await r.json();
 * });
 * run();
 * ```
 *
 * Code below a handler that is not given `ctx` (a LangChain tool body, a library callback)
 * reaches it with {@link current}; outside a tool call it throws {@link NoCallError}.
 */

export { current, NoCallError } from "./current.js";
export { Context, type Entry, type Kv, type OperationState, type Provider } from "./context.js";
export { Definite, Indefinite, NotUnderSimulatorError, OutsideHandlerError, ProtocolError, RetrylabError, StrictModeError } from "./errors.js";
export { HTTP_ERRORS, realFetch, simFetch as fetch, transportError, UNDICI_HEADERS_TIMEOUT_MS, type HttpErrorKind } from "./fetch.js";
export { install, installed, uninstall } from "./install.js";
export { describeError, failed, fromError, fromReturn, ok, Result, unknown, type Outcome } from "./results.js";
export { CLIENT, EXIT_SIMULATOR_ERROR, EXIT_STRICT_VIOLATION, PROTOCOL, registeredTools, run, tool, underSimulator, type Handler, type HandlerReturn, type RunOptions } from "./runtime.js";
export { EPOCH_MS } from "./virtual.js";
export { ERROR_CODE_NAMES, ErrorCode, PROTOCOL_VERSION, type FromExec, type ToExec } from "./protocol.js";
