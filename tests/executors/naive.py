"""A naive executor: no key, three attempts per call, retried on a read timeout after
100 ms, 200 ms of virtual sleep. With `--fork`, it can be a zygote (`"fork": true`)."""
import json
import sys

from rawproto import handshake, recv, send

handshake(fork="--fork" in sys.argv[1:])
msg_id = 0
while True:
    m = recv()
    if m["type"] == "start":
        send({"type": "ready"})
        continue
    if m["type"] != "invoke":
        continue
    call = m["call"]
    for attempt in range(3):
        msg_id += 1
        send({"type": "http", "msg_id": msg_id, "call": call, "method": "POST",
              "url": "http://provider.sim/v1/resources",
              "headers": {"content-type": "application/json"},
              "body": json.dumps(m["args"]), "timeout_ms": 5000})
        r = recv()
        while r["type"] == "cancel":
            r = recv()
        if r["type"] == "http_response" and r["status"] < 300:
            send({"type": "result", "call": call, "issue": m["issue"], "outcome": "ok",
                  "receipt": json.loads(r["body"])["id"]})
            break
        msg_id += 1
        send({"type": "sleep", "msg_id": msg_id, "ms": 100 * 2 ** attempt})
        r = recv()
        while r["type"] == "cancel":
            r = recv()
    else:
        send({"type": "result", "call": call, "issue": m["issue"], "outcome": "unknown"})
