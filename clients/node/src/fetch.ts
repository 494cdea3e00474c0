/**
 * `fetch` routed to the simulated provider: a request becomes an `http` message, its answer
 * a real `Response`, and a transport error what Node's fetch (undici) throws.
 */

import { TO_EXEC_FIELDS, type TransportError } from "./protocol.js";
import * as v from "./virtual.js";

/** The real `fetch`, saved before any patch. */
export const realFetch: typeof fetch = globalThis.fetch;

/**
 * undici's default `headersTimeout` (300 s): how long Node's fetch waits for an answer when
 * no signal says otherwise; the `timeout_ms` of such a request.
 */
export const UNDICI_HEADERS_TIMEOUT_MS = 300_000;

/** A transport error an `http_error` may carry. */
export type HttpErrorKind = TransportError;
/** The transport errors an `http_error` may carry (from the protocol's schema). */
export const HTTP_ERRORS = TO_EXEC_FIELDS.http_error.error.spec.enum as readonly HttpErrorKind[];

export interface SimRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
  timeoutMs: number | null;
}

export type SimAnswer =
  | { kind: "response"; status: number; headers: Record<string, string>; body: Uint8Array }
  | { kind: "error"; error: HttpErrorKind }
  | { kind: "abandoned" };

/** Sends the `http` message and blocks for its answer; set by the runtime while it serves. */
let exchange: ((request: SimRequest) => SimAnswer) | null = null;

export function setExchange(fn: ((request: SimRequest) => SimAnswer) | null): void {
  exchange = fn;
}

/** Whether requests go to the simulator (the runtime is serving). */
export function simulated(): boolean {
  return exchange !== null;
}

function undiciError(name: string, message: string, code: string, extra: Record<string, unknown> = {}): Error {
  const e = new Error(message);
  Object.defineProperty(e, "name", { value: name, configurable: true, writable: true });
  return Object.assign(e, { code }, extra);
}

/** What Node's fetch throws for a transport error: `TypeError: fetch failed` with undici's cause. */
export function transportError(kind: HttpErrorKind, url: URL): TypeError {
  let cause: Error;
  switch (kind) {
    case "connect_timeout":
      cause = undiciError("ConnectTimeoutError", "Connect Timeout Error", "UND_ERR_CONNECT_TIMEOUT");
      break;
    case "refused":
      cause = undiciError("Error", `connect ECONNREFUSED ${url.host}`, "ECONNREFUSED", { errno: -111, syscall: "connect" });
      break;
    case "read_timeout":
      cause = undiciError("HeadersTimeoutError", "Headers Timeout Error", "UND_ERR_HEADERS_TIMEOUT");
      break;
    case "reset":
      cause = undiciError("SocketError", "other side closed", "UND_ERR_SOCKET");
      break;
  }
  return new TypeError("fetch failed", { cause });
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function inputSignal(input: string | URL | Request, init?: RequestInit): AbortSignal | undefined {
  if (init?.signal) return init.signal;
  if (input instanceof Request) return input.signal;
  return undefined;
}

function encodeOk(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export { encodeOk as isUtf8 };

/**
 * A `fetch`: under the simulator (while `run()` serves) the request goes to the simulated
 * provider; otherwise it is Node's own fetch.
 *
 * The request's `timeout_ms` is the time until its signal aborts: an `AbortSignal.timeout(ms)`
 * (or an `AbortSignal.any` of some), else, for another signal, the first pending timer (the
 * only thing that can abort it while the process waits), else undici's 300 s headers timeout.
 * A `read_timeout` then rejects with the signal's reason (`TimeoutError` for
 * `AbortSignal.timeout`), or `TypeError: fetch failed` (cause `UND_ERR_HEADERS_TIMEOUT`).
 */
export async function simFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const send = exchange;
  if (send === null) return realFetch(input, init);
  const signal = inputSignal(input, init);
  if (signal?.aborted) throw signal.reason;
  const request = new Request(input, init);
  const url = new URL(request.url);
  const body = new Uint8Array(await request.arrayBuffer());
  if (signal?.aborted) throw signal.reason;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const now = v.now();
  let deadline = signal ? v.signalDeadlines.get(signal) : undefined;
  let bySignal = deadline !== undefined;
  if (deadline === undefined && signal) {
    const due = v.nextStrongDue();
    if (due !== undefined && due - now < UNDICI_HEADERS_TIMEOUT_MS) {
      deadline = due;
      bySignal = true;
    }
  }
  if (deadline === undefined) deadline = now + UNDICI_HEADERS_TIMEOUT_MS;
  const answer = send({ method: request.method, url: request.url, headers, body, timeoutMs: Math.max(0, deadline - now) });
  if (answer.kind === "abandoned") {
    // The simulator ended the run while this request waited: the handler never resumes.
    return new Promise<Response>(() => {});
  }
  if (answer.kind === "error") {
    const error = transportError(answer.error, url);
    if (answer.error !== "read_timeout" || !bySignal || !signal) throw error;
    // The signal's timer is due now: it aborts the request, as it would on a real network.
    return new Promise<Response>((_, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      const after = new v.VirtualTimeout(
        () => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
        1,
        [],
        false,
      );
      after.due = v.now(); // after the timers due now (a later seq)
      after.weak = true;
    });
  }
  const response = new Response(NULL_BODY.has(answer.status) ? null : answer.body, {
    status: answer.status,
    headers: answer.headers,
  });
  Object.defineProperty(response, "url", { value: request.url });
  return response;
}
