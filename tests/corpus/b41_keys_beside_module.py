"""b41_json_key_file.py with the keys file kept next to the module, named at import from
`__file__` as scripts often name their data files: `Path(__file__).with_name(...)`, read and
written in the handler.
"""

import json
import uuid
from pathlib import Path

import retrylab

KEYS_FILE = Path(__file__).with_name("b41_ticket_keys.json")

http = retrylab.httpx_client(timeout=5.0)


def idempotency_key(tenant: str, ref: str) -> str:
    keys = json.loads(KEYS_FILE.read_text()) if KEYS_FILE.exists() else {}
    name = f"{tenant}/{ref}"
    if name not in keys:
        keys[name] = str(uuid.uuid4())
        KEYS_FILE.write_text(json.dumps(keys, indent=2, sort_keys=True))
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
