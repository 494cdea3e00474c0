"""A zygote's forks (protocol 1, section 7), through the fake simulator: each forked life
starts as the zygote was after `init` (message ids, the application's module-level state),
in its own process group, reaped by the zygote; `fork` is refused where it is not allowed.
An async-mode zygote forks before its event loop exists: each child makes its own."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from fakesim import FakeSim
from test_time_and_determinism import _one_run


def _gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while os.path.exists(f"/proc/{pid}"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_each_forked_life_starts_from_the_zygote_not_from_the_last_life(sim_factory, tmp_path: Path) -> None:
    # The app without its on_reset hook keeps a key cache at module level: a reused process
    # leaks it into the next run (test_without_on_reset_a_reused_process_differs); forks of
    # a zygote that never ran a call do not.
    zygote: FakeSim = sim_factory(args=["--no-on-reset"])
    assert zygote.handshake()["fork"] is True
    lives: list[list[dict[str, Any]]] = []
    for _ in range(2):
        child = zygote.fork(tmp_path)
        lives.append(_one_run(child, seed=5, reset=False))
        child.close()
    assert lives[0] == lives[1]
    assert lives[0][1]["type"] == "kv" and lives[0][1]["msg_id"] == 1  # after `ready`: message ids as after init
    fresh: FakeSim = sim_factory(args=["--no-on-reset"])
    fresh.handshake()
    assert _one_run(fresh, seed=5, reset=False) == lives[0]
    # The zygote itself never ran a call and still serves forks.
    third = zygote.fork(tmp_path)
    assert _one_run(third, seed=5, reset=False) == lives[0]
    assert third.shutdown() == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("in-", "out-"))) == []


def test_a_forked_child_has_its_own_group_and_its_zygote_reaps_it(sim_factory, tmp_path: Path) -> None:
    zygote: FakeSim = sim_factory()
    zygote.handshake()
    child = zygote.fork(tmp_path)
    pid = child.proc.pid  # type: ignore[attr-defined]
    assert os.getpgid(pid) == pid
    with open(f"/proc/{pid}/stat") as f:
        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
    assert ppid == zygote.proc.pid
    child.start(seed=3)
    child.close()  # SIGKILL to its group: the zygote (SIGCHLD ignored) leaves no zombie
    assert _gone(pid)
    assert zygote.proc.poll() is None


def test_fork_after_start_is_a_protocol_error(sim_factory, tmp_path: Path) -> None:
    sim: FakeSim = sim_factory()
    sim.handshake()
    sim.start()
    sim.send({"type": "fork", "in": str(tmp_path / "in"), "out": str(tmp_path / "out")})
    assert sim.recv() is None
    assert sim.wait() != 0
    assert "`fork` is for a zygote: a process between its `init_ok` and any `start`" in sim.stderr()


def test_without_the_capability_hello_says_nothing_and_fork_is_refused(sim_factory, tmp_path: Path) -> None:
    sim: FakeSim = sim_factory(args=["--no-fork"])
    assert "fork" not in sim.handshake()
    sim.send({"type": "fork", "in": str(tmp_path / "in"), "out": str(tmp_path / "out")})
    assert sim.recv() is None
    assert sim.wait() != 0
    assert 'did not declare "fork": true in its hello' in sim.stderr()


ASYNC_APP = Path(__file__).resolve().parent / "executors" / "async_app.py"


def _async_life(child: FakeSim) -> list[dict[str, Any]]:
    """One life of async_app in a forked child: two creates in flight at once, answered out
    of order, then a timer; returns the messages the child sent in it."""
    before = len(child.executor_messages())
    child.start(seed=7)
    for call, now in (("c1", 10), ("c2", 20)):
        child.invoke(call, "create", {"ref": f"r-{call}", "tenant": "t0", "authorization": call}, now_ms=now)
        child.kv_round(op="get", key=f"key:{call}")
        child.kv_round(op="put", key=f"key:{call}")
        child.expect("http", call=call, method="POST")
        child.expect("idle")
    first, second = [m for m in child.executor_messages()[before:] if m["type"] == "http"]
    child.http_respond(second, 201, {"id": "res_0", "ref": "r-c2"}, after_ms=30)
    child.expect("result", call="c2", outcome="ok", receipt="res_0")
    child.expect("idle")
    child.http_respond(first, 201, {"id": "res_1", "ref": "r-c1"}, after_ms=5)
    child.expect("result", call="c1", outcome="ok", receipt="res_1")
    child.expect("idle")
    child.invoke("c3", "clock", {"s": 0.5}, now_ms=1000)
    sleep = child.expect("sleep", ms=500)
    child.expect("idle")
    child.wake(sleep)
    log = json.loads(child.expect("log")["text"])
    assert log["before"] == [1.0, 1.0, 1000] and log["after"] == [1.5, 1.5, 1500]
    child.expect("result", call="c3", outcome="ok")
    child.expect("idle")
    return child.executor_messages()[before:]


def test_an_async_zygote_forks_before_its_event_loop_and_each_child_runs_its_own(
    sim_factory, tmp_path: Path
) -> None:
    # No on_reset: the app's module-level list of calls (`seen`) is what a reused process
    # would carry from one life to the next; the clock tool logs it.
    zygote: FakeSim = sim_factory(ASYNC_APP, args=["--no-on-reset", "--report-fork"])
    assert zygote.handshake(mode="async")["fork"] is True
    lives = []
    for _ in range(2):
        child = zygote.fork(tmp_path)
        lives.append(_async_life(child))
        child.close()
    # The zygote forked with no event loop running, none made by the client, one thread.
    assert zygote.stderr().count("before fork: running loop None, runtime loop False, threads 1\n") == 2
    # Each life saw only its own calls, and the two lives sent the same messages (message
    # ids from 1 again, the same seeded keys): nothing reached the second from the first.
    logs = [json.loads(next(m["text"] for m in life if m["type"] == "log")) for life in lives]
    assert logs[0]["seen"] == logs[1]["seen"] == ["c1", "c2"]
    assert lives[0] == lives[1]
    assert lives[0][1]["type"] == "kv" and lives[0][1]["msg_id"] == 1
    # A process that was never forked says the same.
    fresh: FakeSim = sim_factory(ASYNC_APP, args=["--no-on-reset"])
    fresh.handshake(mode="async")
    assert _async_life(fresh) == lives[0]
    assert fresh.shutdown() == 0
    assert zygote.proc.poll() is None
    assert zygote.shutdown() == 0


def test_an_async_child_still_resets_and_cancels(sim_factory, tmp_path: Path) -> None:
    zygote: FakeSim = sim_factory(ASYNC_APP)
    zygote.handshake(mode="async")
    child = zygote.fork(tmp_path)
    child.start()
    child.invoke("c1", "stubborn", {}, now_ms=0)
    child.expect("http")
    child.expect("idle")
    child.send({"type": "cancel", "call": "c1", "issue": 1, "now_ms": 100})
    child.kv_round(op="put", key="stubborn")
    child.expect("result", call="c1", outcome="unknown", detail="cancelled, and said so")
    child.expect("idle")
    # A second call blocked when the run is cut short: the child abandons it and starts over.
    child.invoke("c2", "gather", {}, now_ms=200)
    child.expect("http")
    child.expect("http")
    child.expect("idle")
    child.start(reset=True, incarnation=1, now_ms=300)
    child.invoke("c3", "plain", {}, now_ms=300)
    child.kv_round(op="put", key="plain")
    child.expect("result", call="c3", outcome="ok")
    child.expect("idle")
    assert child.shutdown() == 0


def test_an_async_process_with_fork_false_does_not_declare_it(sim_factory) -> None:
    sim: FakeSim = sim_factory(ASYNC_APP, args=["--no-fork"])
    assert "fork" not in sim.handshake(mode="async")
    assert "does not offer to fork" not in sim.stderr()


@pytest.mark.parametrize(
    ("flag", "why"),
    [
        ("--thread-at-import", "1 other thread running (import-time): a fork copies only the forking thread"),
        ("--loop-at-import", "an asyncio event loop was set (asyncio.set_event_loop, or asyncio.get_event_loop()"),
    ],
)
def test_a_process_unsafe_to_fork_does_not_offer_to_and_fork_true_refuses(sim_factory, flag: str, why: str) -> None:
    quiet: FakeSim = sim_factory(ASYNC_APP, args=[flag])
    assert "fork" not in quiet.handshake(mode="async")
    assert f"retrylab: this process does not offer to fork ({why}" in quiet.stderr()
    # It still serves, in a process of its own.
    quiet.start()
    quiet.invoke("c1", "plain", {}, now_ms=0)
    quiet.kv_round(op="put", key="plain")
    quiet.expect("result", call="c1", outcome="ok")
    quiet.expect("idle")
    assert quiet.shutdown() == 0
    loud: FakeSim = sim_factory(ASYNC_APP, args=[flag, "--fork"])
    assert loud.recv() is None
    assert loud.wait() != 0
    assert f"RetrylabError: fork=True, but this process is not safe to fork: {why}" in loud.stderr()


def test_warming_httpx_before_the_first_fork_logs_nothing_and_leaves_the_logger_as_it_was(caplog) -> None:
    # A zygote runs retrylab.httpx.warm() once before its first fork (the lives above are
    # forks of a warmed zygote, the same as a fresh process's): a throwaway client on a mock
    # transport, whose requests must not reach a log an application configured.
    import logging

    import retrylab.httpx as sim_httpx

    caplog.set_level(logging.INFO, logger="httpx")
    sim_httpx.warm(rounds=3)
    assert [r for r in caplog.records if r.name.startswith("httpx")] == []
    assert logging.getLogger("httpx").disabled is False
