"""An idempotency key per tool call hashed from the process id, the clock and a counter:
"unique across workers and restarts", as teams write it when they want no dependency.
httpx and tenacity; tenacity's resend after a timeout carries the same key.

The clock is virtual and the counter is the process's, but the process id is the machine's:
two runs of the same inputs send different keys, and the determinism check refuses the
executor.
"""

import hashlib
import itertools
import os
import time

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


_sequence = itertools.count()


def new_key() -> str:
    seed = f"{os.getpid()}-{time.time_ns()}-{next(_sequence)}"
    return hashlib.sha256(seed.encode()).hexdigest()[:32]


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
