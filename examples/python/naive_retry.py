"""What an agent developer writes first: an httpx client and tenacity, retrying a timed-out
create, with no idempotency key.

Under retrylab (`retrylab run models/ticket_lost_response.json --executor
naive=".venv/bin/python examples/python/naive_retry.py"`), the lost reply of the seeds'
model makes tenacity send the create again: the provider cannot tell the retry from a new
ticket, and every seed ends with two tickets, as the built-in `no_dedup` design does.
"""

import httpx
import tenacity

import retrylab

# In production: retrylab.httpx_client(base_url="https://tickets.example.com", timeout=5.0)
# is a plain httpx.Client; under the simulator its transport is the simulated network.
http = retrylab.httpx_client(timeout=5.0)


@tenacity.retry(
    retry=tenacity.retry_if_exception_type(httpx.TimeoutException),
    stop=tenacity.stop_after_attempt(3),
    wait=tenacity.wait_exponential(multiplier=0.1),
    reraise=True,
)
def post_ticket(ref: str, tenant: str) -> dict:
    response = http.post("/v1/resources", json={"ref": ref, "tenant": tenant})
    response.raise_for_status()
    return response.json()


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    return post_ticket(args["ref"], args["tenant"])


if __name__ == "__main__":
    retrylab.run()
