"""An idempotency key per tool call read from the kernel's
/proc/sys/kernel/random/uuid, the way shell scripts and code without dependencies get a
UUID. httpx and tenacity; tenacity's resend after a timeout carries the same key.

The file is the kernel's: retrylab serves getrandom, /dev/urandom and /dev/random from the
run's seed, not this file, so two runs of the same inputs send different keys, and the
determinism check refuses the executor.
"""

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def new_key() -> str:
    with open("/proc/sys/kernel/random/uuid") as f:
        return f.read().strip()


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
