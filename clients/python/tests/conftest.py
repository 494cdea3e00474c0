from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.dont_write_bytecode = True

HERE = Path(__file__).resolve().parent
try:
    import retrylab  # noqa: F401  (the installed package, when it is installed)
except ImportError:  # running from the source tree
    sys.path.insert(0, str(HERE.parent))

sys.path.insert(0, str(HERE))

from fakesim import FakeSim  # noqa: E402

APP = HERE / "executors" / "app.py"

# What httpx (and httpx2, its fork) raises for each transport error of the protocol, as
# "ExceptionClass: message".
HTTPX_ERRORS = {
    "connect_timeout": "ConnectTimeout: timed out",
    "refused": "ConnectError: [Errno 111] Connection refused",
    "read_timeout": "ReadTimeout: timed out",
    "reset": "ReadError: [Errno 104] Connection reset by peer",
}


@pytest.fixture
def sim_factory(tmp_path: Path) -> Iterator[object]:
    """Start executors under the fake simulator; every one is killed at the end of the test."""
    sims: list[FakeSim] = []

    def make(script: Path = APP, **kwargs: object) -> FakeSim:
        sim = FakeSim(script, tmp_path, **kwargs)  # type: ignore[arg-type]
        sims.append(sim)
        return sim

    yield make
    for sim in sims:
        sim.close()


@pytest.fixture
def sim(sim_factory: object) -> FakeSim:
    """The test app's executor, after the handshake and start(worker 0, incarnation 0)."""
    s = sim_factory()  # type: ignore[operator]
    s.handshake()
    s.start()
    return s
