"""A fake retrylab simulator for the client's tests.

It spawns an executor script as a subprocess with the protocol's channel on fd 3
(simulator -> executor) and fd 4 (executor -> simulator), or on other descriptors named by
``RETRYLAB_FD_IN``/``RETRYLAB_FD_OUT``, speaks protocol 1 from the simulator's side, and
checks every message the executor sends as strictly as retrylab does, against the protocol's
schema (``api/protocol.schema.json``, read at run time: known types, required fields and their
types, no unknown field), and the clients' conventions beyond it (increasing ``msg_id``...);
every message it sends is checked against the same schema. It keeps a transcript, a
store with the simulator's semantics, and fails a test with the executor's stderr when
something goes wrong. Wall-clock timeouts only guard against a hung executor; nothing in a
test depends on timing.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Wall-clock guard for one message (the executor's Python start and imports included).
RECV_TIMEOUT_S = 20.0

_ANY = object()


class ExecutorMessageError(AssertionError):
    pass


def _check(cond: bool, text: str, msg: dict[str, Any]) -> None:
    if not cond:
        raise ExecutorMessageError(f"{text}: {json.dumps(msg)}")


#: The protocol's one source, read at run time: the schema the Rust types generate.
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "api" / "protocol.schema.json"

#: The integer ranges of schemars' ``format`` values (Rust's integer types).
_FORMAT_RANGES = {
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


class ProtocolSchema:
    """``api/protocol.schema.json``, checked as strictly as the simulator reads: the subset of
    JSON Schema 2020-12 that schemars writes, and an object's unknown field is an error even
    where the schema leaves ``additionalProperties`` open (the simulator stays strict; only
    the clients ignore unknown fields)."""

    def __init__(self, path: Path = SCHEMA_PATH) -> None:
        self.schema = json.loads(path.read_text(encoding="utf-8"))
        self.defs: dict[str, Any] = self.schema["$defs"]
        self.version: int = self.schema["x-protocol-version"]
        self.variants = {direction: self._variants(direction) for direction in ("ToExec", "FromExec")}

    def _variants(self, direction: str) -> dict[str, Any]:
        out = {}
        for variant in self.defs[direction]["oneOf"]:
            variant = self._resolve(variant)
            out[variant["properties"]["type"]["const"]] = variant
        return out

    def _resolve(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            node = self.defs[node["$ref"].removeprefix("#/$defs/")]
        return node

    def kinds(self, direction: str) -> list[str]:
        return list(self.variants[direction])

    def problem(self, direction: str, msg: Any) -> str | None:
        """What is wrong with ``msg`` as a message of ``direction`` (``ToExec``: the simulator
        sends it; ``FromExec``: the executor does), or ``None``."""
        if not isinstance(msg, dict):
            return "not a JSON object"
        kind = msg.get("type")
        if kind not in self.variants[direction]:
            return f"unknown message type {kind!r} (protocol {self.version} has {', '.join(self.kinds(direction))})"
        return self._problem(self.variants[direction][kind], msg, kind)

    def _problem(self, node: Any, v: Any, at: str) -> str | None:
        if node is True:
            return None
        if node is False:
            return f"{at} is not allowed"
        if "$ref" in node:
            found = self._problem(self._resolve(node), v, at)
            if found:
                return found
        for key in ("anyOf", "oneOf"):
            if key in node:
                matched = sum(self._problem(b, v, at) is None for b in node[key])
                if matched == 0 or (key == "oneOf" and matched > 1):
                    return f"{at} matches {matched} of the {key} alternatives: {json.dumps(v)[:80]}"
        kind = _json_type(v)
        types = node.get("type")
        if types is not None:
            types = [types] if isinstance(types, str) else types
            if kind not in types and not (kind == "integer" and "number" in types):
                return f"{at} must be {' or '.join(types)}, not {json.dumps(v)[:80]}"
        if "const" in node and not (v == node["const"] and _json_type(node["const"]) == kind):
            return f"{at} must be {json.dumps(node['const'])}, not {json.dumps(v)[:80]}"
        if "enum" in node and not any(v == e and _json_type(e) == kind for e in node["enum"]):
            return f"{at} must be one of {', '.join(map(str, node['enum']))}, not {json.dumps(v)[:80]}"
        if kind in ("integer", "number"):
            low, high = _FORMAT_RANGES.get(node.get("format", ""), (None, None))
            low, high = node.get("minimum", low), node.get("maximum", high)
            if (low is not None and v < low) or (high is not None and v > high):
                return f"{at} must be in [{low}, {high}], not {v}"
        if kind == "array":
            prefix = node.get("prefixItems", [])
            for i, item in enumerate(v):
                sub = prefix[i] if i < len(prefix) else node.get("items", True)
                found = self._problem(sub, item, f"{at}[{i}]")
                if found:
                    return found
            if len(v) < node.get("minItems", 0) or len(v) > node.get("maxItems", len(v)):
                return f"{at} has {len(v)} items"
        if kind == "object":
            props = node.get("properties", {})
            for name in node.get("required", []):
                if name not in v:
                    return f"{at} lacks {name!r}"
            extra = node.get("additionalProperties", False if "properties" in node else True)
            for name, item in v.items():
                sub = props.get(name, extra)
                if sub is False:
                    return f"unknown field {name!r} in {at}"
                found = self._problem(sub, item, f"{at}.{name}")
                if found:
                    return found
        return None


PROTOCOL_SCHEMA = ProtocolSchema()

# What the schema cannot say: conventions of the clients this fake simulator also holds them to.
_KV_FIELDS = {
    "get": {"key"},
    "put": {"key", "value"},
    "cas": {"key", "expect_version", "value"},
    "delete": {"key"},
    "list": {"prefix"},
}


def check_message(msg: Any, last_msg_id: int) -> int:
    """Validate one executor message as retrylab reads it (the schema's ``FromExec``, strictly),
    and the clients' conventions beyond it; returns the last msg_id seen."""
    problem = PROTOCOL_SCHEMA.problem("FromExec", msg)
    if problem is not None:
        raise ExecutorMessageError(f"{problem}: {json.dumps(msg)}")
    kind = msg["type"]
    if kind == "hello":
        _check("client" in msg, "hello names its client", msg)
        _check(msg.get("fork", True) is True, "hello declares fork: true or leaves it out", msg)
    if kind == "forked":
        _check(msg["pid"] > 1, "forked carries a process id", msg)
    if kind == "http":
        _check(("body" in msg) != ("body_b64" in msg), "http carries exactly one of body, body_b64", msg)
        _check("headers" in msg and "timeout_ms" in msg, "the clients send headers and timeout_ms", msg)
        _check(all(k == k.lower() for k in msg["headers"]), "header names are lowercase", msg)
    if kind == "kv":
        fields = set(msg) - {"type", "msg_id", "op"}
        _check(fields == _KV_FIELDS[msg["op"]], f"kv {msg['op']} carries exactly {sorted(_KV_FIELDS[msg['op']])}", msg)
    if kind == "result":
        if msg["outcome"] == "ok":
            _check("detail" not in msg, "an ok result carries no detail", msg)
        else:
            _check("receipt" not in msg, "only an ok result carries a receipt", msg)
    if "msg_id" in msg:
        _check(msg["msg_id"] > last_msg_id, f"msg_id must increase (last {last_msg_id})", msg)
        last_msg_id = msg["msg_id"]
    return last_msg_id


class Store:
    """The simulator's store: store-wide versions from 1, never reused."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, int]] = {}
        self.last = 0

    def answer(self, msg: dict[str, Any], now_ms: int) -> dict[str, Any]:
        reply: dict[str, Any] = {"type": "kv_ok", "in_reply_to": msg["msg_id"], "ok": True, "now_ms": now_ms}
        op = msg["op"]
        if op == "get":
            value, version = self.entries.get(msg["key"], (None, 0))
            reply.update(value=value, version=version)
        elif op == "put":
            self.last += 1
            self.entries[msg["key"]] = (msg["value"], self.last)
            reply["version"] = self.last
        elif op == "cas":
            value, version = self.entries.get(msg["key"], (None, 0))
            if version == msg["expect_version"]:
                self.last += 1
                self.entries[msg["key"]] = (msg["value"], self.last)
                reply.update(value=msg["value"], version=self.last)
            else:
                reply.update(ok=False, value=value, version=version)
        elif op == "delete":
            reply["ok"] = self.entries.pop(msg["key"], None) is not None
        elif op == "list":
            reply["entries"] = [[k, v, ver] for k, (v, ver) in sorted(self.entries.items()) if k.startswith(msg["prefix"])]
        return reply


def subprocess_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of an executor: the test process's, minus any simulator variables,
    with the installed (or source) retrylab importable and no bytecode written."""
    import retrylab

    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRYLAB_")}
    package_root = str(Path(retrylab.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    env["TZ"] = "UTC"  # date.today() and datetime.now() without a zone read local time
    if extra:
        env.update(extra)
    return env


class FakeSim:
    """One executor process and the simulator's end of its channel."""

    def __init__(
        self,
        script: Path,
        tmp_path: Path,
        *,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        fds: str = "default",
    ) -> None:
        self.transcript: list[tuple[str, dict[str, Any]]] = []
        self.store = Store()
        self.now_ms = 0
        self._last_msg_id = 0
        self._buffer = b""
        sim_to_exec_r, sim_to_exec_w = os.pipe()
        exec_to_sim_r, exec_to_sim_w = os.pipe()
        self._stderr_path = tmp_path / f"executor-stderr-{id(self)}.txt"
        self._stdout_path = tmp_path / f"executor-stdout-{id(self)}.txt"
        stderr = open(self._stderr_path, "wb")
        stdout = open(self._stdout_path, "wb")
        full_env = {
            "RETRYLAB_PROTOCOL": "1",
        }
        cmd = [sys.executable, str(script), *(args or [])]
        try:
            if fds == "default":
                full_env.update(RETRYLAB_FD_IN="3", RETRYLAB_FD_OUT="4")

                def preexec() -> None:  # runs in the child: put the channel on fds 3 and 4
                    a = fcntl.fcntl(sim_to_exec_r, fcntl.F_DUPFD, 10)
                    b = fcntl.fcntl(exec_to_sim_w, fcntl.F_DUPFD, 10)
                    os.dup2(a, 3)
                    os.dup2(b, 4)
                    os.close(a)
                    os.close(b)

                self.proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    env=subprocess_env({**full_env, **(env or {})}),
                    close_fds=False,  # the pipes are close-on-exec; fds 3 and 4 are not
                    preexec_fn=preexec,
                )
            elif fds == "env":
                full_env.update(RETRYLAB_FD_IN=str(sim_to_exec_r), RETRYLAB_FD_OUT=str(exec_to_sim_w))
                self.proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    env=subprocess_env({**full_env, **(env or {})}),
                    pass_fds=(sim_to_exec_r, exec_to_sim_w),
                )
            else:
                raise ValueError(fds)
        finally:
            stderr.close()
            stdout.close()
            os.close(sim_to_exec_r)
            os.close(exec_to_sim_w)
        self._w = sim_to_exec_w
        self._r = exec_to_sim_r
        self.fd_numbers = (sim_to_exec_r, exec_to_sim_w)

    # -- plumbing --

    def stderr(self) -> str:
        return self._stderr_path.read_text(errors="replace")

    def stdout(self) -> str:
        return self._stdout_path.read_text(errors="replace")

    def _fail(self, text: str) -> AssertionError:
        return AssertionError(f"{text}\n--- executor stderr ---\n{self.stderr()}")

    def send(self, msg: dict[str, Any], *, check_clock: bool = True, check_schema: bool = True) -> None:
        """Send ``msg``, checked against the schema's ``ToExec`` (``check_schema=False``: a
        test that sends what the protocol does not allow, to see the client refuse it)."""
        if check_schema:
            problem = PROTOCOL_SCHEMA.problem("ToExec", msg)
            assert problem is None, f"the fake sim would send what the protocol does not allow: {problem}: {msg}"
        if "now_ms" in msg and check_clock:
            assert msg["now_ms"] >= self.now_ms or msg["type"] == "start", "the fake sim's clock went backwards"
            self.now_ms = msg["now_ms"]
        self.transcript.append(("sim", msg))
        os.write(self._w, (json.dumps(msg, separators=(",", ":")) + "\n").encode())

    def send_raw(self, data: bytes) -> None:
        os.write(self._w, data)

    def recv(self, timeout: float = RECV_TIMEOUT_S) -> dict[str, Any] | None:
        """The executor's next message, validated; ``None`` at EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"no message from the executor within {timeout} s")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 65536)
            if not chunk:
                if self._buffer:
                    raise self._fail(f"EOF after a partial line: {self._buffer!r}")
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            msg = json.loads(line)
        except ValueError:
            raise self._fail(f"the executor wrote a line that is not JSON: {line!r}") from None
        try:
            self._last_msg_id = check_message(msg, self._last_msg_id)
        except ExecutorMessageError as e:
            raise self._fail(str(e)) from None
        self.transcript.append(("exec", msg))
        return msg

    def expect(self, kind: str, **fields: Any) -> dict[str, Any]:
        """The next message must be of ``kind`` and have ``fields`` (``ANY`` matches any value)."""
        msg = self.recv()
        if msg is None:
            raise self._fail(f"expected {kind}, got EOF (exit status {self.proc.wait(10)})")
        if msg["type"] != kind:
            raise self._fail(f"expected {kind}, got {json.dumps(msg)}")
        for name, value in fields.items():
            if value is _ANY:
                if name not in msg:
                    raise self._fail(f"{kind} lacks {name}: {json.dumps(msg)}")
            elif msg.get(name, "<absent>") != value:
                raise self._fail(f"{kind}.{name}: expected {value!r}, got {msg.get(name, '<absent>')!r}: {json.dumps(msg)}")
        return msg

    def expect_eof(self) -> int:
        msg = self.recv()
        if msg is not None:
            raise self._fail(f"expected the executor to exit, got {json.dumps(msg)}")
        return self.wait()

    def wait(self, timeout: float = RECV_TIMEOUT_S) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise self._fail(f"the executor did not exit within {timeout} s") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._w, self._r):
            try:
                os.close(fd)
            except OSError:
                pass
        self._w = self._r = -1

    def close_channel(self) -> None:
        """Close the simulator's write end: EOF on the executor's fd 3."""
        os.close(self._w)
        self._w = -1

    # -- protocol steps --

    def handshake(
        self,
        *,
        tools: list[str] | None = None,
        config: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        provider: dict[str, Any] | None = None,
        mode: str = "sync",
    ) -> dict[str, Any]:
        hello = self.expect("hello", protocol=1, mode=mode, client="retrylab-python/0.1.0")
        self.send(
            {
                "type": "init",
                "protocol": PROTOCOL_SCHEMA.version,
                "executor": "python-test",
                "config": config if config is not None else {"attempts": 3, "timeout_ms": 5000, "backoff_ms": 100},
                "params": params if params is not None else {},
                "provider": provider
                if provider is not None
                else {"base_url": "http://provider.sim", "key_header": "Idempotency-Key", "http": {}},
                "tools": tools if tools is not None else ["create", "compensate"],
            }
        )
        self.expect("init_ok")
        return hello

    def start(self, *, seed: int = 1157098542, worker: int = 0, incarnation: int = 0, reset: bool = False, now_ms: int = 0) -> None:
        if reset:
            self._last_msg_id = 0  # message ids start again after a reset
        self.send({"type": "start", "worker": worker, "incarnation": incarnation, "seed": seed, "reset": reset, "now_ms": now_ms})
        self.expect("ready")

    def invoke(
        self,
        call: str,
        tool: str,
        args: dict[str, Any],
        *,
        issue: int = 1,
        now_ms: int | None = None,
        redelivery: bool = False,
    ) -> None:
        self.send(
            {
                "type": "invoke",
                "call": call,
                "issue": issue,
                "tool": tool,
                "args": args,
                "redelivery": redelivery,
                "now_ms": self.now_ms if now_ms is None else now_ms,
            }
        )

    def kv_round(self, **fields: Any) -> dict[str, Any]:
        """Expect a ``kv`` message (with ``fields``) and answer it from the store."""
        msg = self.expect("kv", **fields)
        self.send(self.store.answer(msg, self.now_ms))
        return msg

    def http_respond(self, msg: dict[str, Any], status: int, body: Any = "", *, headers: dict[str, str] | None = None, after_ms: int = 0) -> None:
        text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
        self.send(
            {
                "type": "http_response",
                "in_reply_to": msg["msg_id"],
                "status": status,
                "headers": headers if headers is not None else {"content-type": "application/json"},
                "body": text,
                "now_ms": self.now_ms + after_ms,
            }
        )

    def http_error(self, msg: dict[str, Any], error: str, *, after_ms: int = 0) -> None:
        self.send({"type": "http_error", "in_reply_to": msg["msg_id"], "error": error, "now_ms": self.now_ms + after_ms})

    def wake(self, msg: dict[str, Any]) -> None:
        self.send({"type": "wake", "in_reply_to": msg["msg_id"], "now_ms": self.now_ms + msg["ms"]})

    def shutdown(self) -> int:
        self.send({"type": "shutdown"})
        return self.expect_eof()

    def executor_messages(self) -> list[dict[str, Any]]:
        return [m for who, m in self.transcript if who == "exec"]

    def fork(self, fifo_dir: Path) -> ForkedSim:
        """Tell this process (a zygote) to fork, as retrylab does (protocol 1, section 7):
        the child's output FIFO opened for reading first, `fork`, `forked`, then its input
        FIFO opened for writing once the child has opened it; both names unlinked."""
        n = len(list(fifo_dir.glob("in-*")))
        to_child, from_child = fifo_dir / f"in-{n}", fifo_dir / f"out-{n}"
        os.mkfifo(to_child, 0o600)
        os.mkfifo(from_child, 0o600)
        r = os.open(from_child, os.O_RDONLY | os.O_NONBLOCK)
        self.send({"type": "fork", "in": str(to_child), "out": str(from_child)})
        pid = self.expect("forked")["pid"]
        deadline = time.monotonic() + RECV_TIMEOUT_S
        while True:
            try:
                w = os.open(to_child, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise self._fail(f"the forked process {pid} did not open its FIFO") from None
                time.sleep(0.0005)
        for fd in (r, w):
            os.set_blocking(fd, True)
        os.unlink(to_child)
        os.unlink(from_child)
        return ForkedSim(self, pid, w, r)


class _ForkedProcess:
    """A forked child as far as a test sees it: its zygote reaps it, so there is no exit
    status to read; `wait` returns 0 once it is gone."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def gone(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        return False

    def poll(self) -> int | None:
        return 0 if self.gone() else None

    def kill(self) -> None:
        for target in (-self.pid, self.pid):
            try:
                os.kill(target, 9)
            except ProcessLookupError:
                pass

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (timeout if timeout is not None else RECV_TIMEOUT_S)
        while not self.gone():
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or RECV_TIMEOUT_S)
            time.sleep(0.001)
        return 0


class ForkedSim(FakeSim):
    """The simulator's end of a forked child's channel; its stdout and stderr are its
    zygote's."""

    def __init__(self, zygote: FakeSim, pid: int, w: int, r: int) -> None:  # noqa: D107
        self.transcript = []
        self.store = Store()
        self.now_ms = 0
        self._last_msg_id = 0
        self._buffer = b""
        self._stderr_path = zygote._stderr_path
        self._stdout_path = zygote._stdout_path
        self.proc = _ForkedProcess(pid)  # type: ignore[assignment]
        self._w = w
        self._r = r
        self.fd_numbers = (w, r)


ANY = _ANY
