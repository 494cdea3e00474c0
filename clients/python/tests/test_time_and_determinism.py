"""Virtual time (tenacity, sleeps, cancel while blocked, datetime) and seeded randomness
(reset, incarnations), through the fake simulator."""

from __future__ import annotations

import json
import uuid
from typing import Any

from fakesim import FakeSim


def test_tenacity_read_timeouts_sleep_exactly_and_stop_after_virtual_delay(sim: FakeSim) -> None:
    sim.invoke("c1", "create_retrying", {"ref": "r1", "tenant": "t0"}, now_ms=1000)
    sim.kv_round(op="get")
    sim.kv_round(op="cas")
    sleeps: list[int] = []
    https: list[dict[str, Any]] = []
    while True:
        msg = sim.recv()
        assert msg is not None, sim.stderr()
        if msg["type"] == "http":
            assert msg["timeout_ms"] == 5000
            https.append(msg)
            sim.http_error(msg, "read_timeout", after_ms=msg["timeout_ms"])
        elif msg["type"] == "sleep":
            sleeps.append(msg["ms"])
            sim.wake(msg)
        else:
            break
    # wait_exponential(multiplier=1): 1 s, 2 s, 4 s. Attempts start at 1, 7, 14 and 23 s;
    # the third fails at 19 s (18 s after the first began: go on), the fourth at 28 s (27 s:
    # stop_after_delay(20) stops). With the real clock tenacity would see ~0 s pass and retry on.
    assert sleeps == [1000, 2000, 4000]
    assert len(https) == 4
    assert len({h["headers"]["idempotency-key"] for h in https}) == 1
    assert msg == {"type": "log", "text": "attempts at monotonic [1.0, 7.0, 14.0, 23.0]"}
    sim.expect("result", call="c1", outcome="unknown", detail="RetryError after 4 attempts, last: ReadTimeout: timed out")
    assert sim.now_ms == 28000
    assert sim.shutdown() == 0


def test_a_cancel_while_blocked_in_http_sets_ctx_cancelled_and_the_wait_goes_on(sim: FakeSim) -> None:
    sim.invoke("c1", "wait_for_answer", {"ref": "r1"}, now_ms=1210)
    sim.expect("log", text="cancelled before=False")
    http = sim.expect("http", method="GET", url="http://provider.sim/v1/resources?ref=r1", timeout_ms=None)
    sim.send({"type": "cancel", "call": "c9", "issue": 1, "now_ms": 30000})  # another call's
    sim.send({"type": "cancel", "call": "c1", "issue": 1, "now_ms": 61210})
    sim.http_respond(http, 200, {"id": "res_4", "ref": "r1"}, after_ms=100)
    sim.expect("log", text="cancelled after=True")
    sim.expect("result", call="c1", issue=1, outcome="ok", receipt="res_4")
    # A cancel between turns, for a call still in the worker's queue.
    sim.send({"type": "cancel", "call": "c2", "issue": 1, "now_ms": 70000})
    sim.invoke("c2", "wait_for_answer", {"ref": "r2"}, now_ms=70000)
    sim.expect("log", text="cancelled before=True")
    sim.http_respond(sim.expect("http"), 404, {"error": "not_found"})
    sim.expect("log", text="cancelled after=True")
    sim.expect("result", call="c2", outcome="ok")  # a 404 body without an id: no receipt
    # A cancel of another issue of the same call does not cancel this one.
    sim.send({"type": "cancel", "call": "c3", "issue": 1, "now_ms": 80000})
    sim.invoke("c3", "wait_for_answer", {"ref": "r3"}, issue=2, now_ms=80000)
    sim.expect("log", text="cancelled before=False")
    sim.http_respond(sim.expect("http"), 200, {"id": "res_5"})
    sim.expect("log", text="cancelled after=False")
    sim.expect("result", call="c3", issue=2, outcome="ok", receipt="res_5")
    assert sim.shutdown() == 0


def test_the_clock_is_virtual(sim: FakeSim) -> None:
    sim.invoke("c1", "clock", {}, now_ms=1210)
    sleep = sim.expect("sleep", ms=250)
    sim.wake(sleep)
    log = sim.expect("log")
    values = json.loads(log["text"])
    assert values == {
        "now_utc": "2026-01-01T00:00:01.210000+00:00",
        "utcnow": "2026-01-01T00:00:01.210000",
        "today": "2026-01-01",
        "time": 1767225601.21,
        "time_ns": 1767225601210000000,
        "monotonic": 1.21,
        "perf_counter_ns": 1210000000,
        "ctx_now_ms": 1210,
        "isinstance_datetime": True,
        "isinstance_date": True,
        "gmtime_year": 2026,
        "after_sleep": "2026-01-01T00:00:01.460000+00:00",
    }
    sim.expect("result", outcome="ok")
    assert sim.shutdown() == 0


def _one_run(sim: FakeSim, *, seed: int, reset: bool, incarnation: int = 0) -> list[dict[str, Any]]:
    """One run's conversation; returns the messages the executor sent in it."""
    sim.store.__init__()  # a new run: a new store
    before = len(sim.executor_messages())
    sim.start(seed=seed, reset=reset, incarnation=incarnation, now_ms=0)
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"}, now_ms=1210)
    sim.kv_round(op="get")
    sim.kv_round(op="cas")
    sim.http_respond(sim.expect("http"), 201, {"id": "res_0", "ref": "r1"}, after_ms=195)
    sim.kv_round(op="put")
    sim.expect("result", outcome="ok", receipt="res_0")
    sim.invoke("c2", "mint", {}, now_ms=2000)
    sim.expect("log")
    sim.expect("result", outcome="ok")
    return sim.executor_messages()[before:]


def test_reset_gives_identical_message_streams_in_one_process(sim_factory) -> None:
    reused: FakeSim = sim_factory()
    reused.handshake()
    first = _one_run(reused, seed=1157098542, reset=False)
    second = _one_run(reused, seed=1157098542, reset=True)
    assert second == first
    # And a fresh process says the same.
    fresh: FakeSim = sim_factory()
    fresh.handshake()
    assert _one_run(fresh, seed=1157098542, reset=False) == first
    # The key is a uuid4 from the seeded stream, the same on every run.
    assert [m["type"] for m in first] == ["ready", "kv", "kv", "http", "kv", "result", "log", "result"]
    key = first[2]["value"]
    assert uuid.UUID(key).version == 4
    assert first[3]["headers"]["idempotency-key"] == key
    assert reused.shutdown() == 0 and fresh.shutdown() == 0


def test_without_on_reset_a_reused_process_differs(sim_factory) -> None:
    # The negative control: the app's key cache survives the reset when no hook clears it,
    # so the second run skips the store; this is what retrylab's determinism check catches.
    reused: FakeSim = sim_factory(args=["--no-on-reset"])
    reused.handshake()
    first = _one_run(reused, seed=5, reset=False)
    reused.store.__init__()
    reused.start(seed=5, reset=True, now_ms=0)
    reused.invoke("c1", "create", {"ref": "r1", "tenant": "t0"}, now_ms=1210)
    msg = reused.expect("http")  # no kv get/cas first
    assert msg["msg_id"] == 1
    assert msg["headers"]["idempotency-key"] == first[2]["value"]
    reused.close()


def _mint(sim: FakeSim, *, seed: int, incarnation: int) -> dict[str, Any]:
    sim.handshake()
    sim.start(seed=seed, incarnation=incarnation, now_ms=5000 * incarnation)
    sim.invoke("c1", "mint", {}, now_ms=5000 * incarnation + 10)
    values = json.loads(sim.expect("log")["text"])
    sim.expect("result", outcome="ok")
    assert sim.shutdown() == 0
    return values


def test_another_incarnations_seed_gives_other_random_values(sim_factory) -> None:
    a = _mint(sim_factory(), seed=1157098542, incarnation=0)
    again = _mint(sim_factory(), seed=1157098542, incarnation=0)
    b = _mint(sim_factory(), seed=2718281828, incarnation=1)
    assert a == again
    assert a["version"] == 4 and b["version"] == 4
    for name in ("uuid4", "urandom", "token_hex", "random", "system_random", "unseeded_random"):
        assert a[name] != b[name], name
    assert len(set(a["uuid4"])) == 2
    for u in a["uuid4"] + b["uuid4"]:
        assert uuid.UUID(u).version == 4 and uuid.UUID(u).variant == uuid.RFC_4122


def test_random_is_seeded_with_the_start_seed_itself(sim_factory) -> None:
    import random

    values = _mint(sim_factory(), seed=42, incarnation=0)
    assert values["random"] == random.Random(42).random()


def test_a_run_ended_while_a_handler_waits_is_abandoned_for_the_next_one(sim: FakeSim) -> None:
    # A search cuts a run while the handler is blocked in its request: the next `start`
    # (reset) arrives instead of the answer. The handler is unwound without a result (even
    # through tenacity and `except Exception`), and the new run starts from scratch.
    sim.invoke("c1", "wait_for_answer", {"ref": "r1"}, now_ms=1210)
    sim.expect("log", text="cancelled before=False")
    sim.expect("http", method="GET", url="http://provider.sim/v1/resources?ref=r1")
    sim.start(reset=True, now_ms=0)  # answered by `ready`, not by a result for c1
    sim.invoke("c1", "wait_for_answer", {"ref": "r1"}, now_ms=5)
    sim.expect("log", text="cancelled before=False")
    http = sim.expect("http", method="GET", url="http://provider.sim/v1/resources?ref=r1")
    assert http["msg_id"] == 1, http  # message ids start over with the run
    sim.http_respond(http, 200, {"id": "res_1"})
    sim.expect("log", text="cancelled after=False")
    sim.expect("result", call="c1", issue=1, outcome="ok", receipt="res_1")
    assert sim.shutdown() == 0
