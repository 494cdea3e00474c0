"""A ticket tool as a team first makes it safe to retry: httpx and tenacity, with an
idempotency key per authorized action kept in a module-level dict, so that tenacity's
resend after a timeout carries the key of the first send and the provider replays it.

The dict lives in the process: when the process dies after a send, the key dies with it,
and the restarted worker that is handed the call again mints another key. The provider
cannot tell that send from a new ticket.
"""

import uuid

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)

# (tenant, authorization) -> the idempotency key of that action.
_keys: dict[tuple[str, str], str] = {}


def idempotency_key(tenant: str, authorization: str) -> str:
    try:
        return _keys[(tenant, authorization)]
    except KeyError:
        key = _keys[(tenant, authorization)] = str(uuid.uuid4())
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
    key = idempotency_key(args["tenant"], args["authorization"])
    return post_ticket(args["ref"], args["tenant"], key)


if __name__ == "__main__":
    retrylab.run()
