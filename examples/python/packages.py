"""A create tool written with one real retry package, as its users write it, for comparing
the package with the executor preset that models it (tests/package_presets.rs).

    retrylab trace MODEL --executor pkg="python examples/python/packages.py langgraph_httpx"

Packages (the preset each stands for):

- ``langgraph_httpx`` (``langgraph_py_httpx``): a one-node LangGraph graph whose node has
  ``RetryPolicy()`` and posts with httpx, ``raise_for_status()``; no key.
- ``langgraph_requests`` (``langgraph_py_requests``): the same node posting with requests.
- ``tenacity`` (``tenacity_default``): ``@tenacity.retry`` with no arguments around a post
  that makes its key inside (``uuid4``), ``raise_for_status()``.
- ``stamina`` (``stamina_default``): ``@stamina.retry(on=Exception)`` around the same post.
- ``openai`` (``openai_sdk``), ``anthropic`` (``anthropic_sdk``): the SDK's client, as
  shipped (2 retries, its timeout of 600 s), posting the create with its generic
  ``client.post`` (the same request path, retry loop and headers as its typed methods) over
  ``retrylab.httpx2.client()``.
- ``botocore`` (``aws_standard``; ``botocore_legacy``: ``aws_legacy``): an EC2 client's
  ``run_instances``, its ``ClientToken`` filled by botocore, its requests routed to the
  simulated EC2 API by ``retrylab.botocore.attach``; against the ``aws_ec2`` provider.

The httpx and requests clients time out after 5 s (the model's ``executor.timeout_ms``);
the SDKs keep their own timeouts (OpenAI and Anthropic 600 s, botocore 60 s, as their
presets). What the package raises last becomes a failed tool result, as the presets give
up (``failure``).
"""

import sys
import uuid
from typing import TypedDict

import anthropic
import botocore.config
import botocore.session
import openai

# Imported before the simulator's patches of time and randomness are installed, as a
# program's imports are.
import stamina
import tenacity
from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

import retrylab
import retrylab.botocore
import retrylab.httpx2

PACKAGE = sys.argv[1] if len(sys.argv) > 1 else ""
TIMEOUT_S = 5.0


def post_with_httpx(ref: str, tenant: str, key: str | None = None) -> dict:
    headers = {"Idempotency-Key": key} if key else {}
    response = retrylab.httpx_client(timeout=TIMEOUT_S).post(
        "/v1/resources", json={"ref": ref, "tenant": tenant}, headers=headers
    )
    response.raise_for_status()
    return response.json()


def post_with_requests(ref: str, tenant: str) -> dict:
    base = retrylab.provider_base_url() or "https://api.example.com"
    response = retrylab.requests_session().post(
        f"{base}/v1/resources", json={"ref": ref, "tenant": tenant}, timeout=TIMEOUT_S
    )
    response.raise_for_status()
    return response.json()


def langgraph_create(post):
    class State(TypedDict, total=False):
        ref: str
        tenant: str
        receipt: str

    def node(state: State) -> State:
        return {"receipt": post(state["ref"], state["tenant"])["id"]}

    graph = StateGraph(State)
    graph.add_node("create", node, retry_policy=RetryPolicy())
    graph.add_edge(START, "create")
    graph.add_edge("create", END)
    app = graph.compile()

    def create(ref: str, tenant: str) -> str:
        return app.invoke({"ref": ref, "tenant": tenant})["receipt"]

    return create


def tenacity_create():
    @tenacity.retry
    def create(ref: str, tenant: str) -> str:
        return post_with_httpx(ref, tenant, key=str(uuid.uuid4()))["id"]

    return create


def stamina_create():
    @stamina.retry(on=Exception)
    def create(ref: str, tenant: str) -> str:
        return post_with_httpx(ref, tenant, key=str(uuid.uuid4()))["id"]

    return create


def sdk_create(sdk_class):
    def create(ref: str, tenant: str) -> str:
        sdk = sdk_class(
            api_key="sk-retrylab",
            base_url=retrylab.provider_base_url() or "https://api.example.com",
            http_client=retrylab.httpx2.client(),
        )
        answer = sdk.post("/v1/resources", cast_to=object, body={"ref": ref, "tenant": tenant})
        return answer["id"]

    return create


def ec2_create(mode: str):
    def create(ref: str, tenant: str) -> str:
        ec2 = botocore.session.get_session().create_client(
            "ec2",
            region_name="us-east-1",
            endpoint_url=retrylab.provider_base_url() or None,
            aws_access_key_id="AKIDRETRYLAB",
            aws_secret_access_key="retrylab",
            config=botocore.config.Config(retries={"mode": mode}),
        )
        retrylab.botocore.attach(ec2)
        answer = ec2.run_instances(
            ImageId="ami-12345678",
            MinCount=1,
            MaxCount=1,
            TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "ref", "Value": ref}]}],
        )
        return answer["Instances"][0]["InstanceId"]

    return create


CREATE = {
    "langgraph_httpx": lambda: langgraph_create(post_with_httpx),
    "langgraph_requests": lambda: langgraph_create(post_with_requests),
    "tenacity": tenacity_create,
    "stamina": stamina_create,
    "openai": lambda: sdk_create(openai.OpenAI),
    "anthropic": lambda: sdk_create(anthropic.Anthropic),
    "botocore": lambda: ec2_create("standard"),
    "botocore_legacy": lambda: ec2_create("legacy"),
}


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> retrylab.Result:
    try:
        receipt = CREATE[PACKAGE]()(args["ref"], args["tenant"])
    except Exception as e:  # the package gave up: its last error
        return retrylab.failed(f"{type(e).__name__}: {e}")
    return retrylab.ok(receipt=receipt)


if __name__ == "__main__":
    if PACKAGE not in CREATE:
        sys.exit(f"usage: packages.py {{{','.join(CREATE)}}}")
    retrylab.run()
