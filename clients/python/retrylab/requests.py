"""requests integration: the simulated network sits at urllib3's connection-pool level.

``requests``' ``HTTPAdapter`` hands each request to urllib3's ``PoolManager``, whose
``HTTPConnectionPool.urlopen`` runs the user's :class:`urllib3.util.Retry` around
``_make_request``, the method that writes the request on a connection and reads the answer.
Replacing the adapter's ``send`` would bypass the Retry; this module replaces only
``_make_request``: :class:`SimHTTPConnectionPool` (and its HTTPS twin) answers it from the
simulator, and :class:`SimHTTPAdapter` mounts those pools through
``PoolManager.pool_classes_by_scheme``. Everything above it - the Retry's counters,
``status_forcelist``, ``Retry-After``, backoff sleeps (virtual ``time.sleep``), redirects,
``requests``' exception mapping - is urllib3's and requests' own code.

Transport errors are raised as urllib3 raises them on a real network, so that Retry
classifies them the same way:

=================  ==========================================  =========================
``http_error``     raised by ``_make_request``                 Retry counts it as
=================  ==========================================  =========================
``connect_timeout`` ``urllib3.exceptions.ConnectTimeoutError`` a connect error
``refused``        ``urllib3.exceptions.NewConnectionError``   a connect error
``read_timeout``   ``urllib3.exceptions.ReadTimeoutError``     a read error (not retried
                                                               for POST by default)
``reset``          ``ConnectionResetError`` (urlopen wraps it  a read error
                   in ``ProtocolError("Connection aborted.")``)
=================  ==========================================  =========================

Needs urllib3 2.
"""

from __future__ import annotations

import errno
import http.client
import io
from collections.abc import Iterable
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ReadTimeoutError
from urllib3.response import BaseHTTPResponse, HTTPResponse
from urllib3.util.retry import Retry

from ._runtime import HttpFailure, current_http, seconds_to_ms, under_simulator

__all__ = ["SimHTTPConnectionPool", "SimHTTPSConnectionPool", "SimHTTPAdapter", "session"]

_URLLIB3_VERSION: str = getattr(urllib3, "__version__", "0")
if int(_URLLIB3_VERSION.split(".")[0]) < 2:  # pragma: no cover - depends on the install
    raise ImportError(
        f"retrylab.requests needs urllib3 2 (installed: {_URLLIB3_VERSION}); "
        "pip install 'retrylab-executor[requests]' brings it"
    )

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, (bytearray, memoryview)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):
        return _body_bytes(body.read())
    if isinstance(body, Iterable):
        return b"".join(_body_bytes(chunk) for chunk in body)
    raise TypeError(f"cannot send a request body of type {type(body).__name__}")


def _authority(pool: HTTPConnectionPool) -> str:
    host = pool.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    if pool.port is None or pool.port == _DEFAULT_PORTS.get(pool.scheme or ""):
        return host
    return f"{host}:{pool.port}"


def _sim_make_request(
    pool: HTTPConnectionPool,
    conn: Any,
    method: str,
    url: str,
    body: Any = None,
    headers: Any = None,
    retries: Retry | None = None,
    timeout: Any = urllib3.util.timeout._DEFAULT_TIMEOUT,
    chunked: bool = False,
    response_conn: Any = None,
    preload_content: bool = True,
    decode_content: bool = True,
    enforce_content_length: bool = True,
    **_ignored: Any,
) -> BaseHTTPResponse:
    """``HTTPConnectionPool._make_request`` (urllib3 2), answered by the simulator: the
    request is an ``http`` message, the answer an ``HTTPResponse`` or the exception urllib3
    raises on a real network."""
    pool.num_requests += 1
    timeout_obj = pool._get_timeout(timeout)
    timeout_obj.start_connect()
    read_timeout = timeout_obj.read_timeout
    full_url = url if not url.startswith("/") else f"{pool.scheme}://{_authority(pool)}{url}"
    sent: dict[str, str] = {}
    for name, value in (headers or {}).items():
        key = str(name).lower()
        value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        sent[key] = f"{sent[key]}, {value}" if key in sent else value
    if "host" not in sent:
        # http.client adds it on the wire; the message shows what the server would see.
        sent = {"host": _authority(pool), **sent}
    answer = current_http(
        method,
        full_url,
        sent,
        _body_bytes(body),
        None if read_timeout is None else seconds_to_ms(float(read_timeout)),
    )
    if isinstance(answer, HttpFailure):
        if answer.error == "read_timeout":
            raise ReadTimeoutError(pool, url, f"Read timed out. (read timeout={read_timeout})")
        if answer.error == "connect_timeout":
            raise ConnectTimeoutError(
                conn, f"Connection to {pool.host} timed out. (connect timeout={timeout_obj.connect_timeout})"
            )
        if answer.error == "refused":
            raise NewConnectionError(conn, "Failed to establish a new connection: [Errno 111] Connection refused")
        if answer.error == "reset":
            # What a read on a reset connection raises; urlopen wraps it in ProtocolError.
            raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
        raise AssertionError(answer.error)  # pragma: no cover - validated by the runtime
    return HTTPResponse(
        body=io.BytesIO(answer.body),
        headers=list(answer.headers.items()),  # type: ignore[arg-type]
        status=answer.status,
        version=11,
        version_string="HTTP/1.1",
        reason=http.client.responses.get(answer.status, ""),
        preload_content=preload_content,
        decode_content=decode_content,
        original_response=None,
        pool=pool,
        connection=response_conn,
        retries=retries,
        enforce_content_length=enforce_content_length,
        request_method=method,
        request_url=url,
    )


class SimHTTPConnectionPool(HTTPConnectionPool):
    """An ``HTTPConnectionPool`` whose requests are answered by the simulator (no socket)."""

    def _make_request(self, *args: Any, **kwargs: Any) -> BaseHTTPResponse:
        return _sim_make_request(self, *args, **kwargs)

    def __str__(self) -> str:
        # As the stock pool prints itself, so that error messages read as on a real network.
        return f"HTTPConnectionPool(host={self.host!r}, port={self.port!r})"


class SimHTTPSConnectionPool(HTTPSConnectionPool):
    """An ``HTTPSConnectionPool`` whose requests are answered by the simulator (no socket, no TLS)."""

    def _make_request(self, *args: Any, **kwargs: Any) -> BaseHTTPResponse:
        return _sim_make_request(self, *args, **kwargs)

    def __str__(self) -> str:
        return f"HTTPSConnectionPool(host={self.host!r}, port={self.port!r})"


class SimHTTPAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` whose pool manager builds simulated pools. ``max_retries`` works
    as on the stock adapter (an int or a :class:`urllib3.util.Retry`)."""

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block=block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = {  # an instance attribute: urllib3's own map is untouched
            "http": SimHTTPConnectionPool,
            "https": SimHTTPSConnectionPool,
        }

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        raise ValueError(
            f"a proxy ({proxy}) under the simulator: requests to the simulated provider do not "
            "leave the process; drop proxies= (the session built by retrylab.requests_session() "
            "ignores the environment's proxies)"
        )


def session(retries: Retry | int | None = None) -> requests.Session:
    """``retrylab.requests_session(retries=...)``: a ``requests.Session`` whose ``http://``
    and ``https://`` adapters use ``max_retries=retries`` (``None``: requests' default, no
    retries). Under the simulator the adapters are :class:`SimHTTPAdapter` and the session
    does not read proxies or ``.netrc`` from the environment (``trust_env = False``);
    outside, they are stock ``HTTPAdapter``\\ s."""
    s = requests.Session()
    kwargs: dict[str, Any] = {} if retries is None else {"max_retries": retries}
    if under_simulator():
        s.trust_env = False
        adapter: HTTPAdapter = SimHTTPAdapter(**kwargs)
    else:
        adapter = HTTPAdapter(**kwargs)
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s
