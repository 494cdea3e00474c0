"""Async mode of protocol 1: tool handlers as tasks of an asyncio event loop on virtual time.

``retrylab.run(mode="async")`` serves the registered tools with :class:`AsyncRuntime`:

- each ``invoke`` starts a task running the tool's handler (an ``async def``, or a plain
  function, whose return value or exception is its claim, as in sync mode); several calls
  run at once;
- the event loop (:class:`VirtualLoop`) is asyncio's own machinery (tasks, futures,
  ``asyncio.gather``, ``asyncio.wait_for``, ``asyncio.timeout``, locks, events) with two
  differences: its clock, ``loop.time()``, is the virtual clock, and a timer
  (``loop.call_at``/``call_later``, hence ``asyncio.sleep`` and every timeout) is a
  protocol ``sleep`` of the whole milliseconds to its deadline (rounded up), which the
  simulator answers with ``wake`` when virtual time gets there;
- an HTTP request through :func:`retrylab.httpx_async_client` (or
  :class:`retrylab.httpx.AsyncSimTransport`) is an ``http`` message; the task awaits its
  ``http_response``/``http_error`` while the others run;
- the store (``ctx.kv``) stays synchronous: the simulator answers ``kv`` inside the turn,
  so a store operation never lets another task run in between (two ``kv`` calls of one
  task with no ``await`` between them are atomic with respect to the process's other
  calls);
- a turn ends when no callback is ready (every task waits for an answer, a timer or
  another task): the client sends ``idle`` and blocks reading fd 3 for the next event
  (one per turn: an ``invoke``, an answer, a ``wake``, a ``cancel``);
- ``cancel`` (the agent stopped waiting): ``ctx.cancelled`` becomes true and, with
  ``cancel_tasks`` (the default), the call's task is cancelled: the handler's pending
  ``await`` raises ``asyncio.CancelledError``. A handler that lets it propagate claims
  ``unknown`` (detail ``cancelled``: the request it was waiting for may have been
  applied); one that catches it claims what it returns or raises;
- a ``start`` with ``reset: true`` while tasks are blocked (the simulator ended that run
  early) cancels every task of the old run, lets them unwind (any protocol operation they
  attempt meanwhile raises ``CancelledError`` again; nothing reaches the simulator), forgets
  their outstanding requests and timers, and starts the new run.
- a zygote (``fork``, protocol 1 section 7) makes no event loop: it answers ``hello``,
  ``init`` and its ``fork``s synchronously, and each forked child makes its own loop when
  its first message arrives.

Blocking calls that would freeze a real event loop are refused with
:class:`~retrylab.RetrylabError` naming the async form: ``time.sleep``/``ctx.sleep``
(``await asyncio.sleep``) and a synchronous HTTP client (``retrylab.httpx_async_client``).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import inspect
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVarTuple, Unpack

from ._channel import Channel
from ._context import Context
from ._current import CALL
from ._errors import OutsideHandlerError, ProtocolError, RetrylabError
from ._results import Result, describe_exception, from_exception, from_return
from ._runtime import (
    HttpAnswer,
    HttpFailure,
    Runtime,
    _short,
    active_runtime,
    http_message,
    result_message,
    seconds_to_ms,
)
from . import _virtual

__all__ = ["AsyncRuntime", "VirtualLoop", "current_http_async"]

_Ts = TypeVarTuple("_Ts")

#: The call whose handler (or a task it started) is running: the variable behind
#: retrylab.current(), set in each call's task (a task copies its context when created).
_CURRENT: contextvars.ContextVar[Context | None] = CALL

#: How many callbacks an abandoned run may still run while its tasks unwind.
_UNWIND_LIMIT = 100_000


class VirtualLoop(asyncio.BaseEventLoop):
    """An asyncio event loop driven by the simulator's turns: ``time()`` is the virtual
    clock, a timer is a protocol ``sleep``, and :meth:`run_ready` runs the ready callbacks
    until none is left (the end of a turn). It does no I/O of its own."""

    def __init__(self, runtime: AsyncRuntime) -> None:
        super().__init__()
        self._rt = runtime
        self._queue: collections.deque[asyncio.Handle] = collections.deque()
        #: Every task, in creation order (finished ones pruned now and then): an abandoned
        #: run's tasks are cancelled in this order, not in a set's.
        self._tasks: list[asyncio.Task[Any]] = []

    def create_task(self, coro: Any, *, name: object = None, context: contextvars.Context | None = None) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = super().create_task(coro, name=name, context=context)
        if len(self._tasks) >= 64:
            self._tasks = [t for t in self._tasks if not t.done()]
        self._tasks.append(task)
        return task

    def live_tasks(self) -> list[asyncio.Task[Any]]:
        """The tasks not yet done, in creation order."""
        self._tasks = [t for t in self._tasks if not t.done()]
        return list(self._tasks)

    def time(self) -> float:
        return _virtual.now_ms() / 1000

    def call_soon(
        self,
        callback: Callable[[Unpack[_Ts]], object],
        *args: Unpack[_Ts],
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        handle = asyncio.Handle(callback, args, self, context)
        self._queue.append(handle)
        return handle

    def call_at(
        self,
        when: float,
        callback: Callable[[Unpack[_Ts]], object],
        *args: Unpack[_Ts],
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        handle = asyncio.TimerHandle(when, callback, args, self, context)
        ms = seconds_to_ms(when - self.time())
        if ms == 0:
            self._queue.append(handle)
        else:
            self._rt.timer(ms, handle)
        return handle

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        # The protocol has no way to take back a sleep: its wake comes and is ignored.
        pass

    def wake(self, handle: asyncio.TimerHandle) -> None:
        """The simulator's ``wake`` for ``handle``'s timer."""
        if not handle.cancelled():
            self._queue.append(handle)

    def run_ready(self, limit: int | None = None) -> None:
        """Run ready callbacks, in the order they became ready, until none is left."""
        runs = 0
        while self._queue:
            handle = self._queue.popleft()
            if handle.cancelled():
                continue
            handle._run()
            self._rt.check_fatal()
            runs += 1
            if limit is not None and runs >= limit:
                return

    def drop_ready(self) -> None:
        self._queue.clear()

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        # Deterministic text on stderr (asyncio's default goes through `logging`).
        message = context.get("message", "unhandled exception in the event loop")
        exception = context.get("exception")
        line = f"retrylab (async mode): {message}"
        if isinstance(exception, BaseException):
            line += f": {describe_exception(exception)}"
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


class _AsyncBackend:
    """``ctx``'s time, log and state in async mode."""

    def __init__(self, runtime: AsyncRuntime) -> None:
        self._rt = runtime

    def now_ms(self) -> int:
        return _virtual.now_ms()

    def sleep(self, seconds: float) -> None:
        self._rt.sleep(seconds)

    def log(self, ctx: Context, text: str) -> None:
        self._rt.require_handler("ctx.log()")
        self._rt.send({"type": "log", "text": text})

    def state(self, ctx: Context, name: str, receipt: str | None) -> None:
        self._rt.require_handler("ctx.state()")
        message: dict[str, Any] = {"type": "state", "call": ctx.call, "state": name}
        if receipt is not None:
            message["receipt"] = receipt
        self._rt.send(message)


class AsyncRuntime(Runtime):
    """One process's side of protocol 1 in async mode."""

    def __init__(
        self,
        channel: Channel,
        handlers: dict[str, Callable[..., Any]],
        on_reset: Callable[[], None] | None,
        *,
        cancel_tasks: bool = True,
    ) -> None:
        super().__init__(channel, handlers, on_reset)
        self.cancel_tasks = cancel_tasks
        self.backend = _AsyncBackend(self)  # type: ignore[assignment]
        #: The event loop, made by :meth:`serve` once the process is past its zygote phase
        #: (a zygote makes none: its forked children each make their own).
        self.loop: VirtualLoop
        #: Outstanding ``http`` requests: msg_id -> the future its answer resolves.
        self.requests: dict[int, asyncio.Future[dict[str, Any]]] = {}
        #: Outstanding ``sleep``s: msg_id -> the timer its ``wake`` runs.
        self.timers: dict[int, asyncio.TimerHandle] = {}
        #: The running calls' tasks and contexts, by (call, issue), in delivery order.
        self.tasks: dict[tuple[str, int], tuple[asyncio.Task[None], Context]] = {}
        #: Set while an abandoned run's tasks unwind: they may not reach the simulator.
        self.unwinding = False
        #: Tasks that would not end when their run was abandoned: kept, never run again.
        self.zombies: list[asyncio.Task[Any]] = []

    # -- guards --

    def send(self, message: dict[str, Any]) -> None:
        if self.unwinding:
            raise asyncio.CancelledError("the run was ended by the simulator")
        super().send(message)

    def check_fatal(self) -> None:
        """Re-raise, outside the tasks, an error that ends the process."""
        if self.violation is not None:
            self.abort_strict()
        if self.fatal is not None and not self.unwinding:
            raise self.fatal

    def require_handler(self, what: str) -> Context:
        ctx = _CURRENT.get()
        if ctx is None:
            raise OutsideHandlerError(
                f"{what} was called outside a tool handler's task: in async mode, requests, "
                "timers, store operations and log lines belong to a tool call, so call it from "
                "a @retrylab.tool handler or a task it started (not at import time, nor in on_reset)"
            )
        return ctx

    def sleep(self, seconds: float) -> None:
        raise RetrylabError(
            f"time.sleep({seconds!r}) (or ctx.sleep) in async mode would block the event loop and "
            "every other call: use `await asyncio.sleep(...)`"
        )

    def http(
        self, method: str, url: str, headers: dict[str, str], body: bytes, timeout_ms: int | None
    ) -> HttpAnswer | HttpFailure:
        raise RetrylabError(
            f"a synchronous HTTP request ({method} {url}) in async mode would block the event loop: "
            "use retrylab.httpx_async_client() (an httpx.AsyncClient) and await it"
        )

    # -- requests --

    async def http_async(
        self, method: str, url: str, headers: dict[str, str], body: bytes, timeout_ms: int | None
    ) -> HttpAnswer | HttpFailure:
        """Send an ``http`` message for the running call and await its answer."""
        ctx = self.require_handler(f"an HTTP request ({method} {url})")
        msg_id = self.new_msg_id()
        future: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.send(http_message(ctx, msg_id, method, url, headers, body, timeout_ms))
        self.requests[msg_id] = future
        reply = await future
        return self.http_answer(ctx, reply)

    def timer(self, ms: int, handle: asyncio.TimerHandle) -> None:
        """A ``sleep`` of ``ms`` for an event-loop timer."""
        self.require_handler(f"a timer of {ms} ms (asyncio.sleep, a timeout)")
        msg_id = self.new_msg_id()
        self.send({"type": "sleep", "msg_id": msg_id, "ms": ms})
        self.timers[msg_id] = handle

    # -- the loop --

    def serve(self, hello: dict[str, Any]) -> None:
        self.handshake(hello)
        # A zygote serves its `fork`s inside this first recv() and never gets past it; a
        # forked child (or a process that was never forked) returns with its first message.
        # The event loop is made only then: a zygote forks with no loop, no selector and no
        # thread, so that each child starts its own loop from the state after `init_ok`.
        message = self.recv()
        self.loop = VirtualLoop(self)
        asyncio.events._set_running_loop(self.loop)
        self.loop._thread_id = threading.get_ident()  # type: ignore[attr-defined]
        while True:
            self.serve_one(message)
            message = self.recv()

    def serve_one(self, message: dict[str, Any]) -> None:
        """One message between turns: a ``start`` is answered ``ready``; anything else runs
        the loop's ready callbacks and ends the turn with ``idle``."""
        kind = message["type"]
        if kind == "start":
            if self.started is not None and message["reset"]:
                self.abandon()
            self.start(message)
            self.send({"type": "ready"})
            return
        if kind == "invoke":
            self.invoke_async(message)
        elif kind in ("http_response", "http_error"):
            future = self.requests.pop(message["in_reply_to"], None)
            if future is None:
                raise self._fail(ProtocolError(f"`{kind}` in reply to no outstanding http: {_short(message)}"))
            if not future.cancelled():
                future.set_result(message)
        elif kind == "wake":
            handle = self.timers.pop(message["in_reply_to"], None)
            if handle is None:
                raise self._fail(ProtocolError(f"`wake` in reply to no outstanding sleep: {_short(message)}"))
            self.loop.wake(handle)
        elif kind == "cancel":
            self.note_cancel(message)
        else:
            raise self._fail(
                ProtocolError(
                    "between turns, expected `start`, `invoke`, `http_response`, `http_error`, "
                    f"`wake`, `cancel` or `shutdown`, got: {_short(message)}"
                )
            )
        self.loop.run_ready()
        self.send({"type": "idle"})

    def note_cancel(self, message: dict[str, Any]) -> None:
        key = (message["call"], message["issue"])
        self.cancels.add(key)
        running = self.tasks.get(key)
        if running is not None:
            task, ctx = running
            ctx.cancelled = True
            if self.cancel_tasks:
                task.cancel("the agent stopped waiting (cancel)")

    def invoke_async(self, message: dict[str, Any]) -> None:
        handler, ctx = self.context(message)
        key = (ctx.call, ctx.issue)
        if key in self.tasks:
            raise self._fail(ProtocolError(f"`invoke` of {ctx.call} issue {ctx.issue}, which is running: {_short(message)}"))
        task = self.loop.create_task(self._serve_call(handler, ctx), name=f"retrylab {ctx.call} issue {ctx.issue}")
        self.tasks[key] = (task, ctx)

    async def _serve_call(self, handler: Callable[..., Any], ctx: Context) -> None:
        _CURRENT.set(ctx)
        try:
            try:
                value = handler(ctx.args, ctx)
                if inspect.isawaitable(value):
                    value = await value
            except asyncio.CancelledError:
                if self.unwinding:
                    raise
                result = Result("unknown", detail="cancelled")
            except Exception as e:
                result = from_exception(e)
            else:
                try:
                    result = from_return(value, ctx.receipt, ctx.tool)
                except (TypeError, ValueError) as e:
                    result = Result("unknown", detail=describe_exception(e))
        finally:
            self.tasks.pop((ctx.call, ctx.issue), None)
        self.send(result_message(ctx.call, ctx.issue, result))

    def abandon(self) -> None:
        """End the tasks of a run the simulator cut short: cancel them in the order their
        calls came, let them unwind (they cannot reach the simulator meanwhile), and forget
        what they waited for."""
        self.unwinding = True
        try:
            for task in self.loop.live_tasks():
                task.cancel()
            self.loop.run_ready(limit=_UNWIND_LIMIT)
            self.zombies.extend(self.loop.live_tasks())
        finally:
            self.unwinding = False
        self.loop.drop_ready()
        self.tasks.clear()
        self.requests.clear()
        self.timers.clear()


async def current_http_async(
    method: str, url: str, headers: dict[str, str], body: bytes, timeout_ms: int | None
) -> HttpAnswer | HttpFailure:
    """The simulated exchange the async HTTP integrations use."""
    rt = active_runtime()
    if not isinstance(rt, AsyncRuntime):
        raise OutsideHandlerError(
            f"an HTTP request ({method} {url}) through the simulated async transport, but "
            + (
                "retrylab.run() is not serving"
                if rt is None
                else "retrylab.run() serves in sync mode: serve async handlers with retrylab.run(mode=\"async\")"
            )
        )
    return await rt.http_async(method, url, headers, body, timeout_ms)
