"""b41_budget_monotonic.py with the clock bound by `from time import monotonic` among the
standard-library imports, before `retrylab` is imported (isort's order); the pause is
`time.sleep`.
"""

import time
import uuid
from time import monotonic

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
    deadline = monotonic() + BUDGET_S
    while True:
        remaining = deadline - monotonic()
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
        if deadline - monotonic() < PAUSE_S:
            raise BudgetSpent(f"no answer within {BUDGET_S} s")
        time.sleep(PAUSE_S)


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))


if __name__ == "__main__":
    retrylab.run()
