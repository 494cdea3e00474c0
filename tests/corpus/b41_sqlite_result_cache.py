"""A result cache in SQLite in front of the ticket API: the provider's answer to a create is
stored per ticket reference (`cache.db`, a connection per call), and a call for a reference
already answered returns the stored ticket without calling the provider (the agent calling
the tool twice for the same thing gets the same ticket). httpx and tenacity, an
idempotency key per call that tenacity's resend carries.
"""

import json
import sqlite3
import uuid
from contextlib import closing

import httpx
import tenacity

import retrylab

CACHE_DB = "cache.db"

http = retrylab.httpx_client(timeout=5.0)


def cached(ref: str) -> dict | None:
    with closing(sqlite3.connect(CACHE_DB)) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS answers (ref TEXT PRIMARY KEY, body TEXT NOT NULL)")
        row = conn.execute("SELECT body FROM answers WHERE ref = ?", (ref,)).fetchone()
    return None if row is None else json.loads(row[0])


def remember(ref: str, answer: dict) -> None:
    with closing(sqlite3.connect(CACHE_DB)) as conn, conn:
        conn.execute("INSERT OR REPLACE INTO answers (ref, body) VALUES (?, ?)", (ref, json.dumps(answer)))


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
    hit = cached(args["ref"])
    if hit is not None:
        ctx.receipt = hit["id"]
        return hit
    answer = post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))
    remember(args["ref"], answer)
    return answer


if __name__ == "__main__":
    retrylab.run()
