"""An idempotency key per tool call minted by SQLite, `lower(hex(randomblob(16)))`, as a team
does whose code already talks to SQLite (here an in-memory database opened for the call).
httpx and tenacity; tenacity's resend after a timeout carries the same key.
"""

import sqlite3
from contextlib import closing

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def new_key() -> str:
    with closing(sqlite3.connect(":memory:")) as db:
        (key,) = db.execute("SELECT lower(hex(randomblob(16)))").fetchone()
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
    return post_ticket(args["ref"], args["tenant"], new_key())


if __name__ == "__main__":
    retrylab.run()
