"""An async-mode executor the tests run under the fake simulator (retrylab.run(mode="async")).

    python async_app.py [--keep-tasks] [--no-on-reset] [--fork | --no-fork]
                        [--thread-at-import] [--loop-at-import] [--report-fork]
    python async_app.py sync             the same tools in sync mode (refused: async handlers)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
import uuid
from typing import Any

import httpx

import retrylab
from retrylab._runtime import active_runtime

http = retrylab.httpx_async_client(timeout=5.0, base_url="https://provider.example")
sync_http = retrylab.httpx_client(timeout=5.0)

# The application's own memory, cleared by on_reset.
seen: list[str] = []


@retrylab.tool("create")
async def create(args: dict[str, Any], ctx: retrylab.Context) -> dict[str, Any]:
    """A durable key per authorization, stored before the first send; one retry after a timeout."""
    name = f"key:{args['authorization']}"
    key = ctx.kv.get(name)
    if key is None:
        key = str(uuid.uuid4())
        ctx.kv.put(name, key)
    seen.append(ctx.call)
    for attempt in (1, 2):
        try:
            r = await http.post("/v1/resources", json={"ref": args["ref"]}, headers={"Idempotency-Key": key})
        except httpx.ReadTimeout:
            if attempt == 2:
                raise
            await asyncio.sleep(0.25)
            continue
        r.raise_for_status()
        return dict(r.json())
    raise AssertionError("unreachable")


@retrylab.tool("clock")
async def clock(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    loop = asyncio.get_running_loop()
    before = (loop.time(), time.monotonic(), ctx.now_ms())
    await asyncio.sleep(args.get("s", 1.5))
    after = (loop.time(), time.monotonic(), ctx.now_ms())
    ctx.log(json.dumps({"before": before, "after": after, "seen": seen}))
    return retrylab.ok()


@retrylab.tool("wait_for")
async def wait_for(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    """An asyncio timeout shorter than the request's: a timer beside the http."""
    try:
        r = await asyncio.wait_for(http.get("/v1/resources/res_0"), timeout=args["timeout_s"])
    except TimeoutError:
        return retrylab.unknown("wait_for timed out")
    return retrylab.ok(receipt=r.json()["id"])


@retrylab.tool("gather")
async def gather(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    """Two requests of one call in flight at once."""
    a, b = await asyncio.gather(http.get("/v1/resources/res_0"), http.get("/v1/resources/res_1"))
    ctx.log(f"{a.status_code} {b.status_code}")
    return retrylab.ok()


@retrylab.tool("stubborn")
async def stubborn(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    """Catches its cancellation and answers anyway."""
    try:
        await http.get("/v1/resources/res_0")
    except asyncio.CancelledError:
        ctx.kv.put("stubborn", "cancelled")
        return retrylab.unknown("cancelled, and said so")
    return retrylab.ok()


@retrylab.tool("blocking")
async def blocking(args: dict[str, Any], ctx: retrylab.Context) -> retrylab.Result:
    if args.get("what") == "sleep":
        time.sleep(1)
    else:
        sync_http.get("/v1/resources/res_0")
    return retrylab.ok()


@retrylab.tool("plain")
def plain(args: dict[str, Any], ctx: retrylab.Context) -> str:
    """A plain function is a handler in async mode too."""
    ctx.kv.put("plain", "yes")
    return "done"


def _before_fork() -> None:
    """What the zygote holds as it forks (on stderr): a running asyncio loop, the client's
    event loop, the threads."""
    rt = active_runtime()
    sys.stderr.write(
        f"before fork: running loop {asyncio.events._get_running_loop()!r}, "
        f"runtime loop {'loop' in vars(rt) if rt is not None else None}, "
        f"threads {threading.active_count()}\n"
    )
    sys.stderr.flush()


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv == ["sync"]:
        retrylab.run()
    if "--thread-at-import" in argv:
        threading.Thread(target=threading.Event().wait, name="import-time", daemon=True).start()
    if "--loop-at-import" in argv:
        asyncio.set_event_loop(asyncio.new_event_loop())
    if "--report-fork" in argv:
        os.register_at_fork(before=_before_fork)
    retrylab.run(
        mode="async",
        on_reset=None if "--no-on-reset" in argv else seen.clear,
        cancel_tasks="--keep-tasks" not in argv,
        fork=True if "--fork" in argv else False if "--no-fork" in argv else None,
    )
