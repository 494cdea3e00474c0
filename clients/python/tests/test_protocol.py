"""The handshake, turns, the store, results and the process's exits, through the fake simulator."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import APP, HTTPX_ERRORS
from fakesim import FakeSim, subprocess_env

TOOLS = [
    "create",
    "journal",
    "create_retrying",
    "wait_for_answer",
    "httpx_misc",
    "mint",
    "clock",
    "strict_socket",
    "strict_thread",
    "requests_get",
    "claims",
]


def test_handshake_declares_tools_assumptions_and_guarantee(sim_factory) -> None:
    sim: FakeSim = sim_factory()
    hello = sim.handshake()
    assert hello == {
        "type": "hello",
        "protocol": 1,
        "mode": "sync",
        "client": "retrylab-python/0.1.0",
        "tools": TOOLS,
        "assumptions": ["durable_journal", "atomic_dedup"],
        "guarantee": ["at_most_once"],
        "fork": True,
    }
    sim.start(worker=2, incarnation=0, seed=7, now_ms=0)
    assert sim.shutdown() == 0


def test_channel_on_descriptors_named_by_the_environment(sim_factory) -> None:
    sim: FakeSim = sim_factory(fds="env")
    assert min(sim.fd_numbers) != 3 or max(sim.fd_numbers) != 4
    sim.handshake()
    sim.start()
    assert sim.shutdown() == 0


def test_eof_on_fd3_is_shutdown(sim_factory) -> None:
    sim: FakeSim = sim_factory()
    sim.handshake()
    sim.start()
    sim.close_channel()
    assert sim.expect_eof() == 0


def test_eof_while_blocked_in_http_is_shutdown(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"}, now_ms=10)
    sim.kv_round(op="get", key="key:r1")
    sim.kv_round(op="cas")
    sim.expect("http")
    sim.close_channel()
    assert sim.expect_eof() == 0


def test_an_invoke_with_the_store_returns_ok_with_its_receipt(sim) -> None:
    sim.invoke("c1", "journal", {"ref": "r1", "tenant": "t0"}, now_ms=1210)
    assert sim.kv_round(op="get", key="op:r1")["msg_id"] == 1
    sim.kv_round(op="get", key="op:r1")
    sim.kv_round(op="put", key="op:r1", value="started")
    sim.kv_round(op="cas", key="op:r1", expect_version=1, value="sent")
    sim.kv_round(op="cas", key="op:r1", expect_version=1, value="stale")
    sim.kv_round(op="cas", key="lease:r1", expect_version=0, value="w0")
    sim.kv_round(op="list", prefix="op:")
    sim.expect("log", text="entries=[('op:r1', 'sent', 2)]")
    sim.kv_round(op="delete", key="lease:r1")
    sim.kv_round(op="delete", key="lease:r1")
    sim.expect("state", call="c1", state="confirmed", receipt="res_3")
    sim.expect("result", call="c1", issue=1, outcome="ok", receipt="res_3")
    assert sim.store.entries == {"op:r1": ("sent", 2)}
    assert sim.shutdown() == 0


def test_httpx_request_answered_201_returns_the_id(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"}, now_ms=1210)
    sim.kv_round(op="get", key="key:r1")
    cas = sim.kv_round(op="cas", key="key:r1", expect_version=0)
    key = cas["value"]
    http = sim.expect("http", call="c1", method="POST", url="http://provider.sim/v1/resources", timeout_ms=5000)
    assert http["msg_id"] == 3
    assert json.loads(http["body"]) == {"ref": "r1", "tenant": "t0"}
    assert http["headers"]["idempotency-key"] == key
    assert http["headers"]["content-type"] == "application/json"
    assert http["headers"]["host"] == "provider.sim"
    sim.http_respond(http, 201, {"id": "res_0", "ref": "r1"}, after_ms=195)
    put = sim.kv_round(op="put", key="op:r1")
    assert json.loads(put["value"]) == {"key": key, "id": "res_0"}
    sim.expect("result", call="c1", issue=1, outcome="ok", receipt="res_0")
    # The next call of the same ref reuses the key from the process's cache.
    sim.invoke("c2", "create", {"ref": "r1", "tenant": "t0"}, now_ms=2000)
    http = sim.expect("http", call="c2")
    assert http["headers"]["idempotency-key"] == key
    sim.http_respond(http, 201, {"id": "res_0", "ref": "r1"}, headers={"idempotent-replayed": "true"})
    sim.kv_round(op="put")
    sim.expect("result", call="c2", outcome="ok", receipt="res_0")
    assert sim.shutdown() == 0


def test_a_400_is_a_definite_failure_and_a_500_unknown(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"})
    sim.kv_round(op="get")
    sim.kv_round(op="cas")
    sim.http_respond(sim.expect("http"), 400, {"error": "rejected"})
    sim.expect("result", call="c1", outcome="failed", detail='400 {"error":"rejected"}')
    sim.invoke("c2", "create", {"ref": "r1", "tenant": "t0"}, issue=2)
    sim.http_respond(sim.expect("http"), 500, {"error": "server"})
    result = sim.expect("result", call="c2", issue=2, outcome="unknown")
    assert result["detail"].startswith("HTTPStatusError: Server error '500 Internal Server Error' for url 'http://provider.sim/v1/resources'")
    assert sim.shutdown() == 0


def test_result_rules(sim) -> None:
    expected = {
        "definite": {"outcome": "failed", "detail": "400 rejected"},
        "indefinite": {"outcome": "unknown", "detail": "no answer from the provider"},
        "error": {"outcome": "unknown", "detail": "KeyError: 'missing'"},
        "failed": {"outcome": "failed", "detail": "402 card declined"},
        "unknown": {"outcome": "unknown", "detail": "500 twice"},
        "list": {
            "outcome": "unknown",
            "detail": "TypeError: the handler of 'claims' returned a list; return a dict, a str, None or "
            "retrylab.ok()/failed()/unknown() (an unrecognised return value claims unknown)",
        },
        "str": {"outcome": "ok", "receipt": "res_9"},
        "sleep_zero": {"outcome": "ok"},
    }
    for i, (kind, fields) in enumerate(expected.items()):
        sim.invoke(f"c{i}", "claims", {"kind": kind})
        result = sim.expect("result", call=f"c{i}", issue=1)
        assert {k: v for k, v in result.items() if k not in ("type", "call", "issue")} == fields, kind
    assert sim.shutdown() == 0


def test_the_simulators_error_message_exits_3(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"})
    sim.expect("kv", op="get")
    sim.send({"type": "error", "code": 20, "text": "result for call c9, which this process was not given"})
    assert sim.expect_eof() == 3
    assert (
        "retrylab: the simulator refused a message (error code 20, unknown_call): "
        "result for call c9, which this process was not given" in sim.stderr()
    )


def test_a_message_out_of_turn_is_a_protocol_error(sim) -> None:
    sim.send({"type": "wake", "in_reply_to": 4, "now_ms": 10})
    assert sim.expect_eof() == 1
    assert "retrylab._errors.ProtocolError: between turns, expected `start`, `invoke`, `cancel` or `shutdown`, got:" in sim.stderr()


def test_an_unknown_field_from_the_simulator_is_ignored(sim) -> None:
    # A newer simulator may add fields: the client reads the ones it knows (forward
    # compatibility); the clock moves only with a known `now_ms`.
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"}, now_ms=10)
    get = sim.expect("kv", op="get", key="key:r1")
    sim.send(
        {"type": "kv_ok", "in_reply_to": get["msg_id"], "ok": True, "value": None, "version": 0, "vesion": 0, "lease": {"ms": 5}, "now_ms": 10},
        check_schema=False,
    )
    cas = sim.kv_round(op="cas", key="key:r1", expect_version=0)
    http = sim.expect("http", call="c1")
    assert http["headers"]["idempotency-key"] == cas["value"]
    sim.send(
        {"type": "http_response", "in_reply_to": http["msg_id"], "status": 201, "headers": {}, "body": '{"id":"res_0"}',
         "now_ms": 20, "trailers": {"x": "y"}, "protocol_note": None},
        check_schema=False,
    )
    sim.kv_round(op="put", key="op:r1")
    sim.expect("result", call="c1", outcome="ok", receipt="res_0")
    sim.send({"type": "shutdown", "reason": "done"}, check_schema=False)
    assert sim.expect_eof() == 0


def test_a_missing_required_field_is_a_protocol_error(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"})
    msg = sim.expect("kv", op="get")
    sim.send({"type": "kv_ok", "in_reply_to": msg["msg_id"], "value": None, "version": 0, "now_ms": 0}, check_schema=False)
    assert sim.expect_eof() == 1
    assert "ProtocolError: `kv_ok` lacks its field 'ok' (protocol 1)" in sim.stderr()


def test_a_field_of_the_wrong_type_is_a_protocol_error(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"})
    msg = sim.expect("kv", op="get")
    sim.send({"type": "kv_ok", "in_reply_to": msg["msg_id"], "ok": True, "value": None, "version": "0", "now_ms": 0}, check_schema=False)
    assert sim.expect_eof() == 1
    assert "ProtocolError: `kv_ok`.version must be an integer >= 0, not \"0\"" in sim.stderr()


def test_a_nested_field_is_checked_and_its_unknown_fields_ignored(sim_factory) -> None:
    sim: FakeSim = sim_factory()
    sim.expect("hello")
    init = {"type": "init", "protocol": 1, "executor": "x", "config": {}, "params": {}, "tools": ["create"]}
    sim.send({**init, "provider": {"base_url": "http://provider.sim", "key_header": None, "http": {}, "region": "eu"}}, check_schema=False)
    sim.expect("init_ok")
    other: FakeSim = sim_factory()
    other.expect("hello")
    other.send({**init, "provider": {"base_url": "http://provider.sim", "http": {}}}, check_schema=False)
    assert other.expect_eof() == 1
    assert "ProtocolError: `init`.provider must be an object with " in other.stderr()
    assert "key_header (a string or null)" in other.stderr()


def test_a_reply_to_another_message_is_a_protocol_error(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"})
    msg = sim.expect("kv", op="get")
    sim.send({"type": "kv_ok", "in_reply_to": msg["msg_id"] + 5, "ok": True, "value": None, "version": 0, "now_ms": 0})
    assert sim.expect_eof() == 1
    assert "ProtocolError: after `kv get` msg_id 1, expected `kv_ok` in_reply_to 1, got:" in sim.stderr()


def test_a_protocol_error_the_handler_catches_still_ends_the_process(sim) -> None:
    sim.invoke("c1", "claims", {"kind": "swallow"})
    msg = sim.expect("kv", op="get", key="anything")
    sim.send({"type": "wake", "in_reply_to": msg["msg_id"], "now_ms": 0})
    # No result: the handler returned, but the process is not usable any more.
    assert sim.expect_eof() == 1
    assert "ProtocolError: after `kv get` msg_id 1, expected `kv_ok` in_reply_to 1, got:" in sim.stderr()


def test_time_going_backwards_is_a_protocol_error(sim) -> None:
    sim.invoke("c1", "create", {"ref": "r1", "tenant": "t0"}, now_ms=500)
    msg = sim.expect("kv", op="get")
    sim.send({"type": "kv_ok", "in_reply_to": msg["msg_id"], "ok": True, "value": None, "version": 0, "now_ms": 499}, check_clock=False)
    assert sim.expect_eof() == 1
    assert "`kv_ok`.now_ms 499 is before the clock's 500" in sim.stderr()


def test_a_reused_process_must_be_told_reset(sim) -> None:
    sim.send({"type": "start", "worker": 0, "incarnation": 0, "seed": 1, "reset": False, "now_ms": 0})
    assert sim.expect_eof() == 1
    assert "`start` with reset false, but this process already started" in sim.stderr()


def test_run_outside_the_simulator_says_how_to_run_it(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, str(APP)],
        env=subprocess_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert (
        "retrylab._errors.NotUnderSimulatorError: retrylab.run() needs the simulator: this process "
        "was not started by retrylab (RETRYLAB_FD_IN is not set and fd 3 is not an open pipe); run it "
        "under retrylab" in proc.stderr
    )
    assert "retrylab.production.call(tool, args, store=retrylab.production.SqliteStore(path))" in proc.stderr


def test_run_with_the_variable_but_without_the_descriptor(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, str(APP)],
        env=subprocess_env({"RETRYLAB_FD_IN": "3", "RETRYLAB_FD_OUT": "4"}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "RETRYLAB_FD_IN names fd 3, which is not open in this process" in proc.stderr


def test_invoke_of_an_undeclared_tool_is_a_protocol_error(sim) -> None:
    sim.invoke("c1", "compensate", {"target": "res_0", "tenant": "t0"})
    assert sim.expect_eof() == 1
    assert "`invoke` of tool 'compensate', which this process did not declare in `hello`" in sim.stderr()


def test_httpx_binary_bodies_and_transport_errors(sim) -> None:
    import base64

    sim.invoke("c1", "httpx_misc", {})
    http = sim.expect("http", method="POST", url="http://provider.sim/v1/blobs", body_b64=base64.b64encode(b"\xff\x00binary").decode())
    assert http["headers"]["content-type"] == "application/octet-stream"
    # An answer's body is text (the protocol has no `body_b64` in `http_response`).
    sim.http_respond(http, 201, "\x00\x01~", headers={"content-type": "application/octet-stream"}, after_ms=10)
    sim.expect("log", text="binary answer 201 00017e receipt=None")
    for error, text in HTTPX_ERRORS.items():
        get = sim.expect("http", method="GET", url="http://provider.sim/v1/resources/res_0", body="")
        sim.http_error(get, error, after_ms=5)
        sim.expect("log", text=f"{text} (GET http://provider.sim/v1/resources/res_0)")
    sim.expect("result", call="c1", outcome="ok")
    assert sim.shutdown() == 0


def test_an_unknown_transport_error_is_a_protocol_error(sim) -> None:
    sim.invoke("c1", "httpx_misc", {})
    http = sim.expect("http")
    sim.send({"type": "http_error", "in_reply_to": http["msg_id"], "error": "dns_failure", "now_ms": 0}, check_schema=False)
    assert sim.expect_eof() == 1
    assert '`http_error`.error must be one of connect_timeout, refused, read_timeout, reset, not "dns_failure"' in sim.stderr()
