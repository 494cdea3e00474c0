"""Two workers recovering one operation, coordinating through the store's compare-and-set.

The provider takes no idempotency key (a ticket API whose only defence is a search by the
request's own reference), and the job queue delivers a call again to another worker when
the first has not answered within its visibility timeout (`workers.redelivery_ms`): a worker
frozen mid-call (a long GC pause, a stalled VM) and the worker that took its call over both
work on one operation. Sending twice is a second ticket, so:

- **one sender at a time**: a worker acts only while it holds the operation's lease, taken
  with `cas` on `lease:...`; the lease's store version is its fencing token;
- **the send is fenced**: the record `op:...` is marked `sent` (with the time and the token)
  in the same turn as the request leaves, and only if the lease is still this worker's; a
  worker whose lease was taken over while it was frozen finds out before it sends again;
- **after a send, read back, never resend blind**: a worker that finds the record `sent`
  searches for the reference, and trusts a "not found" only once the send is older than the
  client's timeout plus the provider's visibility bound (`executor.timeout_ms` and
  `executor.visibility_bound_ms` of the model): until then the ticket may exist unseen;
- **one key per operation**, minted into the record with its first send and carried by
  every resend, where the provider takes one (`init.provider.key_header`): a resend the
  provider has seen is answered from its key record.

On `models/windows/two_workers_recovering.json` (a provider that takes keys but executes two
concurrent same-key requests, no lookup, the worker crashed after its send and the request
20 s in processing) the lease keeps the restarted worker from resending until the crashed
incarnation's lease ends, after the first request committed; its resend under the same key
is then replayed.

    retrylab run examples/python/frozen_worker_redelivered.json \\
      --executor two_workers="python examples/python/two_workers.py" \\
      --executor naive="python examples/python/naive_retry.py"
"""

import json
import uuid
from typing import Any

import httpx

import retrylab

http = retrylab.httpx_client()


def load(ctx: retrylab.Context, key: str) -> tuple[dict[str, Any] | None, int]:
    value, version = ctx.kv.get_versioned(key)
    return (None if value is None else json.loads(value)), version


def take_lease(ctx: retrylab.Context, name: str, lease_ms: int) -> tuple[int | None, int]:
    """The lease's fencing token (its version) if this worker holds it now (taken, or taken
    over once expired); else None and the moment the holder's lease ends."""
    lease, version = load(ctx, name)
    me = f"{ctx.worker}:{ctx.incarnation}"
    now = ctx.now_ms()
    if lease is not None and lease["holder"] == me and lease["until"] > now:
        return version, lease["until"]
    if lease is not None and lease["until"] > now:
        return None, lease["until"]
    ok, _, new_version = ctx.kv.cas(name, version, json.dumps({"holder": me, "until": now + lease_ms}))
    return (new_version if ok else None), now


def holds(ctx: retrylab.Context, name: str, token: int) -> bool:
    """Whether the lease taken with `token` is still this worker's, unexpired."""
    lease, version = load(ctx, name)
    return version == token and lease is not None and ctx.now_ms() < lease["until"]


@retrylab.tool("create")
def create(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    op = f"op:{args['tenant']}:{args['authorization']}"
    lease = f"lease:{args['tenant']}:{args['authorization']}"
    timeout_ms = ctx.config.get("timeout_ms", 5000)
    bound_ms = ctx.config.get("visibility_bound_ms", 0)
    lease_ms = ctx.config.get("lease_ms", 30000)
    while True:
        record, _ = load(ctx, op)
        if record is not None and record["state"] == "done":
            return retrylab.ok(receipt=record["receipt"])
        if record is not None and record["state"] == "failed":
            return retrylab.failed(record["detail"])
        token, until = take_lease(ctx, lease, lease_ms)
        if token is None:
            # Another worker is on it: look again when its lease ends.
            ctx.sleep((until - ctx.now_ms() + 1) / 1000)
            continue
        header = ctx.provider.get("key_header")
        if record is not None and record["state"] == "sent":
            try:
                r = http.get("/v1/resources", params={"ref": args["ref"]}, timeout=timeout_ms / 1000)
            except httpx.TransportError:
                continue
            if r.status_code == 200:
                ctx.kv.put(op, json.dumps({"state": "done", "receipt": r.json()["id"]}))
                continue
            if r.status_code != 404 and r.status_code != 501:
                ctx.sleep(1.0)  # the read itself failed (a 5xx): read again
                continue
            if r.status_code == 501 and not header:
                # No read-back and no key: nothing can tell whether the ticket exists, and a
                # resend could make a second one.
                return retrylab.unknown("the provider offers no read-back and takes no key")
            # Not found (or no search, under a key): trusted only once the earlier send can
            # no longer be in flight nor unseen.
            trusted_at = record["sent_at"] + timeout_ms + bound_ms
            if ctx.now_ms() < trusted_at:
                ctx.sleep((trusted_at - ctx.now_ms()) / 1000)
                continue
        if not holds(ctx, lease, token):
            continue
        key = record["key"] if record is not None else str(uuid.uuid4())
        ctx.kv.put(op, json.dumps({"state": "sent", "sent_at": ctx.now_ms(), "token": token, "key": key}))
        headers = {header: key} if header else {}
        try:
            r = http.post("/v1/resources", json={"ref": args["ref"]}, headers=headers, timeout=timeout_ms / 1000)
        except httpx.TransportError:
            continue  # it may exist: read back
        if r.status_code in (200, 201):
            ctx.kv.put(op, json.dumps({"state": "done", "receipt": r.json()["id"]}))
        elif r.status_code in (400, 404, 412, 422):
            # Refused on its merits: nothing was created.
            detail = f"{r.status_code} {r.text}"
            ctx.kv.put(op, json.dumps({"state": "failed", "detail": detail}))
        # A 409 (in progress, already exists) or a 5xx: it may exist; read back.

if __name__ == "__main__":
    retrylab.run(hello_assumptions=["durable_journal", "read_back_identifies_operation", "visibility_bound_covers_lag"])
