"""The key held by a client object: a thin wrapper over requests, built once at import as
the module's API client, that remembers the last ticket it sent and its key, so that a
resend of the same ticket (its own retry after a timeout, or the agent calling the tool
again) reuses the key.

The object is memory of the process: a crash after the send takes `last_key` with it, and
the restarted worker's client sends the same ticket under a new key.
"""

import time
import uuid

import requests

import retrylab


class TicketsClient:
    def __init__(self, session: requests.Session, timeout_s: float = 5.0) -> None:
        self.session = session
        self.timeout_s = timeout_s
        self.base_url: str | None = None
        self.last_ref: str | None = None
        self.last_key: str | None = None

    def create_ticket(self, ref: str, tenant: str, attempts: int = 3) -> dict:
        if ref != self.last_ref:
            self.last_ref, self.last_key = ref, str(uuid.uuid4())
        error: Exception | None = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(0.2 * 2 ** (attempt - 1))
            try:
                response = self.session.post(
                    f"{self.base_url}/v1/resources",
                    json={"ref": ref, "tenant": tenant},
                    headers={"Idempotency-Key": self.last_key},
                    timeout=self.timeout_s,
                )
            except requests.Timeout as e:
                error = e
                continue
            response.raise_for_status()
            return response.json()
        assert error is not None
        raise error


tickets = TicketsClient(retrylab.requests_session())


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    tickets.base_url = ctx.provider["base_url"]
    return tickets.create_ticket(args["ref"], args["tenant"])


if __name__ == "__main__":
    retrylab.run()
