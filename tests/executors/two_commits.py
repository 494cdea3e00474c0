"""A tool that keeps its idempotency key and its receipt in SQLite, and after the provider's
answer makes two commits in one turn: the receipt recorded (`done`), the key deleted
(`pending`). On a redelivered call it answers from `done`, resends under the key of
`pending`, or else starts anew with a new key.

`python two_commits.py cleanup-first` deletes the key before it records the receipt (the
order a team gets when it "cleans up, then records"): a crash between the two commits
leaves neither, and the redelivered call sends a second create under a new key. Crashes
between turns (after a send, after a reply) never fall there; a crash at a storage commit
does (`workers.crash.at_commit`, tests/corpus_below.rs).
"""

import sqlite3
import sys
import uuid

import httpx

import retrylab

CLEANUP_FIRST = sys.argv[1:] == ["cleanup-first"]

http = retrylab.httpx_client()


def connect() -> sqlite3.Connection:
    db = sqlite3.connect("effects.db")  # the working directory: the worker's own disk
    db.execute("CREATE TABLE IF NOT EXISTS pending (ref TEXT PRIMARY KEY, key TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS done (ref TEXT PRIMARY KEY, receipt TEXT)")
    db.commit()
    return db


def record_receipt(db: sqlite3.Connection, ref: str, receipt: str | None) -> None:
    with db:
        db.execute("INSERT OR REPLACE INTO done (ref, receipt) VALUES (?, ?)", (ref, receipt))


def forget_key(db: sqlite3.Connection, ref: str) -> None:
    with db:
        db.execute("DELETE FROM pending WHERE ref = ?", (ref,))


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> retrylab.Result:
    ref = args["ref"]
    db = connect()
    row = db.execute("SELECT receipt FROM done WHERE ref = ?", (ref,)).fetchone()
    if row is not None:
        return retrylab.ok(receipt=row[0])
    row = db.execute("SELECT key FROM pending WHERE ref = ?", (ref,)).fetchone()
    if row is not None:
        key = row[0]
    else:
        key = str(uuid.uuid4())
        with db:
            db.execute("INSERT INTO pending (ref, key) VALUES (?, ?)", (ref, key))
    attempts = ctx.config["attempts"]
    for attempt in range(1, attempts + 1):
        try:
            r = http.post(
                "/v1/resources",
                json={"ref": ref, "tenant": args["tenant"]},
                headers={"Idempotency-Key": key},
                timeout=ctx.config["timeout_ms"] / 1000,
            )
        except httpx.TransportError:
            if attempt < attempts:
                ctx.sleep(ctx.config["backoff_ms"] / 1000)
            continue
        if r.is_success:
            receipt = r.json().get("id")
            if CLEANUP_FIRST:
                forget_key(db, ref)
                record_receipt(db, ref, receipt)
            else:
                record_receipt(db, ref, receipt)
                forget_key(db, ref)
            db.close()
            return retrylab.ok(receipt=receipt)
        if r.status_code == 409:
            if attempt < attempts:
                ctx.sleep(ctx.config["backoff_ms"] / 1000)
            continue
        return retrylab.failed(f"{r.status_code} {r.text}")
    return retrylab.unknown(f"no answer after {attempts} attempts")


if __name__ == "__main__":
    retrylab.run()
