"""b41_sqlite_result_cache.py with the answers in the client's store (`ctx.kv`) instead of
SQLite: the provider's answer to a create stored per ticket reference, returned without
calling the provider when present.
"""

import json
import uuid

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


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
    raw = ctx.kv.get(f"answer:{args['ref']}")
    if raw is not None:
        hit = json.loads(raw)
        ctx.receipt = hit["id"]
        return hit
    answer = post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))
    ctx.kv.put(f"answer:{args['ref']}", json.dumps(answer))
    return answer


if __name__ == "__main__":
    retrylab.run()
