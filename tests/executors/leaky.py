"""An executor that keeps a counter across runs (it ignores `reset`): fresh and reused
processes send different keys, which the determinism check must notice. It can be a zygote
(`"fork": true`): each forked life starts from the zygote's counter, 0."""
import json

from rawproto import handshake, recv, send

handshake(fork=True)
msg_id = 0
calls = 0
while True:
    m = recv()
    if m["type"] == "start":
        send({"type": "ready"})
        continue
    if m["type"] != "invoke":
        continue
    msg_id += 1
    calls += 1
    send({"type": "http", "msg_id": msg_id, "call": m["call"], "method": "POST",
          "url": "http://provider.sim/v1/resources", "headers": {"idempotency-key": f"k{calls}"},
          "body": json.dumps(m["args"]), "timeout_ms": 5000})
    r = recv()
    while r["type"] == "cancel":
        r = recv()
    outcome = "ok" if r["type"] == "http_response" and r["status"] < 300 else "unknown"
    send({"type": "result", "call": m["call"], "issue": m["issue"], "outcome": outcome})
