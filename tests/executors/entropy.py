"""An executor that mints its key with the real entropy of the machine, from a source
retrylab does not serve (the kernel's /proc/sys/kernel/random/uuid; os.urandom would be
served from the run's seed by the shim): the determinism check must refuse it."""
import json
import os

from rawproto import handshake, recv, send

handshake()
msg_id = 0
while True:
    m = recv()
    if m["type"] == "start":
        send({"type": "ready"})
        continue
    if m["type"] != "invoke":
        continue
    msg_id += 1
    with open("/proc/sys/kernel/random/uuid") as f:
        key = f.read().strip()
    send({"type": "http", "msg_id": msg_id, "call": m["call"], "method": "POST",
          "url": "http://provider.sim/v1/resources", "headers": {"idempotency-key": key},
          "body": json.dumps(m["args"]), "timeout_ms": 5000})
    r = recv()
    while r["type"] == "cancel":
        r = recv()
    outcome = "ok" if r["type"] == "http_response" and r["status"] < 300 else "unknown"
    send({"type": "result", "call": m["call"], "issue": m["issue"], "outcome": outcome})
