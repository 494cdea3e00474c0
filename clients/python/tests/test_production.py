"""The production path: the app's handlers, unchanged, outside the simulator; the stores."""

from __future__ import annotations

import http.server
import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import retrylab
import retrylab.production as prod
from conftest import APP
from fakesim import subprocess_env


class _Provider(http.server.BaseHTTPRequestHandler):
    """A loopback provider: POST /v1/resources creates (idempotent by key), GET answers 500
    once, then the resource."""

    resources: dict[str, dict[str, Any]]
    requests_seen: list[tuple[str, str, str | None]]
    failed_once: set[str]

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length))
        key = self.headers.get("idempotency-key")
        self.requests_seen.append(("POST", self.path, key))
        existing = [r for r in self.resources.values() if r["key"] == key]
        if existing:
            self._send(201, {"id": existing[0]["id"], "ref": body["ref"]})
            return
        rid = f"res_{len(self.resources)}"
        self.resources[rid] = {"id": rid, "ref": body["ref"], "key": key}
        self._send(201, {"id": rid, "ref": body["ref"]})

    def do_GET(self) -> None:
        self.requests_seen.append(("GET", self.path, None))
        rid = self.path.rsplit("/", 1)[-1]
        if rid not in self.failed_once:
            self.failed_once.add(rid)
            self._send(500, {"error": "server"})
            return
        if rid in self.resources:
            self._send(200, {"id": rid, "ref": self.resources[rid]["ref"]})
        else:
            self._send(404, {"error": "not_found"})


@pytest.fixture
def provider() -> Iterator[tuple[str, type[_Provider]]]:
    handler = type("Provider", (_Provider,), {"resources": {}, "requests_seen": [], "failed_once": set()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _production(tmp_path: Path, base_url: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(APP), "production", str(tmp_path / "journal.sqlite3"), tool, json.dumps(args), base_url],
        env=subprocess_env({"APP_PROVIDER_URL": base_url}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_the_same_handlers_run_in_production_with_sqlite(tmp_path: Path, provider) -> None:
    base_url, state = provider
    first = _production(tmp_path, base_url, "create", {"ref": "r1", "tenant": "t0"})
    assert first["http_transport"] == "HTTPTransport"  # an ordinary httpx client
    assert first["session_adapter"] == "HTTPAdapter"  # an ordinary requests adapter
    assert first["outcome"] == "ok"
    assert first["value"] == {"id": "res_0", "ref": "r1"}
    # No simulator watches the responses: the receipt is whatever the handler sets.
    assert first["receipt"] is None
    (k1, key, v1), (k2, op, v2) = first["entries"]
    assert (k1, v1, k2, v2) == ("key:r1", 1, "op:r1", 2)
    assert json.loads(op) == {"key": key, "id": "res_0"}
    # A new process (a restart) finds the key in the durable store and reuses it.
    second = _production(tmp_path, base_url, "create", {"ref": "r1", "tenant": "t0"})
    assert second["value"] == {"id": "res_0", "ref": "r1"}
    assert [e[:2] for e in second["entries"]] == [["key:r1", key], ["op:r1", op]]
    assert second["entries"][1][2] == 3  # rewritten: a new version
    assert state.requests_seen == [("POST", "/v1/resources", key), ("POST", "/v1/resources", key)]


def test_requests_session_retries_in_production(tmp_path: Path, provider) -> None:
    base_url, state = provider
    _production(tmp_path, base_url, "create", {"ref": "r1", "tenant": "t0"})
    got = _production(tmp_path, base_url, "requests_get", {"session": "500", "path": "/v1/resources/res_0"})
    assert got["outcome"] == "ok" and got["value"] == {"id": "res_0", "ref": "r1"}
    assert state.requests_seen[1:] == [("GET", "/v1/resources/res_0", None)] * 2


def test_a_definite_failure_in_production(tmp_path: Path, provider) -> None:
    base_url, _ = provider
    got = _production(tmp_path, base_url, "claims", {"kind": "definite"})
    assert (got["outcome"], got["detail"], got["receipt"]) == ("failed", "400 rejected", None)


# --- in-process: the result rules through production.call ---------------------------------


@pytest.fixture
def registry() -> Iterator[None]:
    from retrylab import _runtime

    saved = dict(_runtime._REGISTRY)
    try:
        yield
    finally:
        _runtime._REGISTRY.clear()
        _runtime._REGISTRY.update(saved)


def test_production_call_applies_the_result_rules(registry: None) -> None:
    store = prod.MemoryStore()

    @retrylab.tool("t_dict")
    def t_dict(args: dict, ctx: retrylab.Context) -> dict:
        ctx.receipt = "res_7"
        ctx.log("hello")
        ctx.state("confirmed", receipt="res_7")
        return {"id": "res_7"}

    @retrylab.tool("t_ok")
    def t_ok(args: dict, ctx: retrylab.Context) -> retrylab.Result:
        return retrylab.ok(value=args)

    @retrylab.tool("t_raise")
    def t_raise(args: dict, ctx: retrylab.Context) -> None:
        try:
            raise TimeoutError("read timed out")
        except TimeoutError as e:
            raise RuntimeError("gave up") from e

    @retrylab.tool("t_definite")
    def t_definite(args: dict, ctx: retrylab.Context) -> None:
        raise retrylab.Definite("409 already_exists for another ref")

    @retrylab.tool("t_address")
    def t_address(args: dict, ctx: retrylab.Context) -> None:
        raise ValueError(f"bad object {object()!r}")

    @retrylab.tool("t_bad_receipt")
    def t_bad_receipt(args: dict, ctx: retrylab.Context) -> dict:
        ctx.receipt = 17  # type: ignore[assignment]
        return {}

    r = prod.call("t_dict", {}, store=store)
    assert (r.outcome, r.receipt, r.detail, r.value) == ("ok", "res_7", None, {"id": "res_7"})
    r = prod.call("t_ok", {"a": 1}, store=store)
    assert (r.outcome, r.receipt, r.value) == ("ok", None, {"a": 1})
    r = prod.call("t_raise", {}, store=store)
    assert (r.outcome, r.detail) == ("unknown", "RuntimeError: gave up (caused by TimeoutError: read timed out)")
    assert isinstance(r.exception, RuntimeError)
    r = prod.call("t_definite", {}, store=store)
    assert (r.outcome, r.detail) == ("failed", "409 already_exists for another ref")
    assert isinstance(r.exception, retrylab.Definite)
    r = prod.call("t_address", {}, store=store)
    assert (r.outcome, r.detail) == ("unknown", "ValueError: bad object <object object>")
    r = prod.call("t_bad_receipt", {}, store=store)
    assert (r.outcome, r.detail) == ("unknown", "TypeError: a receipt is the provider's resource id as a str, not int")


def test_production_call_errors_say_what_is_wrong(registry: None) -> None:
    with pytest.raises(retrylab.RetrylabError, match=r"no handler is registered for tool 'nope' \(registered: "):
        prod.call("nope", {}, store=prod.MemoryStore())

    @retrylab.tool("t_x")
    def t_x(args: dict, ctx: retrylab.Context) -> None:
        return None

    with pytest.raises(TypeError, match="store must provide get/get_versioned/put/cas/delete/list"):
        prod.call("t_x", {}, store={})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"@retrylab.tool needs the tool's name"):
        retrylab.tool(t_x)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tool 't_x' already has a handler"):
        retrylab.tool("t_x")(lambda args, ctx: None)


def test_production_context(registry: None) -> None:
    seen: dict[str, Any] = {}

    @retrylab.tool("t_ctx")
    def t_ctx(args: dict, ctx: retrylab.Context) -> None:
        seen.update(
            call=ctx.call,
            issue=ctx.issue,
            provider=ctx.provider,
            params=ctx.params,
            cancelled=ctx.cancelled,
            now_ms=ctx.now_ms(),
        )
        with pytest.raises(ValueError, match="state must be one of confirmed, failed, escalated"):
            ctx.state("done")
        with pytest.raises(ValueError, match="only the 'confirmed' state carries a receipt"):
            ctx.state("failed", receipt="res_1")

    import time

    before = time.time_ns() // 1_000_000
    r = prod.call("t_ctx", {}, store=prod.MemoryStore(), provider={"base_url": "https://api"}, params={"p": 1}, call_id="job-1", issue=2)
    assert r.outcome == "ok", r.detail
    assert seen["call"] == "job-1" and seen["issue"] == 2 and seen["cancelled"] is False
    assert seen["provider"] == {"base_url": "https://api"} and seen["params"] == {"p": 1}
    assert before <= seen["now_ms"] <= time.time_ns() // 1_000_000


# --- the stores ---------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[retrylab.KV]:
    if request.param == "memory":
        yield prod.MemoryStore()
    else:
        s = prod.SqliteStore(tmp_path / "kv.sqlite3")
        yield s
        s.close()


def test_store_semantics_match_the_simulators(store: retrylab.KV) -> None:
    assert isinstance(store, retrylab.KV)
    assert store.get("a") is None and store.get_versioned("a") == (None, 0)
    assert store.put("a", "1") == 1
    assert store.put("b", "2") == 2  # versions count the store's writes
    assert store.cas("a", 2, "x") == (False, "1", 1)
    assert store.cas("a", 1, "x") == (True, "x", 3)
    assert store.cas("c", 0, "new") == (True, "new", 4)
    assert store.cas("c", 0, "again") == (False, "new", 4)
    assert store.cas("zz", 3, "v") == (False, None, 0)
    assert store.list("") == [("a", "x", 3), ("b", "2", 2), ("c", "new", 4)]
    assert store.delete("b") is True and store.delete("b") is False
    assert store.put("b", "again") == 5  # never reused, even after a delete
    for k in ["op:1", "op:2", "oq", "op", "op:\u00e9", "op:Z"]:
        store.put(k, k)
    assert [k for k, _, _ in store.list("op:")] == ["op:1", "op:2", "op:Z", "op:\u00e9"]
    assert store.get_versioned("op:2") == ("op:2", 7)
    with pytest.raises(TypeError, match="store values are str, not dict: serialise it first"):
        store.put("a", {"x": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expect_version is an int >= 0"):
        store.cas("a", -1, "v")


def test_sqlite_store_is_durable_and_cas_is_atomic_between_connections(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    a = prod.SqliteStore(path)
    b = prod.SqliteStore(path)
    assert a.cas("lease:r1", 0, "w0") == (True, "w0", 1)
    assert b.cas("lease:r1", 0, "w1") == (False, "w0", 1)
    assert b.put("x", "1") == 2
    a.close()
    b.close()
    with prod.SqliteStore(path) as c:
        assert c.list("") == [("lease:r1", "w0", 1), ("x", "1", 2)]
        c.delete("x")
        assert c.put("y", "1") == 3  # the counter survives deletes and reopening
    db = sqlite3.connect(path)
    rows = db.execute("SELECT key, value, version FROM retrylab_kv ORDER BY key").fetchall()
    db.close()
    assert rows == [("lease:r1", "w0", 1), ("y", "1", 3)]
