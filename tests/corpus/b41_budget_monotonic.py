"""A ticket tool with a retry budget: the create is retried until 2.5 s are spent, each
attempt given what is left of the budget as its timeout (at most 2 s), with a 400 ms pause
between attempts; an idempotency key per call, which every attempt carries. The budget is
measured with `time.monotonic()`.

The control of the b41_budget_* corpus: the same budget measured on other clocks.
"""

import time
import uuid

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
    deadline = time.monotonic() + BUDGET_S
    while True:
        remaining = deadline - time.monotonic()
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
        if deadline - time.monotonic() < PAUSE_S:
            raise BudgetSpent(f"no answer within {BUDGET_S} s")
        time.sleep(PAUSE_S)


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))


if __name__ == "__main__":
    retrylab.run()
