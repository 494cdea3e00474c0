"""A ticket tool that stages each request in a scratch directory before sending it, as a
team does that renders the ticket's body (or an attachment) to disk: `tempfile.mkdtemp()`
for the call's workspace, the JSON body written to a `NamedTemporaryFile` in it, read back
and posted, the workspace removed afterwards. httpx and tenacity, an idempotency key per
call that tenacity's resend carries.
"""

import json
import shutil
import tempfile
import uuid
from pathlib import Path

import httpx
import tenacity

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def render_body(workspace: Path, ref: str, tenant: str) -> Path:
    with tempfile.NamedTemporaryFile(
        "w", dir=workspace, prefix="ticket-", suffix=".json", delete=False
    ) as f:
        json.dump({"ref": ref, "tenant": tenant}, f)
        return Path(f.name)


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
    workspace = Path(tempfile.mkdtemp(prefix="create-"))
    try:
        body = render_body(workspace, args["ref"], args["tenant"]).read_bytes()
        return post_ticket(body, str(uuid.uuid4()))
    finally:
        shutil.rmtree(workspace)


if __name__ == "__main__":
    retrylab.run()
