"""httpx integration: :class:`SimTransport`, the innermost transport, answering from the simulator.

Each request becomes an ``http`` message for the running handler's call (method, URL,
lowercase headers, UTF-8 body or ``body_b64``, ``timeout_ms`` = the request's read timeout
in milliseconds, ``null`` for none); the answer becomes an ``httpx.Response``, and a
transport error the exception httpx raises on a real network:

=================  ==========================  ===========================================
``http_error``     httpx exception             as httpx raises it when
=================  ==========================  ===========================================
``connect_timeout`` ``httpx.ConnectTimeout``   the TCP connect times out
``refused``        ``httpx.ConnectError``      the connection is refused
``read_timeout``   ``httpx.ReadTimeout``       no answer within the read timeout
``reset``          ``httpx.ReadError``         the peer resets the connection (httpcore maps
                                               ``ConnectionResetError`` on a read to it)
=================  ==========================  ===========================================

Each exception carries the request (``exc.request``). Retry layers above the transport
(tenacity around the call, a retrying transport wrapping this one, an SDK's own retries)
keep working unchanged.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

import httpx

from ._runtime import HttpAnswer, HttpFailure, current_http, provider_base_url, seconds_to_ms, under_simulator

__all__ = ["SimTransport", "AsyncSimTransport", "client", "async_client", "transports_for", "warm"]


def _timeout_ms(request: Any) -> int | None:
    timeout = request.extensions.get("timeout")
    if not isinstance(timeout, dict):
        return None
    read = timeout.get("read")
    if read is None:
        return None
    return seconds_to_ms(float(read))


def _headers(request: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in request.headers.multi_items():
        key = name.lower()
        # Repeated fields are combined as RFC 9110 section 5.3 allows.
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def transports_for(mod: ModuleType) -> tuple[type, type]:
    """The simulated transport and its async twin for ``mod``, ``httpx`` or a module of the
    same API (``httpx2``, which the OpenAI 3.x and Anthropic 2.x SDKs use)."""

    def response(answer: HttpAnswer | HttpFailure, request: Any) -> Any:
        if isinstance(answer, HttpFailure):
            raise _error(mod, answer.error, request)
        return mod.Response(
            answer.status,
            headers=list(answer.headers.items()),
            content=answer.body,
            request=request,
            extensions={"http_version": b"HTTP/1.1"},
        )

    class Transport(mod.BaseTransport):  # type: ignore[name-defined,misc]
        """A transport whose network is the simulator. Use it as the innermost transport:
        ``Client(transport=SimTransport())``, or inside your own wrapping transport.
        Requests may only be sent from a running tool handler."""

        def handle_request(self, request: Any) -> Any:
            body = request.read()
            answer = current_http(request.method, str(request.url), _headers(request), body, _timeout_ms(request))
            return response(answer, request)

    class AsyncTransport(mod.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        """The async twin of the transport, for an ``AsyncClient`` under
        ``retrylab.run(mode="async")``: each request is an ``http`` message, and the awaiting
        task is resumed by its answer while the process's other tasks run."""

        async def handle_async_request(self, request: Any) -> Any:
            from ._async import current_http_async

            body = await request.aread()
            answer = await current_http_async(request.method, str(request.url), _headers(request), body, _timeout_ms(request))
            return response(answer, request)

    return Transport, AsyncTransport


def _error(mod: ModuleType, kind: str, request: Any) -> Exception:
    if kind == "read_timeout":
        return mod.ReadTimeout("timed out", request=request)
    if kind == "connect_timeout":
        return mod.ConnectTimeout("timed out", request=request)
    if kind == "refused":
        return mod.ConnectError("[Errno 111] Connection refused", request=request)
    if kind == "reset":
        return mod.ReadError("[Errno 104] Connection reset by peer", request=request)
    raise AssertionError(kind)  # pragma: no cover - validated by the runtime


SimTransport, AsyncSimTransport = transports_for(httpx)
SimTransport.__name__ = SimTransport.__qualname__ = "SimTransport"
AsyncSimTransport.__name__ = AsyncSimTransport.__qualname__ = "AsyncSimTransport"


class _SimClient(httpx.Client):
    """An ``httpx.Client`` whose base URL is the simulated provider's, known once ``init``
    has arrived (so the client may be built at import time, before ``retrylab.run()``)."""

    _retrylab_base_pending: bool = False

    @property
    def base_url(self) -> httpx.URL:
        if self._retrylab_base_pending:
            url = provider_base_url()
            if url is not None:
                self._base_url = self._enforce_trailing_slash(httpx.URL(url))
                self._retrylab_base_pending = False
        return self._base_url

    @base_url.setter
    def base_url(self, url: httpx.URL | str) -> None:
        self._retrylab_base_pending = False
        self._base_url = self._enforce_trailing_slash(httpx.URL(url))


_REFUSED_UNDER_SIM = ("transport", "mounts", "proxy", "proxies", "app")


def client(**kwargs: Any) -> httpx.Client:
    """``retrylab.httpx_client(**kwargs)``: under the simulator an ``httpx.Client`` with
    :class:`SimTransport`, ``base_url`` = the provider's ``base_url`` (replacing one given in
    ``kwargs``, so production code that passes its real base URL runs unchanged) and
    ``trust_env=False`` (no proxy or ``.netrc`` from the environment); outside, a plain
    ``httpx.Client(**kwargs)``."""
    if not under_simulator():
        return httpx.Client(**kwargs)
    for name in _REFUSED_UNDER_SIM:
        if name in kwargs:
            raise ValueError(
                f"retrylab.httpx_client({name}=...) under the simulator: the simulated transport "
                "must be the innermost one, and requests must not leave the process; omit "
                f"{name}=, or build httpx.Client(transport=YourTransport(retrylab.httpx.SimTransport())) yourself"
            )
    kwargs.pop("base_url", None)
    kwargs["trust_env"] = False
    sim = _SimClient(transport=SimTransport(), **kwargs)
    sim._retrylab_base_pending = True
    return sim


class _SimAsyncClient(httpx.AsyncClient):
    """:class:`_SimClient`'s async twin."""

    _retrylab_base_pending: bool = False

    @property
    def base_url(self) -> httpx.URL:
        if self._retrylab_base_pending:
            url = provider_base_url()
            if url is not None:
                self._base_url = self._enforce_trailing_slash(httpx.URL(url))
                self._retrylab_base_pending = False
        return self._base_url

    @base_url.setter
    def base_url(self, url: httpx.URL | str) -> None:
        self._retrylab_base_pending = False
        self._base_url = self._enforce_trailing_slash(httpx.URL(url))


def warm(rounds: int = 30) -> None:
    """Runs httpx's request path ``rounds`` times in this process, on a throwaway client whose
    transport answers at once (no user code, no socket, no message, httpx's log muted): a
    zygote does it once before its first fork (protocol 1, section 7), so that each forked
    worker life does not pay for CPython's first runs of that code (the interpreter
    specializes a function in place the first times it runs it: in a child, in pages it
    must first copy). A run of examples/python/naive_retry.py: about 13 % less time."""

    def answer(request: httpx.Request) -> httpx.Response:
        _headers(request)
        _timeout_ms(request)
        request.read()
        return httpx.Response(201, json={"id": "res_0"}, request=request)

    log = logging.getLogger("httpx")
    disabled, log.disabled = log.disabled, True
    try:
        with httpx.Client(
            base_url="http://provider.sim", transport=httpx.MockTransport(answer), trust_env=False, timeout=5.0
        ) as c:
            for _ in range(rounds):
                r = c.post("/v1/resources", json={"ref": "r0", "tenant": "t0"}, headers={"idempotency-key": "k"})
                r.raise_for_status()
                r.json()
                c.get("/v1/resources/res_0").json()
    except Exception:  # noqa: BLE001 - a warm-up that fails only leaves the children colder
        pass
    finally:
        log.disabled = disabled


def async_client(**kwargs: Any) -> httpx.AsyncClient:
    """``retrylab.httpx_async_client(**kwargs)``: under the simulator an
    ``httpx.AsyncClient`` with :class:`AsyncSimTransport`, the provider's ``base_url`` and
    ``trust_env=False`` (as :func:`client`); outside, a plain ``httpx.AsyncClient(**kwargs)``."""
    if not under_simulator():
        return httpx.AsyncClient(**kwargs)
    for name in _REFUSED_UNDER_SIM:
        if name in kwargs:
            raise ValueError(
                f"retrylab.httpx_async_client({name}=...) under the simulator: the simulated transport "
                "must be the innermost one, and requests must not leave the process; omit "
                f"{name}=, or build httpx.AsyncClient(transport=YourTransport(retrylab.httpx.AsyncSimTransport())) yourself"
            )
    kwargs.pop("base_url", None)
    kwargs["trust_env"] = False
    sim = _SimAsyncClient(transport=AsyncSimTransport(), **kwargs)
    sim._retrylab_base_pending = True
    return sim
