"""b41_budget_monotonic.py with a wall-clock deadline: `datetime.now(timezone.utc)` plus
the budget (the `datetime` class imported before `retrylab`), what is left of it a
`timedelta`.
"""

import time
import uuid
from datetime import datetime, timedelta, timezone

import httpx

import retrylab

BUDGET_S = 2.5
ATTEMPT_TIMEOUT_S = 2.0
PAUSE_S = 0.4
RETRY_STATUSES = {409, 429, 500, 502, 503, 504}

http = retrylab.httpx_client()


class BudgetSpent(Exception):
    pass


def post_ticket(ref: str, tenant: str, key: str) -> dict:
    deadline = datetime.now(timezone.utc) + timedelta(seconds=BUDGET_S)
    while True:
        remaining = (deadline - datetime.now(timezone.utc)).total_seconds()
        try:
            response = http.post(
                "/v1/resources",
                json={"ref": ref, "tenant": tenant},
                headers={"Idempotency-Key": key},
                timeout=min(ATTEMPT_TIMEOUT_S, remaining),
            )
        except httpx.TimeoutException:
            pass
        else:
            if response.status_code not in RETRY_STATUSES:
                response.raise_for_status()
                return response.json()
        if (deadline - datetime.now(timezone.utc)).total_seconds() < PAUSE_S:
            raise BudgetSpent(f"no answer within {BUDGET_S} s")
        time.sleep(PAUSE_S)


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))


if __name__ == "__main__":
    retrylab.run()
