"""The idempotency-key journal in SQLite, with the connection opened once at import as most
examples of the sqlite3 module do: `conn = sqlite3.connect("journal.db")` and the table
created beside it. httpx and tenacity; the key of each requested ticket is reused by
tenacity's resend and by the agent's replan.
"""

import sqlite3
import uuid

import httpx
import tenacity

import retrylab

conn = sqlite3.connect("journal.db")
conn.execute("CREATE TABLE IF NOT EXISTS keys (tenant TEXT, ref TEXT, key TEXT, PRIMARY KEY (tenant, ref))")
conn.commit()

http = retrylab.httpx_client(timeout=5.0)


def idempotency_key(tenant: str, ref: str) -> str:
    with conn:
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
