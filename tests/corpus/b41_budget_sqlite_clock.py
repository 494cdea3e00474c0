"""b41_budget_monotonic.py with the budget measured by SQLite's clock: each call is recorded
in a local audit table (`calls.db`, a connection per call) with its start stamped by
`julianday('now')`, and what is left of the budget is computed in SQL from the same clock
(rounded to the millisecond, the precision of SQLite's 'now').
"""

import sqlite3
import time
import uuid
from contextlib import closing

import httpx

import retrylab

BUDGET_S = 2.5
ATTEMPT_TIMEOUT_S = 2.0
PAUSE_S = 0.4
RETRY_STATUSES = {409, 429, 500, 502, 503, 504}

http = retrylab.httpx_client()


class BudgetSpent(Exception):
    pass


def remaining_s(db: sqlite3.Connection, key: str) -> float:
    (elapsed,) = db.execute(
        "SELECT round((julianday('now') - started) * 86400.0, 3) FROM calls WHERE key = ?", (key,)
    ).fetchone()
    return BUDGET_S - elapsed


def post_ticket(ref: str, tenant: str, key: str) -> dict:
    with closing(sqlite3.connect("calls.db")) as db:
        with db:
            db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, ref TEXT, started REAL)")
            db.execute("INSERT INTO calls (key, ref, started) VALUES (?, ?, julianday('now'))", (key, ref))
        while True:
            try:
                response = http.post(
                    "/v1/resources",
                    json={"ref": ref, "tenant": tenant},
                    headers={"Idempotency-Key": key},
                    timeout=min(ATTEMPT_TIMEOUT_S, remaining_s(db, key)),
                )
            except httpx.TimeoutException:
                pass
            else:
                if response.status_code not in RETRY_STATUSES:
                    response.raise_for_status()
                    return response.json()
            if remaining_s(db, key) < PAUSE_S:
                raise BudgetSpent(f"no answer within {BUDGET_S} s")
            time.sleep(PAUSE_S)


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))


if __name__ == "__main__":
    retrylab.run()
