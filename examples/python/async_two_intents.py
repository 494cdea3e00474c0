"""An asyncio executor: `async def` handlers, `httpx.AsyncClient`, several tool calls in
flight at once on one worker (retrylab.run(mode="async"); docs/executor-protocol.md,
section 2).

Each authorized action gets one operation record in the durable store, written *before* the
first send, holding the idempotency key every retry and redelivery reuses: a timeout is
retried under the same key after a virtual `asyncio.sleep`, so the provider replays the
first outcome instead of creating a second ticket. While one call waits for its answer (or
its backoff), the event loop runs the others.

The store (`ctx.kv`) is synchronous and answered inside the turn: the read and the write of
a record with no `await` between them cannot interleave with another call of this process.
"""

import asyncio
import json
import uuid
from typing import Any

import httpx

import retrylab

TIMEOUT_S = 5.0
http = retrylab.httpx_async_client(timeout=TIMEOUT_S)


def backoff_s(ctx: retrylab.Context, attempt: int) -> float:
    """The model's backoff before retry `attempt` (1, 2, ...), capped."""
    base = ctx.config.get("backoff_ms", 0) * 2 ** (attempt - 1)
    return min(base, ctx.config.get("max_backoff_ms", 60_000)) / 1000


def load(ctx: retrylab.Context, name: str) -> dict[str, Any] | None:
    raw = ctx.kv.get(name)
    return None if raw is None else json.loads(raw)


def save(ctx: retrylab.Context, name: str, record: dict[str, Any]) -> None:
    ctx.kv.put(name, json.dumps(record, sort_keys=True))


@retrylab.tool("create")
async def create(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    name = f"op:{args['tenant']}:{args['authorization']}"
    record = load(ctx, name)
    if record is None:
        record = {"key": str(uuid.uuid4()), "state": "open"}
        save(ctx, name, record)  # before the first send
    if record["state"] == "done":
        return retrylab.ok(receipt=record["receipt"])
    attempts = max(1, ctx.config.get("attempts", 1))
    for attempt in range(1, attempts + 1):
        try:
            r = await http.post(
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
            save(ctx, name, record)
            return retrylab.ok(receipt=record["receipt"])
        if status in (400, 404):
            record["state"] = "failed"
            save(ctx, name, record)
            return retrylab.failed(f"{status} {r.text}")
        if status in (412, 422):
            return retrylab.unknown(f"{status} {r.text}")
        if attempt < attempts:
            await asyncio.sleep(backoff_s(ctx, attempt))
    return retrylab.unknown(f"no answer after {attempts} attempts")


if __name__ == "__main__":
    retrylab.run(
        mode="async",
        hello_assumptions=["atomic_dedup", "one_key_scope", "every_outcome_stored", "durable_journal"],
        guarantee=["no_duplicate"],
    )
