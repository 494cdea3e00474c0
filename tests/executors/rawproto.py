"""The executor protocol spoken by hand (standard library only), for the Rust tests of
external executors: no client package, so that each test controls every byte."""
import json
import os
import sys

_in = os.fdopen(int(os.environ.get("RETRYLAB_FD_IN", "3")), "r")
_out = os.fdopen(int(os.environ.get("RETRYLAB_FD_OUT", "4")), "w")


def send(msg):
    _out.write(json.dumps(msg) + "\n")
    _out.flush()


def send_raw(line):
    _out.write(line + "\n")
    _out.flush()


def recv():
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


def handshake(tools=("create",), **extra):
    write_pid()
    send({"type": "hello", "protocol": 1, "mode": "sync", "tools": list(tools), **extra})
    m = recv()
    assert m["type"] == "init", m
    send({"type": "init_ok"})
