"""Async mode (retrylab.run(mode="async")) through the fake simulator: several calls in
flight, answers by msg_id, idle at the end of each turn, virtual asyncio time, cancel and
reset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakesim import ANY, FakeSim

ASYNC_APP = Path(__file__).resolve().parent / "executors" / "async_app.py"
TOOLS = ["create", "clock", "wait_for", "gather", "stubborn", "blocking", "plain"]


@pytest.fixture
def asim(sim_factory: object) -> FakeSim:
    s: FakeSim = sim_factory(ASYNC_APP)  # type: ignore[operator]
    hello = s.handshake(mode="async")
    assert hello["tools"] == TOOLS
    s.start()
    return s


def create(sim: FakeSim, call: str, auth: str, now_ms: int) -> dict:
    sim.invoke(call, "create", {"ref": f"r-{call}", "tenant": "t0", "authorization": auth}, now_ms=now_ms)
    sim.kv_round(op="get", key=f"key:{auth}")
    sim.kv_round(op="put", key=f"key:{auth}")
    return sim.expect("http", call=call, method="POST", url="http://provider.sim/v1/resources")


def test_two_calls_in_flight_answered_out_of_order(asim: FakeSim) -> None:
    first = create(asim, "c1", "a1", 10)
    asim.expect("idle")
    second = create(asim, "c2", "a2", 20)
    asim.expect("idle")
    assert first["headers"]["idempotency-key"] != second["headers"]["idempotency-key"]
    asim.http_respond(second, 201, {"id": "res_0", "ref": "r-c2"}, after_ms=30)
    asim.expect("result", call="c2", issue=1, outcome="ok", receipt="res_0")
    asim.expect("idle")
    asim.http_respond(first, 201, {"id": "res_1", "ref": "r-c1"}, after_ms=5)
    asim.expect("result", call="c1", issue=1, outcome="ok", receipt="res_1")
    asim.expect("idle")
    assert asim.shutdown() == 0


def test_a_timeout_retries_with_the_stored_key_after_a_virtual_sleep(asim: FakeSim) -> None:
    first = create(asim, "c1", "a1", 0)
    asim.expect("idle")
    asim.http_error(first, "read_timeout", after_ms=5000)
    sleep = asim.expect("sleep", ms=250)
    asim.expect("idle")
    asim.wake(sleep)
    again = asim.expect("http", call="c1")
    assert again["headers"]["idempotency-key"] == first["headers"]["idempotency-key"]
    asim.expect("idle")
    asim.http_respond(again, 201, {"id": "res_0"}, after_ms=40)
    asim.expect("result", call="c1", outcome="ok", receipt="res_0")
    asim.expect("idle")


def test_asyncio_time_is_the_virtual_clock(asim: FakeSim) -> None:
    asim.invoke("c1", "clock", {"s": 1.5}, now_ms=1000)
    sleep = asim.expect("sleep", ms=1500)
    asim.expect("idle")
    asim.wake(sleep)
    log = json.loads(asim.expect("log")["text"])
    assert log["before"] == [1.0, 1.0, 1000]
    assert log["after"] == [2.5, 2.5, 2500]
    asim.expect("result", call="c1", outcome="ok")
    asim.expect("idle")


def test_wait_for_is_a_timer_beside_the_request_and_a_late_answer_is_ignored(asim: FakeSim) -> None:
    asim.invoke("c1", "wait_for", {"timeout_s": 0.5}, now_ms=0)
    # asyncio.wait_for arms its timer, then the request is sent from the inner task.
    timer = asim.expect("sleep", ms=500)
    request = asim.expect("http", call="c1", method="GET")
    asim.expect("idle")
    asim.wake(timer)
    asim.expect("result", call="c1", outcome="unknown", detail="wait_for timed out")
    asim.expect("idle")
    asim.http_respond(request, 200, {"id": "res_0"}, after_ms=100)
    asim.expect("idle")


def test_gather_has_two_requests_of_one_call_outstanding(asim: FakeSim) -> None:
    asim.invoke("c1", "gather", {}, now_ms=0)
    a = asim.expect("http", url="http://provider.sim/v1/resources/res_0")
    b = asim.expect("http", url="http://provider.sim/v1/resources/res_1")
    asim.expect("idle")
    asim.http_respond(b, 404, {"error": "not_found"}, after_ms=10)
    asim.expect("idle")
    asim.http_respond(a, 200, {"id": "res_0"}, after_ms=10)
    asim.expect("log", text="200 404")
    asim.expect("result", call="c1", outcome="ok", receipt="res_0")
    asim.expect("idle")


def test_cancel_cancels_the_task_which_claims_unknown(asim: FakeSim) -> None:
    request = create(asim, "c1", "a1", 0)
    asim.expect("idle")
    asim.send({"type": "cancel", "call": "c1", "issue": 1, "now_ms": 60000})
    asim.expect("result", call="c1", issue=1, outcome="unknown", detail="cancelled")
    asim.expect("idle")
    # The answer to the abandoned request still comes, and is ignored.
    asim.http_respond(request, 201, {"id": "res_0"})
    asim.expect("idle")
    # A cancel for a call that is over is only recorded.
    asim.send({"type": "cancel", "call": "c1", "issue": 1, "now_ms": 60001})
    asim.expect("idle")


def test_a_handler_may_catch_its_cancellation(asim: FakeSim) -> None:
    asim.invoke("c1", "stubborn", {}, now_ms=0)
    asim.expect("http")
    asim.expect("idle")
    asim.send({"type": "cancel", "call": "c1", "issue": 1, "now_ms": 100})
    asim.kv_round(op="put", key="stubborn", value="cancelled")
    asim.expect("result", call="c1", outcome="unknown", detail="cancelled, and said so")
    asim.expect("idle")


def test_without_cancel_tasks_a_cancel_only_sets_the_flag(sim_factory: object) -> None:
    sim: FakeSim = sim_factory(ASYNC_APP, args=["--keep-tasks"])  # type: ignore[operator]
    sim.handshake(mode="async")
    sim.start()
    request = create(sim, "c1", "a1", 0)
    sim.expect("idle")
    sim.send({"type": "cancel", "call": "c1", "issue": 1, "now_ms": 60000})
    sim.expect("idle")
    sim.http_respond(request, 201, {"id": "res_0"})
    sim.expect("result", call="c1", outcome="ok", receipt="res_0")
    sim.expect("idle")


def test_a_reset_abandons_every_blocked_task(asim: FakeSim) -> None:
    create(asim, "c1", "a1", 0)
    asim.expect("idle")
    asim.invoke("c2", "clock", {"s": 10}, now_ms=5)
    asim.expect("sleep", ms=10000)
    asim.expect("idle")
    asim.start(reset=True, seed=7)  # expects ready: nothing of the old run is sent
    asim.invoke("c1", "clock", {"s": 1}, now_ms=0)
    sleep = asim.expect("sleep", ms=1000, msg_id=1)  # message ids start again
    asim.expect("idle")
    asim.wake(sleep)
    log = json.loads(asim.expect("log")["text"])
    assert log["seen"] == []  # on_reset ran
    asim.expect("result", call="c1", outcome="ok")
    asim.expect("idle")


def test_plain_functions_and_the_store_work_in_async_mode(asim: FakeSim) -> None:
    asim.invoke("c1", "plain", {}, now_ms=0)
    asim.kv_round(op="put", key="plain", value="yes")
    asim.expect("result", call="c1", outcome="ok")
    asim.expect("idle")


@pytest.mark.parametrize(
    ("what", "says"),
    [
        ("sleep", "time.sleep(1.0) (or ctx.sleep) in async mode would block the event loop"),
        ("http", "a synchronous HTTP request (GET http://provider.sim/v1/resources/res_0) in async mode"),
    ],
)
def test_blocking_calls_are_refused_with_the_async_form(asim: FakeSim, what: str, says: str) -> None:
    asim.invoke("c1", "blocking", {"what": what}, now_ms=0)
    result = asim.expect("result", call="c1", outcome="unknown", detail=ANY)
    assert says in result["detail"], result["detail"]
    asim.expect("idle")


def test_an_answer_to_nothing_outstanding_is_a_protocol_error(asim: FakeSim) -> None:
    asim.send({"type": "wake", "in_reply_to": 42, "now_ms": 10})
    assert asim.expect_eof() != 0
    assert "`wake` in reply to no outstanding sleep" in asim.stderr()


def test_async_handlers_need_async_mode(sim_factory: object) -> None:
    sim: FakeSim = sim_factory(ASYNC_APP, args=["sync"])  # type: ignore[operator]
    assert sim.expect_eof() != 0
    assert "the handler of tool 'create' is an `async def`: serve it with retrylab.run(mode=\"async\")" in sim.stderr()
