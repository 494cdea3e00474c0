"""An executor for the SDK transports' tests (retrylab.httpx2, retrylab.botocore) under
the fake simulator: each tool sends one request per transport error and logs what the
library raised."""

from __future__ import annotations

import botocore.config
import botocore.session
import httpx2

import retrylab
import retrylab.botocore
import retrylab.httpx2


@retrylab.tool("httpx2_errors")
def httpx2_errors(args: dict, ctx: retrylab.Context) -> None:
    http = retrylab.httpx2.client(timeout=5.0)
    r = http.post(f"{retrylab.provider_base_url()}/v1/resources", json={"ref": "a"})
    ctx.log(f"answer {r.status_code} {r.json()}")
    for _ in range(4):
        try:
            http.get(f"{retrylab.provider_base_url()}/v1/resources/res_0")
        except httpx2.TransportError as e:
            ctx.log(f"{type(e).__name__}: {e}")


@retrylab.tool("botocore_errors")
def botocore_errors(args: dict, ctx: retrylab.Context) -> None:
    ec2 = botocore.session.get_session().create_client(
        "ec2",
        region_name="us-east-1",
        endpoint_url=retrylab.provider_base_url(),
        aws_access_key_id="AKIDRETRYLAB",
        aws_secret_access_key="retrylab",
        config=botocore.config.Config(retries={"total_max_attempts": 1}, read_timeout=7),
    )
    retrylab.botocore.attach(ec2)
    for _ in range(4):
        try:
            ec2.describe_instances()
        except Exception as e:
            ctx.log(type(e).__name__)


if __name__ == "__main__":
    retrylab.run()
