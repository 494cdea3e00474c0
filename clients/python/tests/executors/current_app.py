"""An executor whose code below the handlers reaches the call through retrylab.current()
(issue 40, part 6), and whose handlers start threads the way tracing exporters do (part 5)."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import retrylab

# Outside a tool call, current() says so.
try:
    retrylab.current()
except retrylab.NoCallError as e:
    AT_IMPORT = f"{type(e).__name__}: {e}"
else:
    AT_IMPORT = "current() answered at import time"


def remember(ref: str) -> str:
    """A helper the handler calls without giving it ctx, as a library would be."""
    call = retrylab.current()
    call.kv.put(f"seen:{call.call}:{call.issue}:{call.authorization}", ref)
    return call.call


def lookup_tool(ref: str) -> dict[str, Any]:
    """A LangChain-style @tool body: it takes the model's arguments only, never ctx."""
    return {"call": remember(ref)}


@retrylab.tool("create")
def create(args: dict[str, Any], ctx: retrylab.Context) -> dict[str, Any]:
    out = lookup_tool(args["ref"])
    if retrylab.current() is not ctx:
        raise AssertionError("current() is not the handler's ctx")
    return out


@retrylab.tool("outside")
def outside(args: dict[str, Any], ctx: retrylab.Context) -> None:
    ctx.log(AT_IMPORT)
    # What current() exposes: ctx's public attributes, nothing about the intent.
    ctx.log(json.dumps(sorted(k for k in vars(retrylab.current()) if not k.startswith("_"))))


def _export() -> None:
    pass


# Named as LangSmith's background exporter is (langsmith/_internal/_background_thread.py),
# without importing langsmith.
_export.__module__ = "langsmith._internal._background_thread"
_export.__qualname__ = "tracing_control_thread_func"


@retrylab.tool("langsmith_like")
def langsmith_like(args: dict[str, Any], ctx: retrylab.Context) -> None:
    threading.Thread(target=_export, daemon=True).start()


@retrylab.tool("otel_like")
def otel_like(args: dict[str, Any], ctx: retrylab.Context) -> None:
    # The name OpenTelemetry's BatchSpanProcessor gives its worker.
    threading.Thread(target=lambda: None, name="OtelBatchSpanProcessor", daemon=True).start()


if "--langsmith" in sys.argv:
    # Imported before run(), as an application does; tracing is switched on (or not) by the
    # environment alone.
    from langsmith import traceable

    try:  # what @traceable imports at its first call, imported here as LangChain apps do
        import langchain_core.callbacks.manager  # noqa: F401
    except ImportError:
        pass

    @traceable
    def step(x: int) -> int:
        return x + 1

    @retrylab.tool("real_langsmith")
    def real_langsmith(args: dict[str, Any], ctx: retrylab.Context) -> int:
        return step(1)


if __name__ == "__main__":
    retrylab.run(fork=False)
