"""module_dict_key.py with the key kept where a crash cannot take it: the worker's durable
store (`ctx.kv`), written before the first send. The restarted worker that is handed the
call again reads the key back and resends it, and the provider replays the first ticket.
"""

import uuid

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def idempotency_key(ctx: retrylab.Context, tenant: str, authorization: str) -> str:
    name = f"key:{tenant}:{authorization}"
    key = ctx.kv.get(name)
    if key is None:
        key = str(uuid.uuid4())
        ok, current, _ = ctx.kv.cas(name, 0, key)
        key = key if ok else current
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
    key = idempotency_key(ctx, args["tenant"], args["authorization"])
    return post_ticket(args["ref"], args["tenant"], key)


if __name__ == "__main__":
    retrylab.run()
