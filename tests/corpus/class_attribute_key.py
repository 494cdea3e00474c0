"""The key kept in a class attribute: a small service class whose instances share one
table of in-flight keys (`TicketService.in_flight`), so that a retry, even through another
instance, resends the key of the first send. requests, with the session's own retry left at
its default, and a resend loop of the service's own on a timeout.

A class attribute is memory of the process: a crash after the send loses it, and the
restarted worker mints a new key for the same action.
"""

import time
import uuid

import requests

import retrylab


class TicketService:
    # Shared by every instance: (tenant, authorization) -> key.
    in_flight: dict[tuple[str, str], str] = {}

    def __init__(self, base_url: str, session: requests.Session) -> None:
        self.base_url = base_url
        self.session = session

    def key_for(self, tenant: str, authorization: str) -> str:
        return TicketService.in_flight.setdefault((tenant, authorization), str(uuid.uuid4()))

    def create(self, ref: str, tenant: str, authorization: str) -> dict:
        key = self.key_for(tenant, authorization)
        for attempt in range(3):
            if attempt:
                time.sleep(0.2 * 2 ** (attempt - 1))
            try:
                response = self.session.post(
                    f"{self.base_url}/v1/resources",
                    json={"ref": ref, "tenant": tenant},
                    headers={"Idempotency-Key": key},
                    timeout=5,
                )
            except requests.Timeout:
                continue
            response.raise_for_status()
            del TicketService.in_flight[(tenant, authorization)]  # done: forget the key
            return response.json()
        raise TimeoutError(f"no answer for {ref} after 3 attempts")


session = retrylab.requests_session()


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    service = TicketService(ctx.provider["base_url"], session)
    return service.create(args["ref"], args["tenant"], args["authorization"])


if __name__ == "__main__":
    retrylab.run()
