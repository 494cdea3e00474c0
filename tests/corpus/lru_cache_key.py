"""The key behind `functools.lru_cache`: "the same action gets the same key" written as a
memoized function of the action's identity. httpx and tenacity; tenacity's resend after a
timeout asks the cache again and gets the first key.

The cache is memory of the process: gone with it when the process dies after a send, and
the restarted worker's call computes a new key.
"""

import functools
import uuid

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


@functools.lru_cache(maxsize=4096)
def idempotency_key(tenant: str, authorization: str) -> str:
    return str(uuid.uuid4())


@tenacity.retry(
    retry=tenacity.retry_if_exception_type(httpx.TimeoutException),
    stop=tenacity.stop_after_attempt(3),
    wait=tenacity.wait_exponential(multiplier=0.1),
    reraise=True,
)
def post_ticket(ref: str, tenant: str, authorization: str) -> dict:
    response = http.post(
        "/v1/resources",
        json={"ref": ref, "tenant": tenant},
        headers={"Idempotency-Key": idempotency_key(tenant, authorization)},
    )
    response.raise_for_status()
    return response.json()


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"], args["authorization"])


if __name__ == "__main__":
    retrylab.run()
