"""b41_home_cache_keys.py with the cache path resolved in the handler, at each call:
`os.path.expanduser("~/.cache/ticket-tool/keys.json")`.
"""

import json
import os
import uuid

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def idempotency_key(tenant: str, ref: str) -> str:
    path = os.path.expanduser("~/.cache/ticket-tool/keys.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path) as f:
            keys = json.load(f)
    except FileNotFoundError:
        keys = {}
    name = f"{tenant}/{ref}"
    if name not in keys:
        keys[name] = str(uuid.uuid4())
        with open(path, "w") as f:
            json.dump(keys, f)
    return keys[name]


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    key = idempotency_key(args["tenant"], args["ref"])
    response = http.post(
        "/v1/resources",
        json={"ref": args["ref"], "tenant": args["tenant"]},
        headers={"Idempotency-Key": key},
    )
    response.raise_for_status()
    return response.json()


if __name__ == "__main__":
    retrylab.run()
