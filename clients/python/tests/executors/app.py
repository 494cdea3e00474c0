"""An executor the tests run under the fake simulator, and in production.

    python app.py                      serve under the simulator (retrylab.run)
    python app.py --no-on-reset        the same, without the on_reset hook
    python app.py --no-fork            the same, without "fork": true in its hello
    python app.py --lax                retrylab.install(strict=False) first
    python app.py production DB TOOL ARGS_JSON [BASE_URL]
                                       the production path: one call, the result as JSON
"""

from __future__ import annotations

import datetime
import json
import os
import random
import secrets
import socket
import sys
import threading
import time
import uuid

import httpx
import tenacity
from urllib3.util.retry import Retry

import retrylab
import retrylab.production

# Built at import time, before run(): the simulated client resolves the provider's base URL
# once init has arrived; in production these are ordinary clients.
BASE_URL = os.environ.get("APP_PROVIDER_URL", "https://provider.example")
http = retrylab.httpx_client(timeout=5.0, base_url=BASE_URL)
http_no_timeout = retrylab.httpx_client(timeout=None, base_url=BASE_URL)
session_500 = retrylab.requests_session(retries=Retry(total=2, status_forcelist=[500], allowed_methods=None))
session_backoff = retrylab.requests_session(
    retries=Retry(total=3, status_forcelist=[500, 503], backoff_factor=0.5, allowed_methods=None)
)
session_default_methods = retrylab.requests_session(retries=Retry(total=2, connect=2, read=2))

# The application's own cache: cleared by on_reset, or a reused process behaves differently.
_keys: dict[str, str] = {}


def _key_for(ref: str, ctx: retrylab.Context) -> str:
    name = f"key:{ref}"
    if name in _keys:
        return _keys[name]
    key = ctx.kv.get(name)
    if key is None:
        key = str(uuid.uuid4())
        ok, current, _ = ctx.kv.cas(name, 0, key)
        if not ok:
            assert current is not None
            key = current
    _keys[name] = key
    return key


@retrylab.tool("create")
def create(args: dict, ctx: retrylab.Context) -> dict:
    key = _key_for(args["ref"], ctx)
    r = http.post("/v1/resources", json={"ref": args["ref"], "tenant": args["tenant"]}, headers={"Idempotency-Key": key})
    if r.status_code == 400:
        raise retrylab.Definite(f"400 {r.text}")
    r.raise_for_status()
    body = r.json()
    ctx.kv.put(f"op:{args['ref']}", json.dumps({"key": key, "id": body["id"]}, separators=(",", ":")))
    return body


@retrylab.tool("journal")
def journal(args: dict, ctx: retrylab.Context) -> retrylab.Result:
    ref = args["ref"]
    assert ctx.kv.get(f"op:{ref}") is None
    assert ctx.kv.get_versioned(f"op:{ref}") == (None, 0)
    v1 = ctx.kv.put(f"op:{ref}", "started")
    ok, value, v2 = ctx.kv.cas(f"op:{ref}", v1, "sent")
    assert ok and value == "sent" and v2 > v1, (ok, value, v1, v2)
    stale = ctx.kv.cas(f"op:{ref}", v1, "stale")
    assert stale == (False, "sent", v2), stale
    lease = ctx.kv.cas("lease:" + ref, 0, f"w{ctx.worker}")
    assert lease[0]
    entries = ctx.kv.list("op:")
    ctx.log(f"entries={entries}")
    assert ctx.kv.delete("lease:" + ref) is True
    assert ctx.kv.delete("lease:" + ref) is False
    ctx.state("confirmed", receipt="res_3")
    return retrylab.ok(receipt="res_3")


@retrylab.tool("create_retrying")
def create_retrying(args: dict, ctx: retrylab.Context) -> dict:
    key = _key_for(args["ref"], ctx)
    attempts: list[float] = []

    @tenacity.retry(
        retry=tenacity.retry_if_exception_type(httpx.TransportError),
        wait=tenacity.wait_exponential(multiplier=1, max=30),
        stop=tenacity.stop_after_delay(20),
    )
    def attempt() -> httpx.Response:
        attempts.append(time.monotonic())
        return http.post("/v1/resources", json={"ref": args["ref"], "tenant": args["tenant"]}, headers={"Idempotency-Key": key})

    try:
        r = attempt()
    finally:
        ctx.log(f"attempts at monotonic {attempts}")
    return r.json()


@retrylab.tool("wait_for_answer")
def wait_for_answer(args: dict, ctx: retrylab.Context) -> dict:
    ctx.log(f"cancelled before={ctx.cancelled}")
    r = http_no_timeout.get(f"/v1/resources?ref={args['ref']}")
    ctx.log(f"cancelled after={ctx.cancelled}")
    return r.json()


@retrylab.tool("httpx_misc")
def httpx_misc(args: dict, ctx: retrylab.Context) -> None:
    r = http.post("/v1/blobs", content=b"\xff\x00binary", headers={"content-type": "application/octet-stream"})
    ctx.log(f"binary answer {r.status_code} {r.content.hex()} receipt={ctx.receipt}")
    for _ in range(4):
        try:
            http.get("/v1/resources/res_0")
        except httpx.TransportError as e:
            ctx.log(f"{type(e).__name__}: {e} ({e.request.method} {e.request.url})")


@retrylab.tool("mint")
def mint(args: dict, ctx: retrylab.Context) -> None:
    values = {
        "uuid4": [str(uuid.uuid4()) for _ in range(2)],
        "version": uuid.uuid4().version,
        "urandom": os.urandom(4).hex(),
        "token_hex": secrets.token_hex(4),
        "randbelow": secrets.randbelow(1000),
        "random": random.random(),
        "system_random": random.SystemRandom().random(),
        "unseeded_random": random.Random().random(),
    }
    ctx.log(json.dumps(values, sort_keys=True))


@retrylab.tool("clock")
def clock(args: dict, ctx: retrylab.Context) -> None:
    now = datetime.datetime.now(datetime.timezone.utc)
    values = {
        "now_utc": now.isoformat(),
        "utcnow": datetime.datetime.utcnow().isoformat(),
        "today": datetime.date.today().isoformat(),
        "time": time.time(),
        "time_ns": time.time_ns(),
        "monotonic": time.monotonic(),
        "perf_counter_ns": time.perf_counter_ns(),
        "ctx_now_ms": ctx.now_ms(),
        "isinstance_datetime": isinstance(now, datetime.datetime),
        "isinstance_date": isinstance(now, datetime.date),
        "gmtime_year": time.gmtime().tm_year,
    }
    ctx.sleep(0.25)
    values["after_sleep"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    ctx.log(json.dumps(values, sort_keys=True))


@retrylab.tool("strict_socket")
def strict_socket(args: dict, ctx: retrylab.Context) -> None:
    try:
        socket.create_connection(("93.184.216.34", 443))
    except Exception as e:  # an application that swallows errors: the violation still ends the process
        print(f"swallowed: {e}", file=sys.stderr)
    ctx.log("after the socket")


@retrylab.tool("strict_thread")
def strict_thread(args: dict, ctx: retrylab.Context) -> None:
    threading.Thread(target=lambda: None, name="worker-thread").start()


@retrylab.tool("requests_get")
def requests_get(args: dict, ctx: retrylab.Context) -> dict:
    session = {"500": session_500, "backoff": session_backoff, "default": session_default_methods}[args["session"]]
    r = session.request(args.get("method", "GET"), f"{ctx.provider['base_url']}{args['path']}", timeout=5)
    r.raise_for_status()
    return r.json()


@retrylab.tool("claims")
def claims(args: dict, ctx: retrylab.Context) -> object:
    kind = args["kind"]
    if kind == "definite":
        raise retrylab.Definite("400 rejected")
    if kind == "indefinite":
        raise retrylab.Indefinite("no answer from the provider")
    if kind == "error":
        raise KeyError("missing")
    if kind == "failed":
        return retrylab.failed("402 card declined")
    if kind == "unknown":
        return retrylab.unknown("500 twice")
    if kind == "list":
        return [1, 2]
    if kind == "str":
        ctx.receipt = "res_9"
        return "done"
    if kind == "swallow":
        try:
            ctx.kv.get("anything")
        except Exception as e:  # hides everything, as careless code does
            return {"swallowed": type(e).__name__}
    if kind == "sleep_zero":
        time.sleep(0)
        return None
    raise AssertionError(kind)


def _reset() -> None:
    _keys.clear()


def _production(db: str, tool: str, args_json: str, base_url: str | None) -> None:
    store = retrylab.production.SqliteStore(db)
    provider = {"base_url": base_url} if base_url else {}
    result = retrylab.production.call(tool, json.loads(args_json), store=store, provider=provider)
    print(
        json.dumps(
            {
                "outcome": result.outcome,
                "receipt": result.receipt,
                "detail": result.detail,
                "value": result.value,
                "entries": store.list(""),
                "http_transport": type(http._transport).__name__,
                "session_adapter": type(session_500.get_adapter("http://x")).__name__,
            }
        )
    )


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["production"]:
        _production(argv[1], argv[2], argv[3], argv[4] if len(argv) > 4 else None)
        sys.exit(0)
    if "--lax" in argv:
        retrylab.install(strict=False)
    retrylab.run(
        hello_assumptions=["durable_journal", "atomic_dedup"],
        guarantee=["at_most_once"],
        on_reset=None if "--no-on-reset" in argv else _reset,
        fork=False if "--no-fork" in argv else None,
    )
