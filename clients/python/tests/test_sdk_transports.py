"""retrylab.httpx2 and retrylab.botocore under the fake simulator: each request is an
``http`` message, and each transport error is raised as the library raises it on a real
network."""

from __future__ import annotations

import json

import pytest
from conftest import HERE, HTTPX_ERRORS

pytest.importorskip("httpx2")
pytest.importorskip("botocore")

SDK_APP = HERE / "executors" / "sdk_app.py"


@pytest.fixture
def sdk_sim(sim_factory):  # type: ignore[no-untyped-def]
    s = sim_factory(SDK_APP)
    s.handshake()
    s.start()
    return s


def test_httpx2_requests_are_messages_and_errors_are_httpx2s(sdk_sim) -> None:
    sdk_sim.invoke("c1", "httpx2_errors", {})
    post = sdk_sim.expect("http", method="POST", url="http://provider.sim/v1/resources", timeout_ms=5000)
    assert json.loads(post["body"]) == {"ref": "a"}
    sdk_sim.http_respond(post, 201, json.dumps({"id": "res_0"}), headers={"content-type": "application/json"}, after_ms=5)
    sdk_sim.expect("log", text="answer 201 {'id': 'res_0'}")
    for error, text in HTTPX_ERRORS.items():
        get = sdk_sim.expect("http", method="GET", url="http://provider.sim/v1/resources/res_0")
        sdk_sim.http_error(get, error, after_ms=5)
        sdk_sim.expect("log", text=text)
    sdk_sim.expect("result", call="c1", outcome="ok")
    assert sdk_sim.shutdown() == 0


def test_botocore_requests_are_messages_and_errors_are_botocores(sdk_sim) -> None:
    sdk_sim.invoke("c1", "botocore_errors", {})
    expected = {
        "connect_timeout": "ConnectTimeoutError",
        "refused": "EndpointConnectionError",
        "read_timeout": "ReadTimeoutError",
        "reset": "ConnectionClosedError",
    }
    for error, name in expected.items():
        call = sdk_sim.expect("http", method="POST", url="http://provider.sim/", timeout_ms=7000)
        assert "Action=DescribeInstances" in call["body"]
        assert call["headers"]["authorization"].startswith("AWS4-HMAC-SHA256 ")
        sdk_sim.http_error(call, error, after_ms=5)
        sdk_sim.expect("log", text=name)
    sdk_sim.expect("result", call="c1", outcome="ok")
    assert sdk_sim.shutdown() == 0
