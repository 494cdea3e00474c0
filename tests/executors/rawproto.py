"""The executor protocol spoken by hand (standard library only), for the Rust tests of
external executors: no client package, so that each test controls every byte."""
import json
import os
import signal
import sys

# Not strict for retrylab's shim: the pid and ready files the tests read are written outside
# the run's storage, some before `start` (docs/executor-protocol.md, section 9).
os.environ["RETRYLAB_STRICT"] = "0"

_in = os.fdopen(int(os.environ.get("RETRYLAB_FD_IN", "3")), "r")
_out = os.fdopen(int(os.environ.get("RETRYLAB_FD_OUT", "4")), "w")


def send(msg):
    _out.write(json.dumps(msg) + "\n")
    _out.flush()


def send_raw(line):
    _out.write(line + "\n")
    _out.flush()


_pending = []


def recv():
    if _pending:
        return _pending.pop(0)
    line = _in.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def write_pid():
    """Records this process's id where the test asked (RETRYLAB_TEST_PIDS), one per line."""
    path = os.environ.get("RETRYLAB_TEST_PIDS")
    if path:
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\n")


def mark_ready():
    """Writes this process's id to the file RETRYLAB_TEST_READY names, when set: the test
    then knows that a turn is under way (tests/leftovers.rs)."""
    path = os.environ.get("RETRYLAB_TEST_READY")
    if path:
        with open(path + ".part", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.rename(path + ".part", path)


def handshake(tools=("create",), fork=False, **extra):
    """hello, init, init_ok; with `fork`, declares "fork": true and serves `fork` messages
    (returning in each child, with its channel on the FIFOs) until another message comes."""
    write_pid()
    if fork:
        extra["fork"] = True
    send({"type": "hello", "protocol": 1, "mode": "sync", "tools": list(tools), **extra})
    m = recv()
    assert m["type"] == "init", m
    send({"type": "init_ok"})
    if fork:
        _serve_forks()


def _serve_forks():
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        m = recv()
        if m["type"] != "fork":
            _pending.append(m)
            return
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            # `out` first (the simulator's reader is open), then `in` (waits for its writer).
            fd_out = os.open(m["out"], os.O_WRONLY)
            fd_in = os.open(m["in"], os.O_RDONLY)
            os.dup2(fd_in, 3)
            os.dup2(fd_out, 4)
            os.close(fd_in)
            os.close(fd_out)
            # _in and _out now read and write the FIFOs (the zygote's buffers are empty:
            # nothing comes after `fork` before `forked`).
            write_pid()
            return
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        send({"type": "forked", "pid": pid})
