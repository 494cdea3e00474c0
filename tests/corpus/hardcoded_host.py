"""A ticket tool whose API address is configuration with a default, as teams write it:
`TICKETS_API`, else the production host. requests, with a key per call and a resend of
its own after a timeout. Nothing tells it the simulated provider's address, so its
requests go to the production host.
"""

import os
import time
import uuid

import requests

import retrylab

API = os.environ.get("TICKETS_API", "https://api.example.com")
session = retrylab.requests_session()


def post_ticket(ref: str, tenant: str, key: str) -> dict:
    for attempt in range(3):
        if attempt:
            time.sleep(0.2 * 2 ** (attempt - 1))
        try:
            response = session.post(
                f"{API}/v1/resources",
                json={"ref": ref, "tenant": tenant},
                headers={"Idempotency-Key": key},
                timeout=5,
            )
        except requests.Timeout:
            continue
        response.raise_for_status()
        return response.json()
    raise TimeoutError(f"no answer for {ref} after 3 attempts")


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"], str(uuid.uuid4()))


if __name__ == "__main__":
    retrylab.run()
