"""stripe-python's own client creating a customer, under the simulated Stripe v1 API.

The SDK is used as shipped: `StripeClient`, its `RequestsClient` over a `requests` session,
its own idempotency keys (drawn from `os.urandom` for every POST, and reused by the SDK's
own network retries), its retry rules (timeouts, 409, 5xx) and its backoff with jitter.
Only the session is retrylab's, so that its requests reach the simulated provider
(`retrylab.requests_session()`, a plain `requests.Session` outside the simulator).

    retrylab run models/ticket_lost_response.json --provider stripe_v1 \\
      --executor shipped="python examples/python/stripe_sdk.py" \\
      --executor retries="python examples/python/stripe_sdk.py --max-network-retries 2 --timeout 20"

- As shipped (`StripeClient()` makes no network retry; the request timeout is 80 s), the
  lost reply reaches the agent as a failure of unknown outcome; its replan is a new SDK
  call, with a new key, and the provider creates a second customer: 2 on every seed, the
  seeds' `new_key_after_replan` line, reproduced by the real SDK.
- With `max_network_retries=2` and a request timeout (20 s) below the agent's tool timeout
  (60 s), the SDK's own retry resends the create with the same key before the agent gives
  up: Stripe replays the first answer, and there is one customer.
"""

import argparse

import stripe

import retrylab

parser = argparse.ArgumentParser()
parser.add_argument("--max-network-retries", type=int, default=None)
parser.add_argument("--timeout", type=float, default=80.0, help="RequestsClient's timeout, seconds")
options = parser.parse_args()

_client: stripe.StripeClient | None = None


def client() -> stripe.StripeClient:
    """The SDK client, built for each run: it keeps the last request's id and duration
    (its telemetry header), which a new run must not see."""
    global _client
    if _client is None:
        _client = stripe.StripeClient(
            "sk_test_retrylab",
            base_addresses={"api": retrylab.provider_base_url() or "https://api.stripe.com"},
            http_client=stripe.RequestsClient(session=retrylab.requests_session(), timeout=options.timeout),
            max_network_retries=options.max_network_retries,
        )
    return _client


def forget_client() -> None:
    global _client
    _client = None


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> retrylab.Result:
    try:
        customer = client().v1.customers.create(params={"metadata": {"ref": args["ref"]}})
    except stripe.APIConnectionError as e:
        # A timeout or a broken connection: the create may have happened.
        return retrylab.unknown(f"APIConnectionError: {e.user_message}")
    except stripe.StripeError as e:
        status = e.http_status or 0
        if status >= 500 or status == 409:
            return retrylab.unknown(f"{status} {type(e).__name__}")
        # A 4xx other than a conflict: Stripe did not create anything.
        return retrylab.failed(f"{status} {type(e).__name__}: {e.user_message}")
    return retrylab.ok(receipt=customer.id)


if __name__ == "__main__":
    retrylab.run(on_reset=forget_client)
