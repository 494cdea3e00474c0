"""The idempotency keys kept in the user's cache directory, as command-line tools keep
theirs: `~/.cache/ticket-tool/keys.json` (named with `os.path.expanduser` at import), one
key per requested ticket, so that the agent's replan resends the key of the first call and
the provider replays it. httpx, one attempt per call.
"""

import json
import os
import uuid

import retrylab

CACHE_DIR = os.path.expanduser("~/.cache/ticket-tool")
KEYS_PATH = os.path.join(CACHE_DIR, "keys.json")

http = retrylab.httpx_client(timeout=5.0)


def idempotency_key(tenant: str, ref: str) -> str:
    os.makedirs(CACHE_DIR, exist_ok=True)
    try:
        with open(KEYS_PATH) as f:
            keys = json.load(f)
    except FileNotFoundError:
        keys = {}
    name = f"{tenant}/{ref}"
    if name not in keys:
        keys[name] = str(uuid.uuid4())
        with open(KEYS_PATH, "w") as f:
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
