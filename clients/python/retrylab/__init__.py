"""retrylab's Python client: run a tool-call executor under retrylab's deterministic
simulator (external-executor protocol, version 1), and the same handlers in production.

::

    import uuid

    import retrylab

    http = retrylab.httpx_client(timeout=5.0)

    @retrylab.tool("create")
    def create(args: dict, ctx: retrylab.Context) -> dict:
        key = ctx.kv.get(f"key:{args['ref']}")
        if key is None:
            key = str(uuid.uuid4())          # seeded under the simulator
            ctx.kv.put(f"key:{args['ref']}", key)
        r = http.post("/v1/resources", json=args, headers={"Idempotency-Key": key})
        if r.status_code == 400:
            raise retrylab.Definite(f"400 {r.text}")
        r.raise_for_status()                 # a 5xx raises: outcome unknown
        return r.json()                      # ok, receipt = the response's "id"

    if __name__ == "__main__":
        retrylab.run()

What a handler claims (the ``result``'s outcome), in order:

1. a :class:`Result` from :func:`ok` / :func:`failed` / :func:`unknown` is the claim
   (an ``ok`` without a receipt takes ``ctx.receipt``);
2. a ``dict``, a ``str`` or ``None`` is ``ok`` with receipt ``ctx.receipt``: the ``id`` of
   the call's last 2xx provider response that had one, unless the handler set it;
3. any other return value claims ``unknown`` (a detail names its type);
4. raising :class:`Definite` claims ``failed`` (definite);
5. raising :class:`Indefinite` claims ``unknown``;
6. raising any other ``Exception`` claims ``unknown``, detail ``"Type: message"`` (an
   exception does not prove that nothing happened).

Code below the handler that is not given ``ctx`` (a LangChain ``@tool`` body, a library
callback) reaches it with :func:`current`: ``retrylab.current().kv``, ``.call``, ``.issue``,
``.authorization``; outside a tool call it raises :class:`NoCallError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import production
from ._context import STATES, Context
from ._current import NoCallError, current
from ._errors import (
    Definite,
    Indefinite,
    NotUnderSimulatorError,
    OutsideHandlerError,
    ProtocolError,
    RetrylabError,
    StrictModeError,
)
from ._kv import KV
from ._results import Outcome, Result, failed, ok, unknown
from ._runtime import CLIENT, PROTOCOL, Handler, provider_base_url, registered_tools, run, tool, under_simulator
from ._virtual import install, uninstall

if TYPE_CHECKING:
    import httpx as _httpx
    import requests as _requests
    from urllib3.util.retry import Retry as _Retry

__version__ = "0.1.0"

__all__ = [
    "provider_base_url",
    "CLIENT",
    "PROTOCOL",
    "STATES",
    "Context",
    "Definite",
    "Handler",
    "Indefinite",
    "KV",
    "NoCallError",
    "NotUnderSimulatorError",
    "Outcome",
    "OutsideHandlerError",
    "ProtocolError",
    "Result",
    "RetrylabError",
    "StrictModeError",
    "__version__",
    "current",
    "failed",
    "httpx_async_client",
    "httpx_client",
    "install",
    "ok",
    "production",
    "registered_tools",
    "requests_session",
    "run",
    "tool",
    "under_simulator",
    "uninstall",
    "unknown",
]


def httpx_client(**kwargs: Any) -> _httpx.Client:
    """An ``httpx.Client``: under the simulator one whose transport is the simulator
    (:class:`retrylab.httpx.SimTransport`) and whose ``base_url`` is the provider's; outside,
    ``httpx.Client(**kwargs)``. Needs ``pip install 'retrylab-executor[httpx]'``."""
    try:
        from .httpx import client
    except ModuleNotFoundError as e:
        if e.name != "httpx":
            raise
        raise ModuleNotFoundError(
            "retrylab.httpx_client() needs httpx: pip install 'retrylab-executor[httpx]'", name="httpx"
        ) from e
    return client(**kwargs)


def httpx_async_client(**kwargs: Any) -> _httpx.AsyncClient:
    """An ``httpx.AsyncClient`` for ``async def`` handlers under ``retrylab.run(mode="async")``:
    under the simulator one whose transport is the simulator
    (:class:`retrylab.httpx.AsyncSimTransport`) and whose ``base_url`` is the provider's;
    outside, ``httpx.AsyncClient(**kwargs)``. Needs ``pip install 'retrylab-executor[httpx]'``."""
    try:
        from .httpx import async_client
    except ModuleNotFoundError as e:
        if e.name != "httpx":
            raise
        raise ModuleNotFoundError(
            "retrylab.httpx_async_client() needs httpx: pip install 'retrylab-executor[httpx]'", name="httpx"
        ) from e
    return async_client(**kwargs)


def requests_session(retries: _Retry | int | None = None) -> _requests.Session:
    """A ``requests.Session`` with ``max_retries=retries`` on its adapters: under the
    simulator, answered at urllib3's connection-pool level so that a ``urllib3.Retry`` works
    as on a real network; outside, stock adapters. Needs
    ``pip install 'retrylab-executor[requests]'``."""
    try:
        from .requests import session
    except ModuleNotFoundError as e:
        if e.name not in ("requests", "urllib3"):
            raise
        raise ModuleNotFoundError(
            "retrylab.requests_session() needs requests and urllib3 2: pip install 'retrylab-executor[requests]'",
            name=e.name,
        ) from e
    return session(retries)
