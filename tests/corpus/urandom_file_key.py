"""An idempotency key per tool call, read from /dev/urandom with open(): the way code
written before `secrets` existed (or ported from C) gets its random bytes. httpx and
tenacity; tenacity's resend after a timeout carries the same key.

Under the simulator, retrylab's shim serves reads of /dev/urandom from the run's seed, as
it serves getrandom (issue 41): the executor is a function of its messages and is judged by
its figures, as deployed, where the key is as unique.
"""

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def new_key() -> str:
    with open("/dev/urandom", "rb") as f:
        return f.read(16).hex()


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
