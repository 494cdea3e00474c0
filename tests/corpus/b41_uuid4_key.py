"""b41_sqlite_randomblob_key.py with the key from `uuid.uuid4().hex`: an idempotency key per
tool call, which tenacity's resend after a timeout carries.
"""

import uuid

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def new_key() -> str:
    return uuid.uuid4().hex


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
