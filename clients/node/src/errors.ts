/** The client's own errors, and the two a handler throws to state its claim. */

/** Base class of the client's errors. */
export class RetrylabError extends Error {
  override name = "RetrylabError";
}

/**
 * A message the protocol does not allow (an unknown type or field, a reply to the wrong
 * `msg_id`, time going backwards). Fatal: the process exits with status 1.
 */
export class ProtocolError extends RetrylabError {
  override name = "ProtocolError";
}

/** A request, sleep, store operation or log line while no tool handler is running. */
export class OutsideHandlerError extends RetrylabError {
  override name = "OutsideHandlerError";
}

/** `run()` outside the simulator (no channel on the descriptors). */
export class NotUnderSimulatorError extends RetrylabError {
  override name = "NotUnderSimulatorError";
}

/**
 * Strict mode refused a real socket, DNS lookup or worker thread. Fatal even when the
 * handler catches it: the client exits with status 4 at the next protocol step.
 */
export class StrictModeError extends RetrylabError {
  override name = "StrictModeError";
}

/**
 * Thrown by a handler: a **definite** failure (`failed`): the effect does not exist and
 * never will (e.g. the provider rejected the request with 400).
 */
export class Definite extends Error {
  override name = "Definite";
}

/** Thrown by a handler: an indefinite outcome (`unknown`): the effect may exist. */
export class Indefinite extends Error {
  override name = "Indefinite";
}
