"""A ticket tool that makes the agent's replan safe: the idempotency key of each requested
ticket is kept in a JSON file next to the process (`idempotency_keys.json`, opened with a
relative path), so that the agent's second call for the same ticket sends the key of the
first and the provider replays it. Every created ticket is appended to a receipt log
(`receipts.log`). httpx, one attempt per call: the agent is the retry layer.

Deployed, the file is on the worker's disk: it outlives a crash of the process.
"""

import json
import os
import uuid

import retrylab

KEYS_FILE = "idempotency_keys.json"
RECEIPT_LOG = "receipts.log"

http = retrylab.httpx_client(timeout=5.0)


def load_keys() -> dict[str, str]:
    try:
        with open(KEYS_FILE) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def save_keys(keys: dict[str, str]) -> None:
    tmp = KEYS_FILE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(keys, f, indent=2, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, KEYS_FILE)


def idempotency_key(tenant: str, ref: str) -> str:
    keys = load_keys()
    name = f"{tenant}/{ref}"
    if name not in keys:
        keys[name] = str(uuid.uuid4())
        save_keys(keys)
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
    ticket = response.json()
    with open(RECEIPT_LOG, "a") as log:
        log.write(f"{args['tenant']} {args['ref']} {key} {ticket['id']}\n")
    return ticket


if __name__ == "__main__":
    retrylab.run()
