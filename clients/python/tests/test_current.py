"""retrylab.current(): the running call's ctx from code below the handler, under the
simulator (sync and async mode) and in production (issue 40, part 6); and strict mode's
refusal of a thread naming the tracing exporter that started it (part 5)."""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import retrylab
import retrylab.production as prod
from fakesim import FakeSim

HERE = Path(__file__).resolve().parent
CURRENT_APP = HERE / "executors" / "current_app.py"
CURRENT_ASYNC_APP = HERE / "executors" / "current_async_app.py"

NO_CALL = "no tool call is running: retrylab.current() is only available inside a tool handler or code it calls"


def create_args(ref: str, auth: str) -> dict[str, Any]:
    return {"ref": ref, "tenant": "t0", "authorization": auth}


@pytest.fixture
def csim(sim_factory: object) -> FakeSim:
    s: FakeSim = sim_factory(CURRENT_APP)  # type: ignore[operator]
    s.handshake()
    s.start()
    return s


# --- under the simulator, sync mode --------------------------------------------------------


def test_a_helper_not_given_ctx_reaches_the_store_of_its_call(csim: FakeSim) -> None:
    csim.invoke("c1", "create", create_args("r1", "a1"))
    csim.kv_round(op="put", key="seen:c1:1:a1", value="r1")
    csim.expect("result", call="c1", issue=1, outcome="ok")
    # The next call, a re-run (issue 2) of another call: its own id, issue and authorization.
    csim.invoke("c2", "create", create_args("r2", "a2"), issue=2)
    csim.kv_round(op="put", key="seen:c2:2:a2", value="r2")
    csim.expect("result", call="c2", issue=2, outcome="ok")
    assert csim.shutdown() == 0


def test_outside_a_call_current_says_so_and_inside_it_exposes_ctx_only(csim: FakeSim) -> None:
    csim.invoke("c1", "outside", {})
    assert csim.expect("log")["text"] == f"NoCallError: {NO_CALL}"
    exposed = json.loads(csim.expect("log")["text"])
    csim.expect("result", call="c1", outcome="ok")
    # The boundary of ctx: the call, its issue, arguments and store, never the intent.
    assert exposed == [
        "args", "call", "cancelled", "config", "incarnation", "issue", "kv", "params",
        "provider", "receipt", "redelivery", "tool", "worker",
    ]
    assert not any("intent" in name for name in dir(retrylab.Context))


def test_current_outside_any_call_raises_a_named_error() -> None:
    with pytest.raises(retrylab.NoCallError, match="^" + NO_CALL.replace("(", r"\(").replace(")", r"\)") + "$"):
        retrylab.current()
    assert issubclass(retrylab.NoCallError, retrylab.RetrylabError)


# --- under the simulator, async mode -------------------------------------------------------


def test_concurrent_async_calls_each_see_their_own_call(sim_factory: object) -> None:
    sim: FakeSim = sim_factory(CURRENT_ASYNC_APP)  # type: ignore[operator]
    sim.handshake(mode="async")
    sim.start()
    sim.invoke("c1", "create", {**create_args("r1", "a1"), "s": 1.0}, now_ms=0)
    first = sim.expect("sleep", ms=1000)
    sim.expect("idle")
    sim.invoke("c2", "create", {**create_args("r2", "a2"), "s": 0.5}, now_ms=0)
    second = sim.expect("sleep", ms=500)
    sim.expect("idle")
    # c2 wakes first, while c1 still waits: its helper and its child tasks see c2.
    sim.wake(second)
    sim.kv_round(op="put", key="seen:c2:1:a2", value="c2,c2")
    sim.expect("result", call="c2", outcome="ok")
    sim.expect("idle")
    sim.wake(first)
    sim.kv_round(op="put", key="seen:c1:1:a1", value="c1,c1")
    sim.expect("result", call="c1", outcome="ok")
    sim.expect("idle")
    assert sim.shutdown() == 0


# --- strict mode names the exporter behind a thread ---------------------------------------


def test_a_langsmith_like_thread_is_refused_naming_langsmith_and_its_variables(csim: FakeSim) -> None:
    csim.invoke("c1", "langsmith_like", {})
    text = csim.expect("log")["text"]
    assert csim.expect_eof() == 4
    assert text.startswith(
        "retrylab strict mode violation: real thread: threading.Thread.start() of "
        "'Thread-1 (_export)' (target langsmith._internal._background_thread.tracing_control_thread_func, "
        "started from __main__) - an executor runs single-threaded under retrylab"
    ), text
    # The culprit first, with the variables that switch it off; then the other known ones.
    assert "this looks like LangSmith tracing (LangChain, LangGraph): set LANGSMITH_TRACING=false and LANGCHAIN_TRACING_V2=false" in text
    assert text.index("LangSmith") < text.index("OTEL_SDK_DISABLED=true")
    for switch in ("OTEL_SDK_DISABLED=true", "OPENAI_AGENTS_DISABLE_TRACING=1", "unset SENTRY_DSN", "ANONYMIZED_TELEMETRY=false"):
        assert switch in text


def test_an_opentelemetry_batch_thread_is_refused_naming_otel_sdk_disabled(csim: FakeSim) -> None:
    csim.invoke("c1", "otel_like", {})
    text = csim.expect("log")["text"]
    assert csim.expect_eof() == 4
    assert "of 'OtelBatchSpanProcessor' (target __main__.otel_like.<locals>.<lambda>, started from __main__)" in text
    assert "this looks like OpenTelemetry SDK (its batch processors, metric readers and OTLP exporters): set OTEL_SDK_DISABLED=true" in text


def test_langsmith_tracing_switched_on_by_the_environment_is_named(sim_factory: object) -> None:
    pytest.importorskip("langsmith")
    env = {"LANGCHAIN_TRACING_V2": "true", "LANGSMITH_API_KEY": "lsv2-test-not-a-key"}
    sim: FakeSim = sim_factory(CURRENT_APP, args=["--langsmith"], env=env)  # type: ignore[operator]
    sim.handshake()
    sim.start()
    sim.invoke("c1", "real_langsmith", {})
    text = sim.expect("log")["text"]
    assert sim.expect_eof() == 4
    assert "(target langsmith._internal._background_thread." in text, text
    assert "this looks like LangSmith tracing" in text and "LANGCHAIN_TRACING_V2=false" in text


# --- production ------------------------------------------------------------------------------


@pytest.fixture
def registry() -> Iterator[None]:
    from retrylab import _runtime

    saved = dict(_runtime._REGISTRY)
    try:
        yield
    finally:
        _runtime._REGISTRY.clear()
        _runtime._REGISTRY.update(saved)


def test_production_a_helper_not_given_ctx_reaches_the_store(registry: None) -> None:
    def remember(ref: str) -> str:
        call = retrylab.current()
        call.kv.put(f"seen:{call.call}:{call.issue}:{call.authorization}", ref)
        return call.call

    @retrylab.tool("t_current")
    def t_current(args: dict[str, Any], ctx: retrylab.Context) -> dict[str, Any]:
        return {"call": remember(args["ref"]), "same": retrylab.current() is ctx}

    store = prod.MemoryStore()
    r = prod.call("t_current", create_args("r1", "a1"), store=store, call_id="job-1", issue=3)
    assert (r.outcome, r.value) == ("ok", {"call": "job-1", "same": True})
    assert store.list("seen:") == [("seen:job-1:3:a1", "r1", 1)]
    # After the call, and when a handler raises, no call is current any more.
    with pytest.raises(retrylab.NoCallError):
        retrylab.current()

    @retrylab.tool("t_raise")
    def t_raise(args: dict[str, Any], ctx: retrylab.Context) -> None:
        raise RuntimeError(retrylab.current().call)

    assert prod.call("t_raise", {}, store=store, call_id="job-2").detail == "RuntimeError: job-2"
    with pytest.raises(retrylab.NoCallError):
        retrylab.current()


def test_production_calls_in_concurrent_tasks_each_see_their_own(registry: None) -> None:
    seen: list[tuple[str, str]] = []

    @retrylab.tool("t_task")
    def t_task(args: dict[str, Any], ctx: retrylab.Context) -> None:
        seen.append((args["who"], retrylab.current().call))

    async def one(who: str) -> retrylab.Result:
        await asyncio.sleep(0)
        return prod.call("t_task", {"who": who}, store=prod.MemoryStore(), call_id=f"job-{who}")

    async def both() -> None:
        # Each task runs in a copy of the context: the calls do not see each other.
        await asyncio.gather(one("a"), one("b"))

    asyncio.run(both())
    assert sorted(seen) == [("a", "job-a"), ("b", "job-b")]
    # A copied context carries the call to code run in it (e.g. a thread pool's work).
    store = prod.MemoryStore()

    @retrylab.tool("t_copy")
    def t_copy(args: dict[str, Any], ctx: retrylab.Context) -> str:
        snapshot = contextvars.copy_context()
        return snapshot.run(lambda: retrylab.current().call)

    assert prod.call("t_copy", {}, store=store, call_id="job-c").value == "job-c"


def test_a_real_socket_to_a_known_exporter_names_it_and_its_switch() -> None:
    import socket

    retrylab.install(strict=True)
    try:
        with pytest.raises(retrylab.StrictModeError) as refused:
            socket.getaddrinfo("api.smith.langchain.com", 443)
        assert str(refused.value).endswith(
            "; this looks like LangSmith tracing (LangChain, LangGraph), switched on by the environment the "
            "executor inherits: set LANGSMITH_TRACING=false and LANGCHAIN_TRACING_V2=false, or unset them "
            "(langsmith also reads LANGSMITH_TRACING_V2 and LANGCHAIN_TRACING: each one set must be false)"
        )
        with pytest.raises(retrylab.StrictModeError, match=r"\('localhost', 4318\).*this looks like OpenTelemetry SDK.*OTEL_SDK_DISABLED=true"):
            socket.create_connection(("localhost", 4318))
        with pytest.raises(retrylab.StrictModeError, match=r"this looks like Sentry.*unset SENTRY_DSN"):
            socket.getaddrinfo("o0.ingest.sentry.io", 443)
        # Any other address: the refusal as before, nothing guessed.
        with pytest.raises(retrylab.StrictModeError, match=r"requests_session\(\)$"):
            socket.getaddrinfo("api.example.com", 443)
    finally:
        retrylab.uninstall()
