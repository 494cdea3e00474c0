"""naive.py in async mode, by hand: the same requests and sleeps, driven by events (each
answered by its msg_id) instead of blocking reads, every turn ended by idle.

With the argument `forever`, requests wait without a timeout, and a `cancel` is answered
with the call's result `unknown`, in the cancel's own turn. With `unmapped`, each call
first sends a request the provider's face cannot map, and goes on once its 404 came."""
import json
import sys

FOREVER = sys.argv[1:] == ["forever"]
UNMAPPED = sys.argv[1:] == ["unmapped"]

from rawproto import handshake, recv, send

handshake(mode="async")
msg_id = 0
waiting = {}  # msg_id -> (what, call, issue, args, attempt)


def request(what, call, issue, args, attempt):
    global msg_id
    msg_id += 1
    if what == "probe":
        send({"type": "http", "msg_id": msg_id, "call": call, "method": "GET",
              "url": "http://provider.sim/nowhere"})
    elif what == "http":
        send({"type": "http", "msg_id": msg_id, "call": call, "method": "POST",
              "url": "http://provider.sim/v1/resources",
              "headers": {"content-type": "application/json"},
              "body": json.dumps(args), "timeout_ms": None if FOREVER else 5000})
    else:
        send({"type": "sleep", "msg_id": msg_id, "ms": 100 * 2 ** attempt})
    waiting[msg_id] = (what, call, issue, args, attempt)


while True:
    m = recv()
    kind = m["type"]
    if kind == "start":
        waiting.clear()
        send({"type": "ready"})
        continue
    if kind == "invoke":
        request("probe" if UNMAPPED else "http", m["call"], m["issue"], m["args"], 0)
    elif kind in ("http_response", "http_error"):
        what, call, issue, args, attempt = waiting.pop(m["in_reply_to"])
        if what == "probe":
            send({"type": "log", "text": f"probe answered {m['status']}"})
            request("http", call, issue, args, 0)
        elif kind == "http_response" and m["status"] < 300:
            send({"type": "result", "call": call, "issue": issue, "outcome": "ok",
                  "receipt": json.loads(m["body"])["id"]})
        else:
            request("sleep", call, issue, args, attempt)
    elif kind == "cancel":
        for key, (_, call, issue, _, _) in list(waiting.items()):
            if (call, issue) == (m["call"], m["issue"]):
                del waiting[key]
                send({"type": "result", "call": call, "issue": issue, "outcome": "unknown",
                      "detail": "cancelled"})
    elif kind == "wake":
        _, call, issue, args, attempt = waiting.pop(m["in_reply_to"])
        if attempt == 2:
            send({"type": "result", "call": call, "issue": issue, "outcome": "unknown"})
        else:
            request("http", call, issue, args, attempt + 1)
    send({"type": "idle"})
