"""The built-in `journal` design, written as a Python executor against the client.

The built-in is src/design/journal_design.rs (the engine: src/design/journaled.rs); this is
the same policy as a team would write it, with the journal in the worker's store (`ctx.kv`,
durable when the model's `workers.journal` is):

- One record per authorization, written (`authorized`) before anything is sent, with the
  idempotency key of the operation's whole life: transport retries, the agent's re-runs and
  replans, and a restarted worker's redelivered call all go through it and send its key.
- A call of the same authorization with other arguments is refused here, never sent under
  the old key: a changed action needs a new authorization. It is told failed if the
  operation failed, else unknown (an earlier call may have acted).
- Each tool call has `executor.attempts` creates; a read timeout, a reset, a 409, a 408, a
  429, a 5xx, a 412 or a 404 leaves the operation unknown, and the next step waits
  `executor.backoff_ms` doubled per step (the last one too, before the agent is told
  unknown). 400 and 422 are definite failures.
- A 202 is accepted, not done: the operation is polled every `executor.poll_ms`, at most
  `executor.reads` times per tool call, until it succeeds or fails.
- Past `executor.deadline_ms` from the record's creation, or once the key is as old as
  `executor.assumed_retention_ms` (from its first send, less one client timeout for the
  request to arrive), the operation is escalated to a person and never sent again: the agent
  hears unknown from then on.
- A restarted worker is handed the call it had not answered (`redelivery`) and resumes the
  record with a fresh budget.

`same_key.py` is the `same_key` design; `tests/parity.rs` runs both beside the built-ins,
seed by seed.
"""

import json
import uuid
from typing import Any

import httpx

import retrylab

# The client's read timeout is the model's (`executor.timeout_ms`), set per request.
http = retrylab.httpx_client()

# What the provider may have acted on without saying so, or may still act on.
OPEN = {404, 408, 409, 412, 429} | set(range(500, 600))


class Journal:
    """The operation record of one authorization, in the worker's store."""

    def __init__(self, ctx: retrylab.Context, args: dict[str, Any]) -> None:
        self.ctx = ctx
        self.name = f"journal:{args['tenant']}:{args['authorization']}"
        raw = ctx.kv.get(self.name)
        self.record: dict[str, Any] | None = None if raw is None else json.loads(raw)

    def authorize(self, args: dict[str, Any]) -> None:
        self.record = {
            "args": args,
            "key": str(uuid.uuid4()),
            "state": "authorized",
            "created_ms": self.ctx.now_ms(),
            "first_sent_ms": None,
        }
        self.write()

    def __getitem__(self, field: str) -> Any:
        assert self.record is not None
        return self.record[field]

    def update(self, **fields: Any) -> None:
        assert self.record is not None
        self.record.update(fields)
        self.write()

    def write(self) -> None:
        self.ctx.kv.put(self.name, json.dumps(self.record, sort_keys=True))


def backoff_s(ctx: retrylab.Context, step: int) -> float:
    """The model's wait after step `step` (1, 2, ...): doubled each time, capped."""
    base = ctx.config["backoff_ms"] * 2 ** (step - 1)
    return min(base, ctx.config["max_backoff_ms"]) / 1000


def error_code(response: httpx.Response) -> str:
    """The provider's error code (`{"error": {"code": ...}}`), or ""."""
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return ""


def escalate(ctx: retrylab.Context, journal: Journal, why: str) -> retrylab.Result:
    journal.update(state="escalated")
    ctx.state("escalated")
    return retrylab.unknown(f"escalated to a person: {why}")


def confirm(journal: Journal, receipt: str | None) -> retrylab.Result:
    journal.update(state="confirmed", receipt=receipt)
    return retrylab.ok(receipt=receipt)


def fail(journal: Journal, detail: str) -> retrylab.Result:
    journal.update(state="failed")
    return retrylab.failed(detail)


@retrylab.tool("create")
def create(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    journal = Journal(ctx, args)
    if journal.record is None:
        journal.authorize(args)
    elif journal["args"] != args:
        ctx.log("refused: the operation was authorized with other arguments")
        if journal["state"] == "failed":
            return retrylab.failed("refused: the operation was authorized with other arguments")
        return retrylab.unknown("refused: the operation was authorized with other arguments")
    state = journal["state"]
    if state == "confirmed":
        return retrylab.ok(receipt=journal["receipt"])
    if state == "failed":
        return retrylab.failed("the operation failed")
    if state == "escalated":
        return retrylab.unknown("escalated to a person")

    config = ctx.config
    sends = reads = 0
    while True:
        deadline = config["deadline_ms"]
        if deadline is not None and ctx.now_ms() >= journal["created_ms"] + deadline:
            return escalate(ctx, journal, "deadline passed")
        if journal["state"] == "accepted":
            # 202: polled, not taken for done.
            if reads == config["reads"]:
                return retrylab.unknown("accepted, still pending")
            reads += 1
            answer, r = poll(ctx, journal)
            if answer == "done":
                return confirm(journal, r.json()["id"])
            if answer == "failed":
                return fail(journal, "the accepted operation failed")
            ctx.sleep(config["poll_ms"] / 1000)
            continue

        first = journal["first_sent_ms"]
        retention = config["assumed_retention_ms"]
        if first is not None and retention is not None and ctx.now_ms() - first + config["timeout_ms"] >= retention:
            return escalate(ctx, journal, "the key is as old as the provider is assumed to keep keys")
        if first is not None and sends == config["attempts"]:
            return retrylab.unknown(f"no answer after {sends} attempts")
        sends += 1
        journal.update(state="dispatched", first_sent_ms=ctx.now_ms() if first is None else first)
        answer, r = send_create(ctx, journal, args)
        if answer == "done":
            return confirm(journal, r.json().get("id") if r.is_success else None)
        if answer == "accepted":
            journal.update(state="accepted", handle=r.json()["operation"])
            ctx.sleep(config["poll_ms"] / 1000)
            continue
        if answer == "failed":
            return fail(journal, f"{r.status_code} {r.text}")
        journal.update(state="unknown")
        ctx.sleep(backoff_s(ctx, sends + reads))


def send_create(ctx: retrylab.Context, journal: Journal, args: dict[str, Any]) -> tuple[str, Any]:
    """Sends the create under the record's key. What the answer says: "done", "accepted"
    (202), "failed" (definite: nothing was or will be created) or "open" (it may have been)."""
    try:
        r = http.post(
            "/v1/resources",
            json={"ref": args["ref"], "tenant": args["tenant"]},
            headers={"Idempotency-Key": journal["key"]},
            timeout=ctx.config["timeout_ms"] / 1000,
        )
    except httpx.TransportError:  # a read timeout or a reset: it may have been applied
        return "open", None
    if r.status_code == 202:
        return "accepted", r
    if r.is_success:
        return ("failed" if r.json().get("status") == "failed" else "done"), r
    if r.status_code == 409 and error_code(r) == "already_exists":
        return "done", r
    return ("open" if r.status_code in OPEN else "failed"), r


def poll(ctx: retrylab.Context, journal: Journal) -> tuple[str, Any]:
    """Reads the accepted operation's status: "done", "failed", or "open" (still pending, or
    no answer)."""
    try:
        r = http.get(f"/v1/operations/{journal['handle']}", timeout=ctx.config["timeout_ms"] / 1000)
    except httpx.TransportError:
        return "open", None
    if r.status_code == 200 and "id" in r.json():
        return "done", r
    if r.status_code == 200 and r.json().get("status") == "failed":
        return "failed", r
    return "open", r


ASSUMPTIONS = [
    "atomic_dedup",
    "one_key_scope",
    "in_flight_refused_or_held",
    "every_outcome_stored",
    "retention_covers_retries",
    "durable_journal",
    "authorization_survives",
]
GUARANTEE = [
    "no_duplicate",
    "no_drift",
    "no_merged_repeat",
    "no_false_success",
    "no_wrong_receipt",
    "no_wrong_compensation",
]

if __name__ == "__main__":
    retrylab.run(hello_assumptions=ASSUMPTIONS, guarantee=GUARANTEE)
