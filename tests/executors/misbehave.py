"""An executor that breaks the protocol in the way argv[1] names, after a correct
handshake (unless the mode is about the handshake); `fork_MODE`: MODE in a process forked
from a zygote."""
import json
import select
import sys
import time

from rawproto import handshake, mark_ready, recv, send, send_raw, write_pid

mode = sys.argv[1]
if mode == "exit_at_start":
    write_pid()
    print("starting up", file=sys.stderr)
    sys.exit(7)
if mode == "protocol_2":
    write_pid()
    send({"type": "hello", "protocol": 2, "mode": "sync", "tools": ["create"]})
    recv()
    sys.exit(0)
if mode == "mode_parallel":
    write_pid()
    send({"type": "hello", "protocol": 1, "mode": "parallel", "tools": ["create"]})
    recv()
    sys.exit(0)
if mode == "print_on_protocol":
    write_pid()
    send_raw("hello from the executor")
    recv()
    sys.exit(0)
fork = mode.startswith("fork_")
mode = mode.removeprefix("fork_")
handshake(mode="async" if mode.startswith("async_") else "sync", fork=fork)
while True:
    m = recv()
    if m["type"] == "start":
        send({"type": "idle" if mode == "async_idle_after_start" else "ready"})
        continue
    if m["type"] != "invoke":
        continue
    call, issue = m["call"], m["issue"]
    if mode == "raise_mid_run":
        raise RuntimeError("the handler failed")
    if mode == "garbage":
        send_raw("{not json")
    elif mode == "unknown_message":
        send({"type": "jump", "how": "high"})
    elif mode == "unknown_field":
        send({"type": "sleep", "msg_id": 1, "ms": 10, "colour": "red"})
    elif mode == "result_for_other_call":
        send({"type": "result", "call": "c99", "issue": 1, "outcome": "ok"})
    elif mode == "two_results":
        send({"type": "result", "call": call, "issue": issue, "outcome": "unknown"})
        send({"type": "result", "call": call, "issue": issue, "outcome": "unknown"})
        recv()
    elif mode == "bad_receipt":
        send({"type": "result", "call": call, "issue": issue, "outcome": "ok", "receipt": "ticket-9"})
    elif mode == "hang":
        print("about to spin", file=sys.stderr, flush=True)
        mark_ready()
        # Blocks for ever with no clock involved (a sleep would be refused by the shim).
        select.select([], [], [])
    elif mode == "ready_mid_call":
        send({"type": "ready"})
    elif mode == "idle_in_sync":
        send({"type": "idle"})
    elif mode == "async_http_after_result":
        send({"type": "result", "call": call, "issue": issue, "outcome": "unknown"})
        send({"type": "http", "msg_id": 1, "call": call, "method": "GET",
              "url": "http://provider.sim/v1/resources/res_0"})
    elif mode == "async_reused_msg_id":
        for _ in range(2):
            send({"type": "sleep", "msg_id": 1, "ms": 10})
    elif mode == "async_two_results":
        send({"type": "result", "call": call, "issue": issue, "outcome": "unknown"})
        send({"type": "result", "call": call, "issue": issue, "outcome": "unknown"})
    elif mode == "async_ready_mid_call":
        send({"type": "ready"})
    recv()
