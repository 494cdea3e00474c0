"""The JSON-lines channel to the simulator (protocol 1, section 1).

The simulator starts the executor with two extra descriptors: it writes to the one named
by ``RETRYLAB_FD_IN`` (default 3) and reads the one named by ``RETRYLAB_FD_OUT`` (default 4).
Each message is one JSON object on one ``\\n``-terminated UTF-8 line.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from ._errors import NotUnderSimulatorError, ProtocolError

__all__ = ["Channel", "DEFAULT_FD_IN", "DEFAULT_FD_OUT", "simulator_fds"]

DEFAULT_FD_IN = 3
DEFAULT_FD_OUT = 4

_HOW_TO_RUN = (
    "run it under retrylab (the executor's command in the model's `designs`, e.g. "
    '{"name": "mine", "command": ["python3", "executor.py"]}), which opens fd 3 and fd 4 and '
    "sets RETRYLAB_FD_IN/RETRYLAB_FD_OUT; to call a handler outside the simulator, use "
    "retrylab.production.call(tool, args, store=retrylab.production.SqliteStore(path))"
)


def _fd_is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _fd_is_channel_like(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _env_fd(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        fd = int(raw)
    except ValueError:
        raise NotUnderSimulatorError(f"{name}={raw!r} is not a file descriptor number") from None
    if fd < 0:
        raise NotUnderSimulatorError(f"{name}={raw!r} is not a file descriptor number")
    return fd


def simulator_fds() -> tuple[int, int]:
    """The (in, out) descriptors of the simulator's channel, or raise
    :class:`NotUnderSimulatorError` with instructions when this process was not started by
    retrylab.

    With ``RETRYLAB_FD_IN`` set, both descriptors it and ``RETRYLAB_FD_OUT`` (default 4) name
    must be open. Without it, fd 3 and fd 4 are used only when both are open pipes or
    sockets, as the simulator makes them (a terminal or a file left open on fd 3 is not
    mistaken for the simulator).
    """
    protocol = os.environ.get("RETRYLAB_PROTOCOL")
    if protocol is not None and protocol != "1":
        raise NotUnderSimulatorError(
            f"RETRYLAB_PROTOCOL={protocol!r}: this client (retrylab-python 0.1.0) speaks "
            "protocol 1 only; install a client that speaks the simulator's version"
        )
    if "RETRYLAB_FD_IN" in os.environ:
        fd_in = _env_fd("RETRYLAB_FD_IN", DEFAULT_FD_IN)
        fd_out = _env_fd("RETRYLAB_FD_OUT", DEFAULT_FD_OUT)
        for name, fd in (("RETRYLAB_FD_IN", fd_in), ("RETRYLAB_FD_OUT", fd_out)):
            if not _fd_is_open(fd):
                raise NotUnderSimulatorError(
                    f"{name} names fd {fd}, which is not open in this process: the "
                    f"variable was inherited without the descriptor; {_HOW_TO_RUN}"
                )
        return fd_in, fd_out
    if _fd_is_channel_like(DEFAULT_FD_IN) and _fd_is_channel_like(DEFAULT_FD_OUT):
        return DEFAULT_FD_IN, DEFAULT_FD_OUT
    raise NotUnderSimulatorError(
        "retrylab.run() needs the simulator: this process was not started by retrylab "
        f"(RETRYLAB_FD_IN is not set and fd {DEFAULT_FD_IN} is not an open pipe); {_HOW_TO_RUN}"
    )


class Channel:
    """Blocking JSON-lines reads from ``fd_in`` and flushed writes to ``fd_out``."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self._buffer = bytearray()
        self._eof = False

    def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line. The whole line is written before returning (the
        descriptor is unbuffered on our side, so nothing waits in a buffer)."""
        try:
            text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"cannot send {message.get('type')!r} message to the simulator: {e} "
                "(protocol messages carry JSON values only: str, int, float, bool, None, list, dict)"
            ) from e
        try:
            data = (text + "\n").encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(
                f"cannot send {message.get('type')!r} message to the simulator: it holds a "
                f"string that is not valid Unicode text ({e.reason}); decode bytes before passing them"
            ) from e
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd_out, view)
            except InterruptedError:  # pragma: no cover - PEP 475 retries for us
                continue
            except BrokenPipeError:
                # The simulator closed its end: it is gone or ended the run. As with EOF on
                # fd 3, this is the end of the process's life, not an error of the executor.
                raise SystemExit(0) from None
            view = view[written:]

    def recv(self) -> dict[str, Any] | None:
        """Block until one complete message arrives; ``None`` at EOF (shutdown)."""
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                return self._decode(line)
            if self._eof:
                if self._buffer:
                    tail = bytes(self._buffer[:200])
                    self._buffer.clear()
                    raise ProtocolError(
                        f"the simulator closed fd {self.fd_in} in the middle of a message "
                        f"(no final newline): {tail!r}"
                    )
                return None
            chunk = os.read(self.fd_in, 65536)
            if not chunk:
                self._eof = True
            else:
                self._buffer += chunk

    def _decode(self, line: bytes) -> dict[str, Any]:
        try:
            value = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ProtocolError(
                f"the simulator sent a line that is not UTF-8 JSON ({e}): {line[:200]!r}"
            ) from None
        if not isinstance(value, dict):
            raise ProtocolError(f"the simulator sent a JSON {type(value).__name__}, not an object: {line[:200]!r}")
        return value
