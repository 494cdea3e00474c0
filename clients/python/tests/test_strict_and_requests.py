"""Strict mode's refusals, and requests with urllib3's Retry through the fake simulator."""

from __future__ import annotations

from fakesim import FakeSim

SOCKET_ERROR = (
    "real socket: socket.create_connection(('93.184.216.34', 443)) - route HTTP through "
    "retrylab.httpx_client() / requests_session()"
)


def test_a_strict_violation_is_logged_and_ends_the_process_even_when_caught(sim: FakeSim) -> None:
    sim.invoke("c1", "strict_socket", {})
    # The handler caught the StrictModeError and went on to ctx.log(): the client sends the
    # violation instead, and exits with status 4; no result claims anything.
    sim.expect("log", text=f"retrylab strict mode violation: {SOCKET_ERROR}")
    assert sim.expect_eof() == 4
    stderr = sim.stderr()
    assert f"swallowed: {SOCKET_ERROR}" in stderr
    assert "retrylab: strict mode violation; the executor exits with status 4" in stderr
    assert f"retrylab._errors.StrictModeError: {SOCKET_ERROR}" in stderr
    assert 'in strict_socket\n    socket.create_connection(("93.184.216.34", 443))' in stderr


def test_a_thread_start_is_refused(sim: FakeSim) -> None:
    sim.invoke("c1", "strict_thread", {})
    log = sim.expect("log")
    assert log["text"].startswith(
        "retrylab strict mode violation: real thread: threading.Thread.start() of 'worker-thread' "
        "(target __main__.strict_thread.<locals>.<lambda>, started from __main__) - an executor runs "
        "single-threaded under retrylab"
    )
    assert sim.expect_eof() == 4


def test_without_strict_mode_a_thread_may_start(sim_factory) -> None:
    sim: FakeSim = sim_factory(args=["--lax"])
    sim.handshake()
    sim.start()
    sim.invoke("c1", "strict_thread", {})
    sim.expect("result", outcome="ok")
    assert sim.shutdown() == 0


def test_urllib3_retry_retries_a_500_through_the_simulator(sim: FakeSim) -> None:
    sim.invoke("c1", "requests_get", {"session": "500", "path": "/v1/resources/res_0"}, now_ms=100)
    first = sim.expect("http", call="c1", method="GET", url="http://provider.sim/v1/resources/res_0", timeout_ms=5000)
    assert first["headers"]["host"] == "provider.sim"
    assert first["headers"]["user-agent"].startswith("python-requests/")
    assert first["body"] == ""
    sim.http_respond(first, 500, {"error": "server"}, after_ms=20)
    second = sim.expect("http", method="GET", url="http://provider.sim/v1/resources/res_0")
    sim.http_respond(second, 200, {"id": "res_0", "ref": "r1"}, after_ms=20)
    sim.expect("result", call="c1", outcome="ok", receipt="res_0")
    assert sim.shutdown() == 0


def test_urllib3_retry_backoff_and_retry_after_are_virtual_sleeps(sim: FakeSim) -> None:
    sim.invoke("c1", "requests_get", {"session": "backoff", "path": "/v1/resources/res_0"})
    sim.http_respond(sim.expect("http"), 500, "")
    # First retry: no backoff (urllib3 2 backs off from the second consecutive error).
    sim.http_respond(sim.expect("http"), 503, "", headers={"retry-after": "3"})
    # Retry-After: 3 is honoured by urllib3's own time.sleep(3).
    sim.wake(sim.expect("sleep", ms=3000))
    sim.http_respond(sim.expect("http"), 500, "")
    # backoff_factor 0.5 * 2 ** (3 - 1) = 2 s.
    sim.wake(sim.expect("sleep", ms=2000))
    sim.http_respond(sim.expect("http"), 200, {"id": "res_0"})
    sim.expect("result", outcome="ok", receipt="res_0")
    assert sim.shutdown() == 0


def test_urllib3_classifies_simulated_transport_errors_as_real_ones(sim: FakeSim) -> None:
    # GET: a read timeout and a reset are read errors, retried.
    sim.invoke("c1", "requests_get", {"session": "default", "path": "/v1/resources/res_0"})
    sim.http_error(sim.expect("http"), "read_timeout", after_ms=5000)
    sim.http_error(sim.expect("http"), "reset", after_ms=10)
    sim.http_respond(sim.expect("http"), 200, {"id": "res_0"})
    sim.expect("result", call="c1", outcome="ok", receipt="res_0")
    # POST: a refused connection is a connect error (the request never left), retried...
    sim.invoke("c2", "requests_get", {"session": "default", "method": "POST", "path": "/v1/resources"})
    sim.http_error(sim.expect("http", method="POST"), "refused")
    sim.http_error(sim.expect("http", method="POST"), "connect_timeout", after_ms=1000)
    sim.http_respond(sim.expect("http", method="POST"), 201, {"id": "res_1"})
    sim.expect("result", call="c2", outcome="ok", receipt="res_1")
    # ...but a read timeout on a POST is not retried by Retry's default allowed_methods, and
    # surfaces as requests' ReadTimeout: the outcome is unknown.
    sim.invoke("c3", "requests_get", {"session": "default", "method": "POST", "path": "/v1/resources"})
    sim.http_error(sim.expect("http", method="POST"), "read_timeout", after_ms=5000)
    result = sim.expect("result", call="c3", outcome="unknown")
    assert result["detail"] == (
        "ReadTimeout: HTTPConnectionPool(host='provider.sim', port=80): Read timed out. (read timeout=5)"
    )
    # Retries exhausted: connect errors three times in a row with connect=2.
    sim.invoke("c4", "requests_get", {"session": "default", "method": "POST", "path": "/v1/resources"})
    for _ in range(3):
        sim.http_error(sim.expect("http", method="POST"), "refused")
    result = sim.expect("result", call="c4", outcome="unknown")
    assert result["detail"].startswith(
        "ConnectionError: HTTPConnectionPool(host='provider.sim', port=80): Max retries exceeded with url: "
        "/v1/resources (Caused by NewConnectionError("
    ), result["detail"]
    assert "0x" not in result["detail"]
    assert sim.shutdown() == 0
