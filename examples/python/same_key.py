"""The built-in `same_key` design, written as a Python executor against the client.

The built-in is data (models/designs/same_key.json) run by the stack loop of
src/design/stack.rs; this is the same policy as a team would write it:

- One operation and one idempotency key per authorization: the first call of an
  authorization mints the key and keeps it in the worker's store (`ctx.kv`, durable when
  the model's `workers.journal` is) before anything is sent. Transport retries, the
  agent's re-runs and replans, and a restarted worker's redelivered call all send that key.
- One transport loop: `executor.attempts` sends per tool call, each with the model's client
  timeout (`executor.timeout_ms`). What leaves the outcome open (a read timeout, a reset,
  409 in progress, 408, 429, a 5xx, a 404) is sent again after `executor.backoff_ms`,
  doubled per retry up to `executor.max_backoff_ms`; when the attempts run out, the agent is
  told unknown (never failed: nothing proves that the create did not happen).
- 2xx with an id is done, with that receipt; 409 "already exists" and 202 "accepted" are
  read as done without a receipt (as the built-in reads them). 400 is a definite failure;
  422 (the key was used with other arguments) and 412 (the key is past its window) are
  unknown, and not retried: the same key would get the same answer.
- A call whose operation is already confirmed is answered from the store, without a send.

It has no notion of a key's age and no read-back: safe as far as the provider's key
contract reaches (the assumptions of its hello are the built-in's). `journal.py` is the
journal design; `tests/parity.rs` runs both beside the built-ins, seed by seed.
"""

import json
import uuid
from typing import Any

import httpx

import retrylab

# The client's read timeout is the model's (`executor.timeout_ms`), set per request.
http = retrylab.httpx_client()

# What the provider may have acted on without saying so, or may still act on: retried. (A
# 501 says that the request is not supported: a refusal, as a 400 is.)
OPEN = {404, 408, 409, 429} | set(range(500, 600)) - {501}


def backoff_s(ctx: retrylab.Context, attempt: int) -> float:
    """The model's wait before retry `attempt` (1, 2, ...): doubled each time, capped."""
    base = ctx.config["backoff_ms"] * 2 ** (attempt - 1)
    return min(base, ctx.config["max_backoff_ms"]) / 1000


def error_code(response: httpx.Response) -> str:
    """The provider's error code (`{"error": {"code": ...}}`), or ""."""
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return ""


@retrylab.tool("create")
def create(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    name = f"same_key:{args['tenant']}:{args['authorization']}"
    raw = ctx.kv.get(name)
    record = json.loads(raw) if raw is not None else None
    if record is None:
        record = {"key": str(uuid.uuid4()), "state": "open"}
        ctx.kv.put(name, json.dumps(record, sort_keys=True))  # before the first send
    if record["state"] == "confirmed":
        return retrylab.ok(receipt=record["receipt"])

    attempts = ctx.config["attempts"]
    timeout_s = ctx.config["timeout_ms"] / 1000
    for attempt in range(1, attempts + 1):
        try:
            r = http.post(
                "/v1/resources",
                json={"ref": args["ref"], "tenant": args["tenant"]},
                headers={"Idempotency-Key": record["key"]},
                timeout=timeout_s,
            )
        except httpx.TransportError as e:
            detail = type(e).__name__
        else:
            status = r.status_code
            done = r.is_success or (status == 409 and error_code(r) == "already_exists")
            if done:
                receipt = r.json().get("id") if r.is_success else None
                record.update(state="confirmed", receipt=receipt)
                ctx.kv.put(name, json.dumps(record, sort_keys=True))
                return retrylab.ok(receipt=receipt)
            if status in (412, 422):
                return retrylab.unknown(f"{status} {error_code(r)}: the same key gets the same answer")
            if status not in OPEN:
                return retrylab.failed(f"{status} {r.text}")
            detail = f"{status} {error_code(r)}"
        if attempt < attempts:
            ctx.sleep(backoff_s(ctx, attempt))
    return retrylab.unknown(f"{detail} after {attempts} attempts")


ASSUMPTIONS = [
    "atomic_dedup",
    "one_key_scope",
    "in_flight_refused_or_held",
    "every_outcome_stored",
    "retention_covers_retries",
    "mismatch_refused_or_original",
    "durable_journal",
    "authorization_survives",
]
GUARANTEE = ["no_duplicate", "no_merged_repeat", "no_wrong_receipt", "no_wrong_compensation"]

if __name__ == "__main__":
    retrylab.run(hello_assumptions=ASSUMPTIONS, guarantee=GUARANTEE)
