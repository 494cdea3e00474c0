"""b41_tempfile_body.py with its spool directory named once, at import, as module-level
settings usually are: `SPOOL = Path(tempfile.gettempdir()) / "ticket-tool"`, made (if
missing) in the handler.
"""

import json
import tempfile
import uuid
from pathlib import Path

import httpx
import tenacity

import retrylab

SPOOL = Path(tempfile.gettempdir()) / "ticket-tool"

http = retrylab.httpx_client(timeout=5.0)


@tenacity.retry(
    retry=tenacity.retry_if_exception_type(httpx.TimeoutException),
    stop=tenacity.stop_after_attempt(3),
    wait=tenacity.wait_exponential(multiplier=0.1),
    reraise=True,
)
def post_ticket(body: bytes, key: str) -> dict:
    response = http.post(
        "/v1/resources",
        content=body,
        headers={"Content-Type": "application/json", "Idempotency-Key": key},
    )
    response.raise_for_status()
    return response.json()


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    SPOOL.mkdir(parents=True, exist_ok=True)
    key = str(uuid.uuid4())
    spooled = SPOOL / f"{key}.json"
    spooled.write_text(json.dumps({"ref": args["ref"], "tenant": args["tenant"]}))
    try:
        return post_ticket(spooled.read_bytes(), key)
    finally:
        spooled.unlink()


if __name__ == "__main__":
    retrylab.run()
