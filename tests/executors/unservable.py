"""An executor whose first request of each call the provider's face cannot map. The
argument says which: `foreign` posts the create to another host than the provider's,
`create` posts it to a path that no route of the face has, `lookup` reads the resource by
id first (a face without a read route answers 404) and then creates it as the face says."""
import json
import sys

from rawproto import handshake, recv, send

MODE = sys.argv[1]
FIRST = {
    "foreign": ("POST", "https://api.example.com/v1/resources"),
    "create": ("POST", "http://provider.sim/v1/charges"),
    "lookup": ("GET", "http://provider.sim/v1/resources/res_1"),
}[MODE]

handshake()
msg_id = 0


def http(call, method, url, body=None):
    global msg_id
    msg_id += 1
    msg = {"type": "http", "msg_id": msg_id, "call": call, "method": method, "url": url,
           "headers": {"content-type": "application/json"}, "timeout_ms": 5000}
    if body is not None:
        msg["body"] = body
    send(msg)
    r = recv()
    while r["type"] == "cancel":
        r = recv()
    return r


while True:
    m = recv()
    if m["type"] == "start":
        send({"type": "ready"})
        continue
    if m["type"] != "invoke":
        continue
    call, body = m["call"], json.dumps(m["args"])
    r = http(call, FIRST[0], FIRST[1], body if FIRST[0] == "POST" else None)
    if MODE == "lookup":
        r = http(call, "POST", "http://provider.sim/v1/resources", body)
    if r["type"] == "http_response" and r["status"] < 300:
        send({"type": "result", "call": call, "issue": m["issue"], "outcome": "ok",
              "receipt": json.loads(r["body"])["id"]})
    else:
        send({"type": "result", "call": call, "issue": m["issue"], "outcome": "unknown"})
