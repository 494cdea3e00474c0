"""b41_json_key_file.py with the key in the client's store (`ctx.kv`) instead of a file:
the same tool, one attempt per call, the key of each requested ticket reused by the
agent's replan.
"""

import uuid

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def idempotency_key(ctx: retrylab.Context, tenant: str, ref: str) -> str:
    name = f"{tenant}/{ref}"
    key = ctx.kv.get(name)
    if key is None:
        key = str(uuid.uuid4())
        ctx.kv.put(name, key)
    return key


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    key = idempotency_key(ctx, args["tenant"], args["ref"])
    response = http.post(
        "/v1/resources",
        json={"ref": args["ref"], "tenant": args["tenant"]},
        headers={"Idempotency-Key": key},
    )
    response.raise_for_status()
    return response.json()


if __name__ == "__main__":
    retrylab.run()
