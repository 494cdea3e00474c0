"""A journaled executor: one operation record per authorized action, written to the durable
store *before* the first send, with the idempotency key every retry and replan reuses.

- The record (key, first send, outcome) lives in the store the simulator keeps for the
  workers (`ctx.kv`: durable when the model's `workers.journal` is); a restarted worker
  finds it, so the resend after a crash carries the same key and the provider replays.
- A timeout, a 5xx or a 409 "in progress" leaves the outcome unknown: retried with the same
  key, with exponential backoff; when the attempts run out, the call is reported unknown
  (never failed: nothing proves that the create did not happen).
- A key as old as the provider's retention (the model's `executor.assumed_retention_ms`,
  less one timeout) is never sent again: the operation is escalated to a person.

`journaled_memory_key.py` runs this very code with the records held in memory.
"""

import json
import uuid
from typing import Any, Protocol

import httpx

import retrylab

TIMEOUT_S = 5.0
http = retrylab.httpx_client(timeout=TIMEOUT_S)


class Records(Protocol):
    def get(self, ctx: retrylab.Context, name: str) -> dict[str, Any] | None: ...
    def put(self, ctx: retrylab.Context, name: str, record: dict[str, Any]) -> None: ...


class DurableRecords:
    """Records in the worker's durable store: they survive a crash."""

    def get(self, ctx: retrylab.Context, name: str) -> dict[str, Any] | None:
        raw = ctx.kv.get(name)
        return None if raw is None else json.loads(raw)

    def put(self, ctx: retrylab.Context, name: str, record: dict[str, Any]) -> None:
        ctx.kv.put(name, json.dumps(record, sort_keys=True))


def backoff_s(ctx: retrylab.Context, attempt: int) -> float:
    """The model's backoff before retry `attempt` (1, 2, ...), capped."""
    base = ctx.config.get("backoff_ms", 0) * 2 ** (attempt - 1)
    return min(base, ctx.config.get("max_backoff_ms", 60_000)) / 1000


def make_handler(records: Records):
    def create(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
        name = f"op:{args['tenant']}:{args['authorization']}"
        record = records.get(ctx, name)
        if record is None:
            record = {"key": str(uuid.uuid4()), "first_sent_ms": None, "state": "open"}
            records.put(ctx, name, record)  # before the first send
        if record["state"] == "done":
            return retrylab.ok(receipt=record["receipt"])
        if record["state"] == "escalated":
            return retrylab.unknown("escalated: the key may be past the provider's retention")
        retention = ctx.config.get("assumed_retention_ms")
        attempts = max(1, ctx.config.get("attempts", 1))
        for attempt in range(1, attempts + 1):
            first = record["first_sent_ms"]
            if (
                retention is not None
                and first is not None
                and ctx.now_ms() - first >= retention - TIMEOUT_S * 1000
            ):
                record["state"] = "escalated"
                records.put(ctx, name, record)
                ctx.state("escalated")
                return retrylab.unknown("escalated: the key is as old as the provider keeps keys")
            if first is None:
                record["first_sent_ms"] = ctx.now_ms()
                records.put(ctx, name, record)
            try:
                r = http.post(
                    "/v1/resources",
                    json={"ref": args["ref"], "tenant": args["tenant"]},
                    headers={"Idempotency-Key": record["key"]},
                )
            except httpx.TransportError:
                status = None
            else:
                status = r.status_code
            if status in (200, 201):
                record.update(state="done", receipt=r.json()["id"])
                records.put(ctx, name, record)
                return retrylab.ok(receipt=record["receipt"])
            if status in (400, 404):
                record["state"] = "failed"
                records.put(ctx, name, record)
                return retrylab.failed(f"{status} {r.text}")
            if status in (412, 422):
                # The provider will not act on this key and will not say what became of the
                # first request under it: unknown, not failed.
                return retrylab.unknown(f"{status} {r.text}")
            if attempt < attempts:
                ctx.sleep(backoff_s(ctx, attempt))
        return retrylab.unknown(f"no answer after {attempts} attempts")

    return create


ASSUMPTIONS = [
    "atomic_dedup",
    "one_key_scope",
    "in_flight_refused_or_held",
    "every_outcome_stored",
    "retention_covers_retries",
    "mismatch_refused_or_original",
    "durable_journal",
]
GUARANTEE = ["no_duplicate", "no_merged_repeat", "no_wrong_receipt"]

if __name__ == "__main__":
    retrylab.tool("create")(make_handler(DurableRecords()))
    retrylab.run(hello_assumptions=ASSUMPTIONS, guarantee=GUARANTEE)
