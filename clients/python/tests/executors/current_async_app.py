"""An async-mode executor whose helpers reach their own call through retrylab.current()
while other calls run (issue 40, part 6)."""

from __future__ import annotations

import asyncio
from typing import Any

import retrylab


async def child() -> str:
    await asyncio.sleep(0)
    return retrylab.current().call


def note(children: list[str]) -> None:
    """Not given ctx: it writes under its own call's id, issue and authorization."""
    call = retrylab.current()
    call.kv.put(f"seen:{call.call}:{call.issue}:{call.authorization}", ",".join(children))


@retrylab.tool("create")
async def create(args: dict[str, Any], ctx: retrylab.Context) -> None:
    await asyncio.sleep(args["s"])
    # Tasks the handler starts inherit its call.
    children = await asyncio.gather(child(), asyncio.create_task(child()))
    note(list(children))


if __name__ == "__main__":
    retrylab.run(mode="async")
