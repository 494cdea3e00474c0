"""Who starts threads in an executor that never asked for one: tracing and telemetry
exporters, switched on by the environment the executor inherits (the simulator passes its
own environment through). Strict mode's refusal of a thread names the culprit it recognises
and the variable that turns each known one off (docs/your-executor.md, "The executor's
environment", cites where each variable is documented)."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from types import FrameType

__all__ = ["Culprit", "CULPRITS", "describe_thread", "thread_advice", "address_advice"]


@dataclass(frozen=True)
class Culprit:
    #: What it is, as a user knows it.
    name: str
    #: Module prefixes: the thread's target, its class, or the code that started it.
    modules: tuple[str, ...]
    #: Thread name prefixes the library gives its threads.
    thread_names: tuple[str, ...]
    #: How to turn it off.
    switch: str
    #: Host name suffixes its exporter sends to (a real socket or DNS lookup).
    hosts: tuple[str, ...] = ()
    #: Ports its exporter sends to by default (on any host).
    ports: tuple[int, ...] = ()


CULPRITS: tuple[Culprit, ...] = (
    Culprit(
        "LangSmith tracing (LangChain, LangGraph)",
        ("langsmith", "langchain_core.tracers", "langchain.callbacks.tracers"),
        (),
        "set LANGSMITH_TRACING=false and LANGCHAIN_TRACING_V2=false, or unset them (langsmith also "
        "reads LANGSMITH_TRACING_V2 and LANGCHAIN_TRACING: each one set must be false)",
        hosts=("smith.langchain.com",),
    ),
    Culprit(
        "OpenTelemetry SDK (its batch processors, metric readers and OTLP exporters)",
        ("opentelemetry",),
        ("OtelBatch", "OtelPeriodicExportingMetricReader"),
        "set OTEL_SDK_DISABLED=true (code that builds its own BatchSpanProcessor starts the thread "
        "whatever the variable: skip that setup when retrylab.under_simulator())",
        ports=(4317, 4318),  # OTLP over gRPC and over HTTP
    ),
    Culprit(
        "OpenAI Agents SDK tracing",
        ("agents.tracing",),
        (),
        "set OPENAI_AGENTS_DISABLE_TRACING=1",
    ),
    Culprit(
        "Sentry",
        ("sentry_sdk", "raven"),
        ("sentry-sdk.", "raven-sentry."),
        "unset SENTRY_DSN (sentry_sdk.init() without a dsn reads it; with neither, the SDK sends nothing)",
        hosts=("sentry.io",),
    ),
    Culprit(
        "PostHog usage telemetry (embedded by libraries such as Chroma and browser-use)",
        ("posthog",),
        (),
        "set ANONYMIZED_TELEMETRY=false (Chroma, browser-use) or the embedding library's own opt-out",
        hosts=("posthog.com",),
    ),
)

#: Frames of these modules are machinery between the code that wants a thread and start().
_MACHINERY = ("threading", "concurrent.futures", "retrylab", "multiprocessing")


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _starter(frame: FrameType | None) -> str | None:
    """The module of the first frame, going out, that is not threading machinery."""
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if isinstance(module, str) and not _within(module, _MACHINERY):
            return module
        frame = frame.f_back
    return None


def _modules(thread: threading.Thread, frame: FrameType | None) -> dict[str, str]:
    """Where the thread comes from: its target's module, the class of a bound target, the
    thread's own class (a ``Thread`` subclass), and the module whose code started it."""
    out: dict[str, str] = {}
    target = getattr(thread, "_target", None)
    if target is not None:
        module = getattr(target, "__module__", None)
        if isinstance(module, str):
            out["target"] = f"{module}.{getattr(target, '__qualname__', getattr(target, '__name__', '?'))}"
        owner = getattr(target, "__self__", None)
        if owner is not None and not isinstance(owner, type(sys)):
            out["target class"] = f"{type(owner).__module__}.{type(owner).__qualname__}"
    cls = type(thread)
    if cls is not threading.Thread:
        out["thread class"] = f"{cls.__module__}.{cls.__qualname__}"
    starter = _starter(frame)
    if starter is not None:
        out["started from"] = starter
    return out


def describe_thread(thread: threading.Thread, frame: FrameType | None) -> tuple[str, Culprit | None]:
    """The thread in words (its name, target, class, starting module) and the known culprit
    it matches, if any."""
    where = _modules(thread, frame)
    words = repr(thread.name)
    if where:
        words += " (" + ", ".join(f"{k} {v}" for k, v in where.items()) + ")"
    for culprit in CULPRITS:
        if any(thread.name.startswith(n) for n in culprit.thread_names) or any(
            _within(v, culprit.modules) for v in where.values()
        ):
            return words, culprit
    return words, None


def thread_advice(culprit: Culprit | None) -> str:
    """What to do: the recognised culprit's switch first, then every known one."""
    if culprit is not None:
        others = "; ".join(f"{c.name}: {c.switch}" for c in CULPRITS if c is not culprit)
        return (
            f"this looks like {culprit.name}: {culprit.switch}. Other known culprits (tracing and "
            f"telemetry exporters switched on by the environment, which the executor inherits): {others}"
        )
    known = "; ".join(f"{c.name}: {c.switch}" for c in CULPRITS)
    return (
        "if no code of yours starts it, a tracing or telemetry exporter switched on by the "
        f"environment (which the executor inherits) may: {known}"
    )


def address_advice(host: object, port: object) -> str:
    """For a real socket or DNS lookup: `` - this looks like <culprit>: <switch>`` when the
    address is a known exporter's (its host, or OTLP's default ports), else ``""``."""
    name = host.lower().rstrip(".") if isinstance(host, str) else ""
    for culprit in CULPRITS:
        if any(name == h or name.endswith("." + h) for h in culprit.hosts) or (
            isinstance(port, int) and port in culprit.ports
        ):
            return (
                f"; this looks like {culprit.name}, switched on by the environment the executor "
                f"inherits: {culprit.switch}"
            )
    return ""
