"""retrylab.install()/uninstall() in the test process itself: what is patched, and that
everything is restored."""

from __future__ import annotations

import datetime
import os
import random
import secrets
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

import retrylab
from retrylab import _virtual

_SEEDED_5 = random.Random(5).random()  # drawn before any install

PATCHED = [
    (time, "time"),
    (time, "time_ns"),
    (time, "monotonic"),
    (time, "monotonic_ns"),
    (time, "perf_counter"),
    (time, "perf_counter_ns"),
    (time, "sleep"),
    (time, "gmtime"),
    (time, "localtime"),
    (time, "ctime"),
    (time, "asctime"),
    (time, "strftime"),
    (datetime, "datetime"),
    (datetime, "date"),
    (random.Random, "seed"),
    (random, "seed"),
    (os, "getrandom"),
    (random, "SystemRandom"),
    (secrets, "_sysrand"),
    (secrets, "randbits"),
    (secrets, "choice"),
    (secrets, "SystemRandom"),
    (os, "urandom"),
    (uuid, "uuid4"),
]
STRICT = [
    (socket.socket, "connect"),
    (socket.socket, "connect_ex"),
    (socket, "create_connection"),
    (socket, "getaddrinfo"),
    (threading.Thread, "start"),
]


@pytest.fixture
def installed() -> Iterator[None]:
    originals = {(id(o), n): getattr(o, n) for o, n in PATCHED + STRICT}
    retrylab.install(strict=False)
    try:
        yield
    finally:
        retrylab.uninstall()
        for o, n in PATCHED + STRICT:
            assert getattr(o, n) is originals[(id(o), n)], f"{n} not restored"


def test_install_patches_and_uninstall_restores_everything() -> None:
    originals = {(id(o), n): getattr(o, n) for o, n in PATCHED + STRICT}
    retrylab.install(strict=True)
    try:
        for o, n in PATCHED + STRICT:
            assert getattr(o, n) is not originals[(id(o), n)], f"{n} not patched"
        retrylab.install(strict=False)  # strictness alone changes
        for o, n in STRICT:
            assert getattr(o, n) is originals[(id(o), n)], f"{n} still guarded"
        retrylab.install(strict=True)
        for o, n in STRICT:
            assert getattr(o, n) is not originals[(id(o), n)], f"{n} not guarded again"
    finally:
        retrylab.uninstall()
    for o, n in PATCHED + STRICT:
        assert getattr(o, n) is originals[(id(o), n)], f"{n} not restored"
    assert not _virtual.installed()


def test_clocks_read_the_virtual_time(installed: None) -> None:
    _virtual.set_now_ms(1210)
    assert time.time() == 1767225601.21
    assert time.time_ns() == 1767225601210000000
    assert time.monotonic() == time.perf_counter() == 1.21
    assert time.monotonic_ns() == time.perf_counter_ns() == 1210000000
    assert time.gmtime()[:6] == (2026, 1, 1, 0, 0, 1)
    assert time.strftime("%Y") == "2026"
    assert time.gmtime(0).tm_year == 1970  # an explicit argument is honoured
    _virtual.set_now_ms(86_400_000 + 5)
    assert time.monotonic() == 86400.005


def test_datetime_now_is_virtual_and_isinstance_still_works(installed: None) -> None:
    _virtual.set_now_ms(3_723_004)  # 1 h 2 min 3.004 s
    utc = datetime.timezone.utc
    now = datetime.datetime.now(utc)
    assert now == datetime.datetime(2026, 1, 1, 1, 2, 3, 4000, tzinfo=utc)
    assert datetime.datetime.utcnow() == datetime.datetime(2026, 1, 1, 1, 2, 3, 4000)
    assert datetime.datetime.now(utc).astimezone(utc).isoformat() == "2026-01-01T01:02:03.004000+00:00"
    assert datetime.datetime.now().replace(tzinfo=None) == datetime.datetime.fromtimestamp(1767225600 + 3723.004)
    assert datetime.datetime.today() == datetime.datetime.now()
    assert datetime.date.today() == datetime.datetime.fromtimestamp(1767225600 + 3723.004).date()
    real = _virtual._REAL_DATETIME(2020, 5, 1)
    assert isinstance(real, datetime.datetime) and isinstance(real, datetime.date)
    assert isinstance(now, datetime.datetime) and isinstance(now, _virtual._REAL_DATETIME)
    assert not isinstance(_virtual._REAL_DATE(2020, 5, 1), datetime.datetime)
    assert issubclass(_virtual._REAL_DATETIME, datetime.datetime)
    assert issubclass(datetime.datetime, datetime.date)
    assert now.replace(tzinfo=None) - real > datetime.timedelta(days=365 * 5)
    assert datetime.datetime.fromisoformat("2026-01-01T00:00:00") == datetime.datetime(2026, 1, 1)


def test_randomness_is_seeded(installed: None) -> None:
    def draw() -> list[object]:
        return [
            random.random(),
            uuid.uuid4(),
            os.urandom(8),
            secrets.token_hex(8),
            secrets.randbelow(10**9),
            secrets.choice("abcdefghij" * 10),
            random.SystemRandom().getrandbits(64),
            random.Random().random(),
            os.getrandom(4),
        ]

    _virtual.seed(99)
    a = draw()
    _virtual.seed(99)
    assert draw() == a
    _virtual.seed(100)
    b = draw()
    _virtual.seed(99)
    random.seed()  # no argument: from the seeded stream, not the OS
    c = random.random()
    _virtual.seed(99)
    random.seed()
    assert random.random() == c
    assert all(x != y for x, y in zip(a, b)), (a, b)
    assert a[0] == random.Random(99).random()
    assert isinstance(a[1], uuid.UUID) and a[1].version == 4
    with pytest.raises(NotImplementedError):
        random.SystemRandom().getstate()
    # An explicitly seeded Random is the user's own, unaffected.
    assert random.Random(5).random() == _SEEDED_5


def test_sleep_outside_a_handler_says_why(installed: None) -> None:
    with pytest.raises(retrylab.OutsideHandlerError, match=r"time.sleep\(0.5\) was called while no tool handler is running"):
        time.sleep(0.5)
    with pytest.raises(ValueError, match="sleep length must be non-negative"):
        time.sleep(-1)


def test_strict_mode_names_the_refused_call() -> None:
    retrylab.install(strict=True)
    try:
        with pytest.raises(retrylab.StrictModeError) as e:
            socket.create_connection(("93.184.216.34", 443))
        assert str(e.value) == (
            "real socket: socket.create_connection(('93.184.216.34', 443)) - route HTTP through "
            "retrylab.httpx_client() / requests_session()"
        )
        s = socket.socket()
        try:
            with pytest.raises(retrylab.StrictModeError, match=r"^real socket: socket.connect\(\('93.184.216.34', 443\)\) - route HTTP"):
                s.connect(("93.184.216.34", 443))
            with pytest.raises(retrylab.StrictModeError, match=r"^real socket: socket.connect_ex\("):
                s.connect_ex(("93.184.216.34", 443))
        finally:
            s.close()
        with pytest.raises(retrylab.StrictModeError, match=r"^real DNS lookup: socket.getaddrinfo\('api.example.com', 443\)"):
            socket.getaddrinfo("api.example.com", 443)
        t = threading.Thread(target=print, name="t1")
        with pytest.raises(retrylab.StrictModeError, match=r"^real thread: threading.Thread.start\(\) of 't1' \(target builtins.print, started from test_install\)"):
            t.start()
    finally:
        retrylab.uninstall()
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()


def test_outside_the_simulator_the_clients_are_ordinary(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx
    import requests

    import retrylab.httpx

    monkeypatch.delenv("RETRYLAB_FD_IN", raising=False)
    assert not retrylab.under_simulator()
    client = retrylab.httpx_client(base_url="https://api.example.com", timeout=3)
    assert type(client) is httpx.Client and str(client.base_url) == "https://api.example.com"
    client.close()
    session = retrylab.requests_session(retries=2)
    adapter = session.get_adapter("https://api.example.com")
    assert type(adapter) is requests.adapters.HTTPAdapter and adapter.max_retries.total == 2
    # The simulated transport outside run() refuses with a reason.
    with httpx.Client(transport=retrylab.httpx.SimTransport()) as sim_client:
        with pytest.raises(retrylab.OutsideHandlerError, match=r"an HTTP request \(GET http://provider.sim/x\) through the simulated transport, but retrylab.run\(\) is not serving"):
            sim_client.get("http://provider.sim/x")


def test_under_the_simulators_environment_the_clients_are_simulated(monkeypatch: pytest.MonkeyPatch) -> None:
    import retrylab.httpx
    import retrylab.requests

    monkeypatch.setenv("RETRYLAB_FD_IN", "3")
    client = retrylab.httpx_client(base_url="https://api.example.com", timeout=3)
    assert isinstance(client._transport, retrylab.httpx.SimTransport)
    assert client.trust_env is False
    client.close()
    with pytest.raises(ValueError, match=r"retrylab.httpx_client\(transport=...\) under the simulator"):
        retrylab.httpx_client(transport=object())
    session = retrylab.requests_session()
    assert isinstance(session.get_adapter("http://provider.sim"), retrylab.requests.SimHTTPAdapter)
    assert session.trust_env is False
    pm = session.get_adapter("http://provider.sim").poolmanager
    assert pm.connection_from_url("http://provider.sim/").__class__ is retrylab.requests.SimHTTPConnectionPool
    assert pm.connection_from_url("https://provider.sim/").__class__ is retrylab.requests.SimHTTPSConnectionPool
