"""Resends a create under the same key with a body that changed between the attempts (a
timestamp): a real provider refuses the resend as a mismatch; retrylab warns that its
provider compares only the reference."""

import time
import uuid

import httpx

import retrylab

http = retrylab.httpx_client(timeout=5.0)


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> retrylab.Result:
    key = str(uuid.uuid4())
    for _ in range(2):
        try:
            r = http.post(
                "/v1/resources",
                json={"ref": args["ref"], "sent_at": time.time()},
                headers={"Idempotency-Key": key},
            )
        except httpx.TimeoutException:
            continue
        return retrylab.ok(receipt=r.json()["id"])
    return retrylab.unknown("timed out twice")


if __name__ == "__main__":
    retrylab.run()
