"""A zygote's forks (protocol 1, section 7), through the fake simulator: each forked life
starts as the zygote was after `init` (message ids, the application's module-level state),
in its own process group, reaped by the zygote; `fork` is refused where it is not allowed."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

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


def test_an_async_process_does_not_declare_fork(sim_factory) -> None:
    from conftest import HERE

    sim: FakeSim = sim_factory(HERE / "executors" / "async_app.py")
    assert "fork" not in sim.handshake(mode="async")
