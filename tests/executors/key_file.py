"""A tool that keeps its idempotency key per reference in a JSON file in its working
directory (the worker's own disk), written before the first send; a redelivered call finds
the key there and sends it again.

Written and closed, the file survives the process's death (the kernel has the bytes) but not
the loss of the machine: nothing told the disk to keep them. `python key_file.py fsync`
flushes and fsyncs the file before the send, as a team does once it has been bitten
(tests/corpus_below.rs, `workers.crash.machine_loss`).
"""

import json
import os
import sys
import uuid

import httpx

import retrylab

FSYNC = sys.argv[1:] == ["fsync"]

http = retrylab.httpx_client()


def load_keys() -> dict:
    try:
        with open("keys.json") as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def save_keys(keys: dict) -> None:
    with open("keys.json", "w") as f:
        json.dump(keys, f)
        if FSYNC:
            f.flush()
            os.fsync(f.fileno())


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> retrylab.Result:
    ref = args["ref"]
    keys = load_keys()
    if ref not in keys:
        keys[ref] = str(uuid.uuid4())
        save_keys(keys)
    attempts = ctx.config["attempts"]
    for attempt in range(1, attempts + 1):
        try:
            r = http.post(
                "/v1/resources",
                json={"ref": ref, "tenant": args["tenant"]},
                headers={"Idempotency-Key": keys[ref]},
                timeout=ctx.config["timeout_ms"] / 1000,
            )
        except httpx.TransportError:
            if attempt < attempts:
                ctx.sleep(ctx.config["backoff_ms"] / 1000)
            continue
        if r.is_success:
            return retrylab.ok(receipt=r.json().get("id"))
        if r.status_code == 409 and attempt < attempts:
            ctx.sleep(ctx.config["backoff_ms"] / 1000)
            continue
        return retrylab.unknown(f"{r.status_code} {r.text}")
    return retrylab.unknown(f"no answer after {attempts} attempts")


if __name__ == "__main__":
    retrylab.run()
