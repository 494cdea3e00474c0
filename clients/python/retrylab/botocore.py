"""botocore integration: :func:`attach` routes a botocore (boto3) client's requests to the
simulator, below its retry handler, so that its retries, backoff and idempotency tokens
work as on a real network.

    client = botocore.session.get_session().create_client("ec2", endpoint_url=retrylab.provider_base_url(), ...)
    retrylab.botocore.attach(client)

A ``before-send`` handler answers each signed request from the simulator (an ``http``
message, ``timeout_ms`` = the client's read timeout); a transport error becomes the
exception botocore raises on a real network:

=================  ===========================================
``http_error``     botocore exception
=================  ===========================================
``connect_timeout`` ``botocore.exceptions.ConnectTimeoutError``
``refused``        ``botocore.exceptions.EndpointConnectionError``
``read_timeout``   ``botocore.exceptions.ReadTimeoutError``
``reset``          ``botocore.exceptions.ConnectionClosedError``
=================  ===========================================

Outside the simulator :func:`attach` does nothing.
"""

from __future__ import annotations

from typing import Any, Iterator

from botocore import exceptions
from botocore.awsrequest import AWSResponse

from ._runtime import HttpFailure, current_http, seconds_to_ms, under_simulator

__all__ = ["attach"]


class _Body:
    """The raw body botocore reads an answer from (``AWSResponse.raw``)."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def attach(client: Any) -> Any:
    """Makes ``client`` send through the simulator (under it; outside, nothing changes) and
    returns it."""
    if not under_simulator():
        return client
    read_timeout = client.meta.config.read_timeout

    def send(request: Any, **_: Any) -> AWSResponse:
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        elif not isinstance(body, bytes):
            body = body.read()
        headers = {k.lower(): v.decode() if isinstance(v, bytes) else str(v) for k, v in request.headers.items()}
        timeout_ms = seconds_to_ms(float(read_timeout)) if read_timeout is not None else None
        answer = current_http(request.method, request.url, headers, body, timeout_ms)
        if isinstance(answer, HttpFailure):
            raise _error(answer.error, request.url)
        return AWSResponse(request.url, answer.status, answer.headers, _Body(answer.body))

    client.meta.events.register_first("before-send", send)
    return client


def _error(kind: str, url: str) -> Exception:
    if kind == "read_timeout":
        return exceptions.ReadTimeoutError(endpoint_url=url)
    if kind == "connect_timeout":
        return exceptions.ConnectTimeoutError(endpoint_url=url)
    if kind == "refused":
        return exceptions.EndpointConnectionError(endpoint_url=url)
    if kind == "reset":
        return exceptions.ConnectionClosedError(endpoint_url=url)
    raise AssertionError(kind)  # pragma: no cover - validated by the runtime
