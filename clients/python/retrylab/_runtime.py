"""The sync-mode loop of protocol 1 and the handler registry (async mode: :mod:`._async`)."""

from __future__ import annotations

import base64
import ctypes
import gc
import inspect
import json
import math
import os
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, Union

from . import _virtual
from ._channel import Channel, simulator_fds
from ._context import Context
from ._current import bound
from ._errors import OutsideHandlerError, ProtocolError, RetrylabError, StrictModeError
from ._kv import check_key, check_value, check_version
from ._protocol import ERROR_CODE_NAMES, FROM_EXEC_FIELDS, PROTOCOL_VERSION, TO_EXEC_FIELDS, Spec
from ._results import Result, describe_exception, from_exception, from_return

__all__ = [
    "CLIENT",
    "PROTOCOL",
    "Handler",
    "tool",
    "run",
    "registered_tools",
    "under_simulator",
    "active_runtime",
    "HttpAnswer",
    "HttpFailure",
    "HTTP_ERRORS",
    "seconds_to_ms",
    "MODES",
]

PROTOCOL = PROTOCOL_VERSION
CLIENT = "retrylab-python/0.1.0"

#: The modes ``hello.mode`` may name (from the protocol's schema).
MODES: tuple[str, ...] = tuple(FROM_EXEC_FIELDS["hello"]["mode"]["spec"]["enum"])

#: The transport errors an ``http_error`` may carry (from the protocol's schema).
HTTP_ERRORS: tuple[str, ...] = tuple(TO_EXEC_FIELDS["http_error"]["error"]["spec"]["enum"])

#: Exit status after the simulator's ``error`` message.
EXIT_SIMULATOR_ERROR = 3
#: Exit status after a strict-mode violation.
EXIT_STRICT_VIOLATION = 4

HandlerReturn = Union[Result, dict[str, Any], str, None]
Handler = Callable[[dict[str, Any], Context], HandlerReturn]
_H = TypeVar("_H", bound=Callable[..., Any])

_REGISTRY: dict[str, Callable[..., Any]] = {}


def tool(name: str) -> Callable[[_H], _H]:
    """Register the decorated function as the handler of tool ``name``::

        @retrylab.tool("create")
        def create(args: dict, ctx: retrylab.Context) -> retrylab.Result | dict | str | None:
            ...

    The handler's return value or exception is its claim (see :mod:`retrylab` for the rules:
    ``dict``/``str``/``None`` and :func:`retrylab.ok` are ``ok``; :func:`retrylab.failed` and
    :class:`retrylab.Definite` are a definite ``failed``; :func:`retrylab.unknown`,
    :class:`retrylab.Indefinite` and any other exception are ``unknown``).
    """
    if callable(name) and not isinstance(name, str):
        raise TypeError(
            "@retrylab.tool needs the tool's name: write @retrylab.tool(\"create\"), not @retrylab.tool"
        )
    if not isinstance(name, str) or not name:
        raise TypeError(f"a tool's name is a non-empty str, not {name!r}")

    def register(fn: _H) -> _H:
        if not callable(fn):
            raise TypeError(f"@retrylab.tool({name!r}) decorates a function, not {type(fn).__name__}")
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(
                f"tool {name!r} already has a handler ({_qualname(_REGISTRY[name])}); one handler per tool"
            )
        _REGISTRY[name] = fn
        return fn

    return register


def _qualname(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def registered_tools() -> list[str]:
    """The names registered with :func:`tool`, in registration order."""
    return list(_REGISTRY)


def handler_for(name: str) -> Callable[..., Any] | None:
    return _REGISTRY.get(name)


def seconds_to_ms(seconds: float) -> int:
    """Seconds to whole milliseconds, rounded up (a sleep or a timeout never ends early),
    ignoring float noise below a nanosecond (``0.3`` s is 300 ms, not 301)."""
    return max(0, math.ceil(seconds * 1000 - 1e-6))


# --- validation of the simulator's messages ------------------------------------------------
#
# The tables are generated from the protocol's schema (api/protocol.schema.json, by
# clients/gen_protocol.py): ``TO_EXEC_FIELDS`` gives, per message type, each field's
# requiredness and its JSON value. A message is checked against them here: a known ``type``,
# every required field present, every known field of its type. A field the table does not
# know is ignored, so that a newer simulator may add fields without breaking this client.

_TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean",
    "null": "null",
    "array": "a list",
    "object": "an object",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _matches(spec: Spec, value: Any) -> bool:
    """Whether ``value`` is of ``spec`` (see clients/gen_protocol.py); an object's unknown
    fields are ignored."""
    types = spec.get("types")
    if types is None:
        return True
    kind = _json_type(value)
    if kind not in types and not (kind == "integer" and "number" in types):
        return False
    if "enum" in spec and not any(type(v) is type(value) and v == value for v in spec["enum"]):
        return False
    if kind in ("integer", "number"):
        return spec.get("min", value) <= value <= spec.get("max", value)
    if kind == "array":
        if "tuple" in spec:
            return len(value) == len(spec["tuple"]) and all(_matches(s, v) for s, v in zip(spec["tuple"], value))
        return "items" not in spec or all(_matches(spec["items"], v) for v in value)
    if kind == "object":
        if "values" in spec and not all(_matches(spec["values"], v) for v in value.values()):
            return False
        for name, field in spec.get("fields", {}).items():
            if name in value:
                if not _matches(field["spec"], value[name]):
                    return False
            elif field["required"]:
                return False
    return True


def _describe(spec: Spec) -> str:
    """``spec`` in words, for an error message."""
    if "enum" in spec:
        return "one of " + ", ".join(str(v) for v in spec["enum"])
    types = spec.get("types")
    if types is None:
        return "any value"
    words = []
    for t in types:
        word = _TYPE_WORDS.get(t, t)
        if t in ("integer", "number") and "min" in spec:
            word += f" >= {spec['min']}"
        if t == "array" and "tuple" in spec:
            word = "[" + ", ".join(_describe(s) for s in spec["tuple"]) + "]"
        elif t == "array" and "items" in spec:
            word += " of " + _describe(spec["items"])
        elif t == "object" and "fields" in spec:
            needed = [n for n, f in spec["fields"].items() if f["required"]]
            word += " with " + ", ".join(f"{n} ({_describe(spec['fields'][n]['spec'])})" for n in needed)
        elif t == "object" and "values" in spec:
            word += " of " + _describe(spec["values"])
        words.append(word)
    return " or ".join(words)


def validate(message: dict[str, Any]) -> dict[str, Any]:
    """Check a simulator message against the protocol's generated tables: a known ``type``,
    every required field present, every known field of its type; unknown fields are ignored
    (forward compatibility). Raises :class:`ProtocolError` naming the fault."""
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(f"the simulator sent a message without a string `type`: {_short(message)}")
    fields = TO_EXEC_FIELDS.get(kind)
    if fields is None:
        raise ProtocolError(
            f"the simulator sent a message of unknown type {kind!r} (protocol {PROTOCOL} has "
            f"{', '.join(sorted(TO_EXEC_FIELDS))}): {_short(message)}"
        )
    for name, field in fields.items():
        if name not in message:
            if field["required"]:
                raise ProtocolError(f"`{kind}` lacks its field {name!r} (protocol {PROTOCOL}): {_short(message)}")
        elif not _matches(field["spec"], message[name]):
            raise ProtocolError(
                f"`{kind}`.{name} must be {_describe(field['spec'])}, not {json.dumps(message[name])[:80]}: "
                f"{_short(message)}"
            )
    return message


def _short(message: Any) -> str:
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, default=repr)
    return text if len(text) <= 300 else text[:300] + "..."


# --- HTTP answers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpAnswer:
    """An ``http_response``: the status, the headers (as the simulator sent them) and the body."""

    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class HttpFailure:
    """An ``http_error``: one of :data:`HTTP_ERRORS`."""

    error: str


# --- the runtime -----------------------------------------------------------------------------


class _SimKV:
    """``ctx.kv`` under the simulator: each operation is a ``kv`` message answered by ``kv_ok``."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    def get(self, key: str) -> str | None:
        return self.get_versioned(key)[0]

    def get_versioned(self, key: str) -> tuple[str | None, int]:
        reply = self._rt.kv("get", key=check_key(key))
        return self._field(reply, "value", "get"), self._version(reply, "get")

    def put(self, key: str, value: str) -> int:
        reply = self._rt.kv("put", key=check_key(key), value=check_value(value))
        return self._version(reply, "put")

    def cas(self, key: str, expect_version: int, value: str) -> tuple[bool, str | None, int]:
        reply = self._rt.kv(
            "cas",
            key=check_key(key),
            expect_version=check_version(expect_version),
            value=check_value(value),
            _may_fail=True,
        )
        return reply["ok"], self._field(reply, "value", "cas"), self._version(reply, "cas")

    def delete(self, key: str) -> bool:
        existed: bool = self._rt.kv("delete", key=check_key(key), _may_fail=True)["ok"]
        return existed

    def list(self, prefix: str) -> list[tuple[str, str, int]]:
        reply = self._rt.kv("list", prefix=check_key(prefix, "prefixe"))
        entries = reply.get("entries")
        if entries is None:
            raise self._rt._fail(ProtocolError(f"`kv_ok` for a list lacks `entries`: {_short(reply)}"))
        out: list[tuple[str, str, int]] = []
        for entry in entries:
            if (
                not isinstance(entry, list)
                or len(entry) != 3
                or not isinstance(entry[0], str)
                or not isinstance(entry[1], str)
                or not isinstance(entry[2], int)
                or isinstance(entry[2], bool)
            ):
                raise self._rt._fail(
                    ProtocolError(f"`kv_ok`.entries holds {entry!r}, not [key, value, version]: {_short(reply)}")
                )
            out.append((entry[0], entry[1], entry[2]))
        return out

    def _field(self, reply: dict[str, Any], name: str, op: str) -> str | None:
        if name not in reply:
            raise self._rt._fail(ProtocolError(f"`kv_ok` for a {op} lacks `{name}`: {_short(reply)}"))
        value: str | None = reply[name]
        return value

    def _version(self, reply: dict[str, Any], op: str) -> int:
        version = reply.get("version")
        if version is None:
            raise self._rt._fail(ProtocolError(f"`kv_ok` for a {op} lacks `version`: {_short(reply)}"))
        return int(version)

    def __repr__(self) -> str:
        return "<retrylab simulator store>"


class _SimBackend:
    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    def now_ms(self) -> int:
        return _virtual.now_ms()

    def sleep(self, seconds: float) -> None:
        _virtual._v_sleep(seconds)

    def log(self, ctx: Context, text: str) -> None:
        self._rt.require_handler("ctx.log()")
        self._rt.send({"type": "log", "text": text})

    def state(self, ctx: Context, name: str, receipt: str | None) -> None:
        self._rt.require_handler("ctx.state()")
        message: dict[str, Any] = {"type": "state", "call": ctx.call, "state": name}
        if receipt is not None:
            message["receipt"] = receipt
        self._rt.send(message)


class RunAbandoned(BaseException):
    """A ``start`` with ``reset: true`` arrived while a handler was blocked: the run it
    belonged to was ended by the simulator (a search cut it short). Raised through the
    handler's frames (a ``BaseException``, so that ``except Exception`` in user code and retry
    libraries does not catch it) up to the loop, which resets and starts the new run."""

    def __init__(self, start: dict[str, Any]) -> None:
        super().__init__("the run was ended by the simulator")
        self.start = start


class Runtime:
    """One process's side of protocol 1 in sync mode."""

    def __init__(
        self,
        channel: Channel,
        handlers: dict[str, Callable[..., Any]],
        on_reset: Callable[[], None] | None,
    ) -> None:
        self.channel = channel
        self.handlers = handlers
        self.on_reset = on_reset
        self.next_msg_id = 1
        self.init: dict[str, Any] | None = None
        self.started: dict[str, Any] | None = None
        self.current: Context | None = None
        self.cancels: set[tuple[str, int]] = set()
        self.fatal: BaseException | None = None
        self.violation: StrictModeError | None = None
        self.handshake_done = False
        #: The ``start`` that ended the run a handler was blocked in, until the loop takes it.
        self.abandoned: dict[str, Any] | None = None
        self.kv_store = _SimKV(self)
        self.backend = _SimBackend(self)
        #: Whether ``hello`` declared ``"fork": true`` (this process may be a zygote).
        self.fork_capable = False
        #: Whether this process is a zygote's child (it is never told ``fork`` itself).
        self.forked = False
        #: Whether this zygote warmed the HTTP library's code before its first fork.
        self.warmed = False

    # -- sending and receiving --

    def send(self, message: dict[str, Any]) -> None:
        if self.violation is not None:
            self.abort_strict()
        if self.fatal is not None:
            raise self.fatal
        if self.abandoned is not None:
            # A handler that caught RunAbandoned goes on: its run is over all the same.
            raise RunAbandoned(self.abandoned)
        self.channel.send(message)

    def _fail(self, error: BaseException) -> BaseException:
        self.fatal = error
        return error

    def recv(self) -> dict[str, Any]:
        """The next simulator message, validated, with the clock set from it. ``shutdown``
        and EOF raise ``SystemExit(0)``; ``error`` prints it and raises ``SystemExit(3)``.
        A ``fork`` is served here (protocol 1, section 7): the zygote answers ``forked`` and
        reads on; its child reads its first message from its own channel."""
        while True:
            message = self._recv_one()
            if message["type"] != "fork":
                return message
            self.fork(message)

    def _recv_one(self) -> dict[str, Any]:
        if self.fatal is not None:
            raise self.fatal
        try:
            message = self.channel.recv()
            if message is None:
                raise self._fail(SystemExit(0))
            validate(message)
        except ProtocolError as e:
            raise self._fail(e) from None
        kind = message["type"]
        # The clock moves with the messages that carry it (an unknown field is ignored).
        now = message.get("now_ms") if "now_ms" in TO_EXEC_FIELDS[kind] else None
        if now is not None:
            if kind != "start" and now < _virtual.now_ms():
                raise self._fail(
                    ProtocolError(
                        f"`{kind}`.now_ms {now} is before the clock's {_virtual.now_ms()}: virtual "
                        f"time went backwards outside a `start`: {_short(message)}"
                    )
                )
            _virtual.set_now_ms(now)
        if kind == "error":
            code = message["code"]
            sys.stderr.write(
                f"retrylab: the simulator refused a message (error code {code}, "
                f"{ERROR_CODE_NAMES.get(code, 'unknown')}): {message['text']}\n"
            )
            sys.stderr.flush()
            raise self._fail(SystemExit(EXIT_SIMULATOR_ERROR))
        if kind == "shutdown":
            raise self._fail(SystemExit(0))
        return message

    def await_reply(self, msg_id: int, kinds: tuple[str, ...], sent: str) -> dict[str, Any]:
        """Block until the answer to ``msg_id``; ``cancel`` notifications meanwhile are
        recorded (and set ``ctx.cancelled``)."""
        while True:
            message = self.recv()
            kind = message["type"]
            if kind == "cancel":
                self.note_cancel(message)
                continue
            if kind in kinds and message.get("in_reply_to") == msg_id:
                return message
            if kind == "start" and message["reset"] and self.current is not None:
                self.abandoned = message
                raise RunAbandoned(message)
            raise self._fail(
                ProtocolError(
                    f"after `{sent}` msg_id {msg_id}, expected {' or '.join(f'`{k}`' for k in kinds)} "
                    f"in_reply_to {msg_id}, got: {_short(message)}"
                )
            )

    # -- a zygote's forks (protocol 1, section 7) --

    def fork(self, message: dict[str, Any]) -> None:
        """Serve ``fork``: the parent answers ``forked`` with the child's pid; the child
        returns with its channel on the FIFOs the message names and the state of a process
        that has just answered ``init``."""
        if not self.fork_capable:
            raise self._fail(
                ProtocolError(f"`fork`, but this process did not declare \"fork\": true in its hello: {_short(message)}")
            )
        if not self.handshake_done or self.started is not None or self.forked:
            raise self._fail(
                ProtocolError(
                    "`fork` is for a zygote: a process between its `init_ok` and any `start`, not "
                    f"forked itself: {_short(message)}"
                )
            )
        hazard = fork_hazard()
        if hazard is not None:
            raise self._fail(
                RetrylabError(
                    f"`fork`, but this process is no longer safe to fork: {hazard} (it was at "
                    "`hello`: something started it since); serve with retrylab.run(fork=False)"
                )
            )
        # Children are reaped by the kernel as they end: the zygote never waits for them.
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        sys.stdout.flush()
        sys.stderr.flush()
        if not self.warmed:
            # Once, before the first fork: the HTTP library's request path run on a throwaway
            # client (retrylab.httpx.warm), if the executor uses retrylab's httpx transport.
            self.warmed = True
            warm = getattr(sys.modules.get("retrylab.httpx"), "warm", None)
            if warm is not None:
                warm()
        # The zygote's objects to the permanent generation: a child's collections then do
        # not touch (and copy) the pages the imports filled.
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            self._become_child(message["in"], message["out"])
            return
        try:
            # Also done here, so that the group exists before the simulator knows the pid.
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first, or is gone already
        self.send({"type": "forked", "pid": pid})

    def _become_child(self, in_path: str, out_path: str) -> None:
        try:
            try:
                os.setpgid(0, 0)
            except OSError:
                pass  # the zygote did it first
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            # This order: `out` first, which does not block (the simulator opened its reading
            # end before `fork`), then `in`, which blocks until the simulator opens its
            # writing end (once it has our pid); it then unlinks both names.
            fd_out = os.open(out_path, os.O_WRONLY | os.O_CLOEXEC)
            fd_in = os.open(in_path, os.O_RDONLY | os.O_CLOEXEC)
            old = self.channel
            os.dup2(fd_in, old.fd_in)
            os.dup2(fd_out, old.fd_out)
            os.close(fd_in)
            os.close(fd_out)
        except BaseException as e:  # noqa: BLE001 - a half-made child must not go on
            sys.stderr.write(f"retrylab: a forked process could not open its channel: {e!r}\n")
            sys.stderr.flush()
            os._exit(70)
        # As after `init`: nothing the zygote's own channel held, no message id used.
        self.channel = Channel(old.fd_in, old.fd_out)
        self.forked = True
        self.next_msg_id = 1
        self.cancels.clear()
        self.current = None
        self.abandoned = None

    def note_cancel(self, message: dict[str, Any]) -> None:
        key = (message["call"], message["issue"])
        self.cancels.add(key)
        ctx = self.current
        if ctx is not None and (ctx.call, ctx.issue) == key:
            ctx.cancelled = True

    def new_msg_id(self) -> int:
        msg_id = self.next_msg_id
        self.next_msg_id += 1
        return msg_id

    def require_handler(self, what: str) -> Context:
        ctx = self.current
        if ctx is None:
            raise OutsideHandlerError(
                f"{what} was called while no tool handler is running: in sync mode, requests, "
                "sleeps, store operations and log lines belong to the turn of a tool call, so "
                "call it from a @retrylab.tool handler (not at import time, nor in on_reset)"
            )
        return ctx

    # -- strict mode --

    def record_violation(self, error: StrictModeError) -> None:
        if self.violation is None:
            self.violation = error

    def abort_strict(self) -> None:
        error = self.violation
        assert error is not None
        if self.handshake_done:
            try:
                self.channel.send({"type": "log", "text": f"retrylab strict mode violation: {error}"})
            except BaseException:  # the simulator may be gone; the exit status still says it
                pass
        lines = "".join(traceback.format_exception(error)) if error.__traceback__ is not None else f"{error}\n"
        try:
            sys.stdout.flush()
        except Exception:
            pass
        sys.stderr.write(
            "retrylab: strict mode violation; the executor exits with status "
            f"{EXIT_STRICT_VIOLATION} (a violation is fatal even when the handler catches the "
            "StrictModeError):\n" + lines
        )
        sys.stderr.flush()
        os._exit(EXIT_STRICT_VIOLATION)

    # -- simulated operations --

    def sleep(self, seconds: float) -> None:
        self.require_handler(f"time.sleep({seconds!r})")
        ms = seconds_to_ms(seconds)
        if ms == 0:
            return
        msg_id = self.new_msg_id()
        self.send({"type": "sleep", "msg_id": msg_id, "ms": ms})
        self.await_reply(msg_id, ("wake",), "sleep")

    def kv(self, op: str, _may_fail: bool = False, **fields: Any) -> dict[str, Any]:
        self.require_handler(f"ctx.kv.{op}()")
        msg_id = self.new_msg_id()
        self.send({"type": "kv", "msg_id": msg_id, "op": op, **fields})
        reply = self.await_reply(msg_id, ("kv_ok",), f"kv {op}")
        if not reply["ok"] and not _may_fail:
            raise self._fail(
                ProtocolError(f"`kv_ok` with ok false for a {op} (only a cas and a delete answer false): {_short(reply)}")
            )
        return reply

    def http(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes,
        timeout_ms: int | None,
    ) -> HttpAnswer | HttpFailure:
        """Send an ``http`` message for the running handler's call and block for its answer."""
        ctx = self.require_handler(f"an HTTP request ({method} {url})")
        msg_id = self.new_msg_id()
        self.send(http_message(ctx, msg_id, method, url, headers, body, timeout_ms))
        reply = self.await_reply(msg_id, ("http_response", "http_error"), "http")
        return self.http_answer(ctx, reply)

    def http_answer(self, ctx: Context, reply: dict[str, Any]) -> HttpAnswer | HttpFailure:
        """The answer an ``http_response`` or ``http_error`` carries (checked)."""
        if reply["type"] == "http_error":
            # One of HTTP_ERRORS: the table checked it.
            error = reply["error"]
            return HttpFailure(error)
        # The table checked the headers' values (strings) and the body (UTF-8 text).
        data = reply["body"].encode("utf-8")
        status = reply["status"]
        if 200 <= status < 300:
            _note_receipt(ctx, data)
        return HttpAnswer(status, dict(reply["headers"]), data)

    # -- the loop --

    def serve(self, hello: dict[str, Any]) -> None:
        self.handshake(hello)
        while True:
            message = self.recv()
            kind = message["type"]
            if kind == "cancel":
                self.note_cancel(message)
            elif kind == "start":
                self.start(message)
                self.send({"type": "ready"})
            elif kind == "invoke":
                try:
                    self.invoke(message)
                except RunAbandoned as ended:
                    # The run was cut short while the handler waited: start the next one.
                    self.abandoned = None
                    self.current = None
                    self.start(ended.start)
                    self.send({"type": "ready"})
            else:
                raise self._fail(
                    ProtocolError(
                        f"between turns, expected `start`, `invoke`, `cancel` or `shutdown`, got: {_short(message)}"
                    )
                )

    def handshake(self, hello: dict[str, Any]) -> None:
        """``hello``, ``init``, ``init_ok``."""
        self.send(hello)
        message = self.recv()
        if message["type"] != "init":
            raise self._fail(ProtocolError(f"after `hello`, expected `init`, got: {_short(message)}"))
        if message["protocol"] != PROTOCOL:
            raise self._fail(
                ProtocolError(f"`init`.protocol is {message['protocol']}; this client speaks protocol {PROTOCOL} only")
            )
        self.init = message
        self.send({"type": "init_ok"})
        self.handshake_done = True

    def start(self, message: dict[str, Any]) -> None:
        if self.started is not None and not message["reset"]:
            raise self._fail(
                ProtocolError(
                    "`start` with reset false, but this process already started (worker "
                    f"{self.started['worker']}, incarnation {self.started['incarnation']}): a reused "
                    f"process must be told reset: true: {_short(message)}"
                )
            )
        if message["reset"]:
            self.next_msg_id = 1
            self.cancels.clear()
            self.current = None
            if self.on_reset is not None:
                self.on_reset()
        _virtual.seed(message["seed"])
        _sync_storage_environment()
        self.started = message

    def context(self, message: dict[str, Any]) -> tuple[Callable[..., Any], Context]:
        """The handler of an ``invoke`` and the ``ctx`` it receives."""
        if self.started is None:
            raise self._fail(ProtocolError(f"`invoke` before `start`: {_short(message)}"))
        name = message["tool"]
        handler = self.handlers.get(name)
        if handler is None:
            raise self._fail(
                ProtocolError(
                    f"`invoke` of tool {name!r}, which this process did not declare in `hello` "
                    f"(it handles {', '.join(self.handlers)}): {_short(message)}"
                )
            )
        assert self.init is not None
        call, issue = message["call"], message["issue"]
        ctx = Context(
            call=call,
            issue=issue,
            tool=name,
            args=message["args"],
            worker=self.started["worker"],
            incarnation=self.started["incarnation"],
            redelivery=message["redelivery"],
            cancelled=(call, issue) in self.cancels,
            params=self.init["params"],
            config=self.init["config"],
            provider=self.init["provider"],
            kv=self.kv_store,
            backend=self.backend,
        )
        return handler, ctx

    def invoke(self, message: dict[str, Any]) -> None:
        handler, ctx = self.context(message)
        call, issue, name = ctx.call, ctx.issue, ctx.tool
        self.current = ctx
        try:
            try:
                with bound(ctx):  # retrylab.current() below the handler
                    value = handler(ctx.args, ctx)
            except Exception as e:
                result = from_exception(e)
            else:
                try:
                    result = from_return(value, ctx.receipt, name)
                except (TypeError, ValueError) as e:
                    result = Result("unknown", detail=describe_exception(e))
        finally:
            self.current = None
        self.send(result_message(call, issue, result))


def result_message(call: str, issue: int, result: Result) -> dict[str, Any]:
    """The ``result`` message of a claim."""
    reply: dict[str, Any] = {"type": "result", "call": call, "issue": issue, "outcome": result.outcome}
    if result.receipt is not None:
        reply["receipt"] = result.receipt
    if result.detail is not None:
        reply["detail"] = result.detail
    elif result.outcome != "ok":
        reply["detail"] = result.outcome
    return reply


def http_message(
    ctx: Context, msg_id: int, method: str, url: str, headers: dict[str, str], body: bytes, timeout_ms: int | None
) -> dict[str, Any]:
    """The ``http`` message of a request for ``ctx``'s call."""
    message: dict[str, Any] = {
        "type": "http",
        "msg_id": msg_id,
        "call": ctx.call,
        "method": method,
        "url": url,
        "headers": headers,
    }
    try:
        message["body"] = body.decode("utf-8")
    except UnicodeDecodeError:
        message["body_b64"] = base64.b64encode(body).decode("ascii")
    message["timeout_ms"] = timeout_ms
    return message


def _note_receipt(ctx: Context, body: bytes) -> None:
    if not body.lstrip().startswith(b"{"):
        return
    try:
        value = json.loads(body)
    except ValueError:
        return
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        ctx.receipt = value["id"]


#: The variables retrylab's shim sets at each ``start`` (docs/executor-protocol.md, section 9).
_STORAGE_VARIABLES = ("RETRYLAB_RUN_DIR", "RETRYLAB_WORKER_DIR", "HOME", "TMPDIR")


def _sync_storage_environment() -> None:
    """``os.environ`` as the shim left the process's environment at this ``start``: the
    run's storage (``os.environ`` is a copy made when the interpreter started, and a forked
    life inherits its zygote's); and ``tempfile``'s cached directory forgotten. Nothing
    without the shim (this client's tests, production)."""
    getenv = _libc_getenv()
    if getenv is None:
        return
    for name in _STORAGE_VARIABLES:
        value = getenv(name.encode())
        if value is not None:
            os.environ[name] = os.fsdecode(value)
    tempfile.tempdir = None


def _libc_getenv() -> Callable[[bytes], bytes | None] | None:
    """libc's ``getenv`` when retrylab's shim is loaded in this process, else ``None``."""
    global _GETENV
    if _GETENV is False:
        try:
            libc = ctypes.CDLL(None)
            libc.retrylab_shim_version  # the shim's marker: loaded, or AttributeError
            fn = libc.getenv
            fn.restype = ctypes.c_char_p
            fn.argtypes = [ctypes.c_char_p]
            _GETENV = fn
        except (OSError, AttributeError):
            _GETENV = None
    return _GETENV  # type: ignore[return-value]


_GETENV: Any = False


def fork_hazard() -> str | None:
    """Why this process may not be a zygote, or ``None``: a fork copies only the forking
    thread, so another Python thread (started at import) would be missing from every child;
    an asyncio event loop already running or set (``asyncio.set_event_loop``, or
    ``asyncio.get_event_loop()`` at import) holds a selector and a wake-up socket pair that
    the zygote's children would share. Threads a C library starts natively are not seen."""
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    if others:
        return (
            f"{len(others)} other thread{'s' if len(others) > 1 else ''} running ({', '.join(others)}): "
            "a fork copies only the forking thread"
        )
    aio = sys.modules.get("asyncio")
    if aio is None:
        return None  # never imported: no event loop exists
    if aio.events._get_running_loop() is not None:
        return "an asyncio event loop is running (retrylab.run() was called from inside one)"
    policy = getattr(aio.events, "_event_loop_policy", None)
    loop = getattr(getattr(policy, "_local", None), "_loop", None)
    if loop is not None and not loop.is_closed():
        return (
            "an asyncio event loop was set (asyncio.set_event_loop, or asyncio.get_event_loop() "
            "outside a loop, at import): its selector would be shared by the zygote's children"
        )
    return None


_ACTIVE: Runtime | None = None


def active_runtime() -> Runtime | None:
    """The running simulator session, once :func:`run` has started it."""
    return _ACTIVE


def under_simulator() -> bool:
    """Whether this process runs under retrylab: :func:`run` is serving, or the simulator's
    environment (``RETRYLAB_FD_IN``) is present. The HTTP client factories use it, so that a
    client built at import time, before :func:`run`, is already the simulated one."""
    return _ACTIVE is not None or "RETRYLAB_FD_IN" in os.environ


def provider_base_url() -> str | None:
    """``init.provider.base_url`` once ``init`` has arrived."""
    rt = _ACTIVE
    if rt is None or rt.init is None:
        return None
    url = rt.init["provider"].get("base_url")
    return url if isinstance(url, str) else None


def current_http(
    method: str, url: str, headers: dict[str, str], body: bytes, timeout_ms: int | None
) -> HttpAnswer | HttpFailure:
    """The simulated exchange the HTTP integrations use."""
    rt = _ACTIVE
    if rt is None:
        raise OutsideHandlerError(
            f"an HTTP request ({method} {url}) through the simulated transport, but retrylab.run() "
            "is not serving: under retrylab, requests are sent from a tool handler while run() "
            "is serving; outside the simulator, retrylab.httpx_client()/requests_session() "
            "return ordinary clients"
        )
    return rt.http(method, url, headers, body, timeout_ms)


def run(
    hello_assumptions: Sequence[str] | None = None,
    guarantee: Sequence[str] | None = None,
    on_reset: Callable[[], None] | None = None,
    mode: str = "sync",
    cancel_tasks: bool = True,
    fork: bool | None = None,
) -> None:
    """Serve the registered tools to the simulator; never returns.

    ``mode="sync"`` (the default): one call at a time, each handler a plain function.
    ``mode="async"``: the handlers may be ``async def``, several calls run at once as tasks
    of an asyncio event loop whose clock is the virtual one (``asyncio.sleep`` is a
    protocol ``sleep``; HTTP goes through :func:`retrylab.httpx_async_client`); with
    ``cancel_tasks`` (the default) the agent's ``cancel`` cancels the call's task (see
    :mod:`retrylab._async`).

    Sends ``hello`` (protocol 1, ``mode``, the registered tools, and
    ``hello_assumptions``/``guarantee`` when given), answers ``init`` and then each
    ``start`` (``ready``; on ``reset: true`` the client forgets its clock, random state,
    message ids and pending cancels, and calls ``on_reset()`` for the application's own
    state: ``reset`` comes only with the opt-in ``--executor-lives reuse``, for which
    ``on_reset`` is a speed hook) and each ``invoke`` (the handler's ``result``). Exits with status 0 on
    ``shutdown`` or EOF, 3 after the simulator's ``error`` message (printed to stderr), 4
    after a strict-mode violation; raises :class:`ProtocolError` on anything the protocol
    does not allow.

    ``fork`` (default: true): declare ``"fork": true`` in ``hello``, so that this process is
    a zygote whose forked children run the worker lives (``--executor-lives fork``, the
    default): nothing from an earlier life (module-level state) reaches a later one, as when
    a real process dies. A zygote forks after ``init`` and before any call; in async
    mode, before its event loop exists: each child makes its own. Pass ``fork=False`` for a
    program that starts threads or opens connections at import (a fork copies only the
    forking thread; the children would share a connection), or creates an asyncio event
    loop at import. A Python thread other than this one, or an asyncio loop running or set,
    is found at ``hello``: with the default, ``fork`` is then not declared (a note on stderr
    says why; every worker life is a new process); ``fork=True`` raises
    :class:`RetrylabError` instead.

    Installs the virtual clock, seeded randomness and strict mode (:func:`retrylab.install`)
    unless already installed. Outside the simulator it raises
    :class:`NotUnderSimulatorError` saying how to run under retrylab.
    """
    global _ACTIVE
    if _ACTIVE is not None:
        raise RetrylabError("retrylab.run() is already serving in this process")
    if mode not in MODES:
        raise ValueError(f"mode is \"sync\" or \"async\", not {mode!r}")
    fds = simulator_fds()
    tools = registered_tools()
    if not tools:
        raise RetrylabError(
            "no tool is registered: decorate the handlers with @retrylab.tool(\"name\") before "
            "calling retrylab.run()"
        )
    if mode == "sync":
        for name in tools:
            if inspect.iscoroutinefunction(_REGISTRY[name]):
                raise RetrylabError(
                    f"the handler of tool {name!r} is an `async def`: serve it with "
                    "retrylab.run(mode=\"async\")"
                )
    hello: dict[str, Any] = {"type": "hello", "protocol": PROTOCOL, "mode": mode, "client": CLIENT, "tools": tools}
    forks = fork is not False and hasattr(os, "fork")
    hazard = fork_hazard() if forks else None
    if hazard is not None:
        if fork:
            raise RetrylabError(f"fork=True, but this process is not safe to fork: {hazard}; pass fork=False")
        sys.stderr.write(
            f"retrylab: this process does not offer to fork ({hazard}): every worker life runs in a "
            "new process; retrylab.run(fork=False) says so without this note\n"
        )
        sys.stderr.flush()
        forks = False
    if forks:
        hello["fork"] = True
    if hello_assumptions is not None:
        hello["assumptions"] = _names(hello_assumptions, "hello_assumptions")
    if guarantee is not None:
        if hello_assumptions is None:
            raise ValueError(
                "a guarantee holds under assumptions: pass hello_assumptions=[...] with guarantee=[...] "
                "(protocol 1: `guarantee` is optional, with `assumptions`)"
            )
        hello["guarantee"] = _names(guarantee, "guarantee")
    if not _virtual.installed():
        _virtual.install(strict=True)
    handlers = {name: _REGISTRY[name] for name in tools}
    runtime: Runtime
    if mode == "async":
        from ._async import AsyncRuntime

        runtime = AsyncRuntime(Channel(*fds), handlers, on_reset, cancel_tasks=cancel_tasks)
    else:
        runtime = Runtime(Channel(*fds), handlers, on_reset)
    runtime.fork_capable = forks
    _ACTIVE = runtime
    _virtual._state.sleep_hook = runtime.sleep
    _virtual._state.violation_hook = runtime.record_violation
    runtime.serve(hello)


def _names(values: Sequence[str], what: str) -> list[str]:
    if isinstance(values, str):
        raise TypeError(f"{what} is a list of names, not a single str ({values!r})")
    out = list(values)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{what} holds names (str), not {v!r}")
    return out
