"""The idempotency-key journal in SQLite, with a connection per call: the handler opens
`journal.db` (a relative path: the worker's disk), records the key of the requested ticket
before the first send, and closes it. httpx and tenacity; tenacity's resend, the agent's
replan and a restarted process all read the same key back.
"""

import sqlite3
import uuid
from contextlib import closing

import httpx
import tenacity

import retrylab

DB_PATH = "journal.db"

http = retrylab.httpx_client(timeout=5.0)


def idempotency_key(tenant: str, ref: str) -> str:
    with closing(sqlite3.connect(DB_PATH)) as conn:
        with conn:  # one transaction, committed before the first send
            conn.execute(
                "CREATE TABLE IF NOT EXISTS keys (tenant TEXT, ref TEXT, key TEXT, PRIMARY KEY (tenant, ref))"
            )
            conn.execute(
                "INSERT OR IGNORE INTO keys (tenant, ref, key) VALUES (?, ?, ?)",
                (tenant, ref, str(uuid.uuid4())),
            )
        (key,) = conn.execute("SELECT key FROM keys WHERE tenant = ? AND ref = ?", (tenant, ref)).fetchone()
        return key


@tenacity.retry(
    retry=tenacity.retry_if_exception_type(httpx.TimeoutException),
    stop=tenacity.stop_after_attempt(3),
    wait=tenacity.wait_exponential(multiplier=0.1),
    reraise=True,
)
def post_ticket(ref: str, tenant: str, key: str) -> dict:
    response = http.post(
        "/v1/resources",
        json={"ref": ref, "tenant": tenant},
        headers={"Idempotency-Key": key},
    )
    response.raise_for_status()
    return response.json()


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    key = idempotency_key(args["tenant"], args["ref"])
    return post_ticket(args["ref"], args["tenant"], key)


if __name__ == "__main__":
    retrylab.run()
