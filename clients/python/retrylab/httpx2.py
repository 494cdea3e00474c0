"""httpx2 integration (the fork of httpx that the OpenAI 3.x and Anthropic 2.x Python SDKs
use): :class:`SimTransport` and :func:`client`, as :mod:`retrylab.httpx` has them for httpx,
with the same messages and the same transport errors (``httpx2.ReadTimeout``,
``httpx2.ConnectTimeout``, ``httpx2.ConnectError``, ``httpx2.ReadError``).

    sdk = openai.OpenAI(base_url=f"{retrylab.provider_base_url()}/v1", http_client=retrylab.httpx2.client())
"""

from __future__ import annotations

from typing import Any

import httpx2

from ._runtime import under_simulator
from .httpx import transports_for

__all__ = ["SimTransport", "AsyncSimTransport", "client"]

SimTransport, AsyncSimTransport = transports_for(httpx2)
SimTransport.__name__ = SimTransport.__qualname__ = "SimTransport"
AsyncSimTransport.__name__ = AsyncSimTransport.__qualname__ = "AsyncSimTransport"


def client(**kwargs: Any) -> httpx2.Client:
    """Under the simulator an ``httpx2.Client`` with :class:`SimTransport` and
    ``trust_env=False``; outside, ``httpx2.Client(**kwargs)``. The SDK that takes it as its
    ``http_client`` sets its own base URL: give it the provider's
    (``retrylab.provider_base_url()``)."""
    if not under_simulator():
        return httpx2.Client(**kwargs)
    if "transport" in kwargs:
        raise ValueError("retrylab.httpx2.client(transport=...) under the simulator: the simulated transport must be the innermost one")
    kwargs["trust_env"] = False
    return httpx2.Client(transport=SimTransport(), **kwargs)
