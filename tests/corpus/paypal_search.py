"""A PayPal Orders tool that checks before it resends: one `PayPal-Request-Id` per
authorized action, kept in the store; after a timeout it looks the order up by its
reference (`GET /v2/checkout/orders?reference_id=...`) and, if none is listed, sends the
create again under the same request id. Orders v2 has no search: the lookup is answered
404, which the tool reads as "not found".
"""

import json
import uuid

import httpx

import retrylab

http = retrylab.httpx_client(timeout=5.0)


def request_id(ctx: retrylab.Context, tenant: str, authorization: str) -> str:
    name = f"paypal-request-id:{tenant}:{authorization}"
    key = ctx.kv.get(name)
    if key is None:
        key = str(uuid.uuid4())
        ok, current, _ = ctx.kv.cas(name, 0, key)
        key = key if ok else current
    return key


def find_order(ref: str) -> dict | None:
    response = http.get("/v2/checkout/orders", params={"reference_id": ref})
    if response.status_code == 404:
        return None
    response.raise_for_status()
    orders = response.json().get("orders", [])
    return orders[0] if orders else None


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    key = request_id(ctx, args["tenant"], args["authorization"])
    body = {"intent": "CAPTURE", "purchase_units": [{"reference_id": args["ref"]}]}
    for attempt in range(3):
        if attempt:
            ctx.sleep(0.2 * 2 ** (attempt - 1))
            found = find_order(args["ref"])
            if found is not None:
                return found
        try:
            response = http.post(
                "/v2/checkout/orders",
                content=json.dumps(body),
                headers={"Content-Type": "application/json", "PayPal-Request-Id": key},
            )
        except httpx.TimeoutException:
            continue
        response.raise_for_status()
        return response.json()
    raise TimeoutError(f"no answer for {args['ref']} after 3 attempts")


if __name__ == "__main__":
    retrylab.run()
