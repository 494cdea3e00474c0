"""What a handler's return value or exception claims (the ``result`` message's outcome).

The rules, in order:

1. A :class:`Result` (from :func:`ok`, :func:`failed`, :func:`unknown`) is the claim itself.
   An ``ok`` without an explicit receipt takes ``ctx.receipt``.
2. A ``dict``, a ``str`` or ``None`` is success: outcome ``ok``, receipt ``ctx.receipt``
   (the ``id`` of the last 2xx provider response of this call that carried one, unless the
   handler assigned ``ctx.receipt`` itself). The value itself is not sent (protocol 1's
   ``result`` has no field for it); :func:`retrylab.production.call` returns it in
   ``Result.value``.
3. Any other return value is a programming error and claims ``unknown`` (honest: the
   handler ran, but said nothing the client can interpret), with a detail naming the type.
4. Raising :class:`Definite` claims ``failed`` (definite), detail = its message.
5. Raising :class:`Indefinite` claims ``unknown``, detail = its message.
6. Raising any other ``Exception`` claims ``unknown``, detail = ``"Type: message"``: an
   exception does not prove that nothing happened (a timeout after the request was sent).
   ``BaseException``s that are not ``Exception`` (``SystemExit``, ``KeyboardInterrupt``)
   are not results: they propagate and end the process.

Details are made deterministic: memory addresses (``at 0x7f...``) are removed, tenacity's
``RetryError`` is described by its attempt count and last exception, and an explicit
cause (``raise X from e``) is appended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, get_args

from ._errors import Definite, Indefinite
from ._protocol import Outcome

__all__ = ["Result", "Outcome", "ok", "failed", "unknown", "describe_exception"]

#: The outcomes a ``result`` may claim (from the protocol's schema).
OUTCOMES: tuple[str, ...] = get_args(Outcome)

_MAX_DETAIL = 2000


@dataclass(frozen=True)
class Result:
    """The claim a handler makes about its tool call.

    ``outcome`` is ``"ok"`` (the effect exists), ``"failed"`` (definite: it does not exist
    and never will) or ``"unknown"`` (it may exist). ``receipt`` is the provider's id of the
    resource (``ok`` only); ``detail`` says why (``failed`` and ``unknown``). ``value`` is
    what the handler returned, and ``exception`` what it raised, for the production path's
    caller; neither is sent to the simulator.
    """

    outcome: Outcome
    receipt: str | None = None
    detail: str | None = None
    value: Any = field(default=None, compare=False)
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be 'ok', 'failed' or 'unknown', not {self.outcome!r}")
        if self.receipt is not None:
            if not isinstance(self.receipt, str):
                raise TypeError(f"a receipt is the provider's resource id as a str, not {type(self.receipt).__name__}")
            if self.outcome != "ok":
                raise ValueError(f"only an ok result carries a receipt (this one is {self.outcome!r})")
        if self.detail is not None:
            if not isinstance(self.detail, str):
                raise TypeError(f"a detail is a str, not {type(self.detail).__name__}")
            if self.outcome == "ok":
                raise ValueError("an ok result carries no detail (protocol 1's ok result has a receipt only)")


def ok(receipt: str | None = None, *, value: Any = None) -> Result:
    """Success: the effect exists. ``receipt`` is the provider's id of it (``"res_3"``);
    without one, the handler's ``ctx.receipt`` is used. ``value`` is returned to a production
    caller in :attr:`Result.value`."""
    return Result("ok", receipt=receipt, value=value)


def failed(detail: str) -> Result:
    """A **definite** failure: the effect does not exist and never will (e.g. the provider
    rejected the request with ``400``). Claiming it when the effect exists is a false
    failure, which the checkers report."""
    return Result("failed", detail=detail)


def unknown(detail: str) -> Result:
    """An indefinite outcome: the effect may exist (a timeout after the request was sent,
    a ``500``). When in doubt, ``unknown`` is always honest."""
    return Result("unknown", detail=detail)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_HEX = re.compile(r"0x[0-9a-fA-F]{6,}")


def _scrub(text: str) -> str:
    return _HEX.sub("0x?", _ADDRESS.sub("", text))


def describe_exception(exc: BaseException, _depth: int = 0) -> str:
    """A deterministic one-line description of ``exc``: ``"Type: message"``."""
    name = type(exc).__name__
    last = getattr(exc, "last_attempt", None)
    if last is not None and callable(getattr(last, "exception", None)) and _depth < 3:
        # tenacity.RetryError: its str is the repr of a Future, with an address.
        attempts = getattr(last, "attempt_number", None)
        inner: BaseException | None = None
        try:
            if not getattr(last, "failed", True):
                inner = None
            else:
                inner = last.exception()
        except Exception:  # a Future that is not done or was cancelled
            inner = None
        text = f"{name} after {attempts} attempts" if attempts is not None else name
        if inner is not None:
            text += f", last: {describe_exception(inner, _depth + 1)}"
        return text[:_MAX_DETAIL]
    message = _scrub(str(exc)).strip()
    text = f"{name}: {message}" if message else name
    cause = exc.__cause__
    if cause is not None and _depth < 3:
        text += f" (caused by {describe_exception(cause, _depth + 1)})"
    return text[:_MAX_DETAIL]


def from_exception(exc: Exception) -> Result:
    """Rules 4-6: the claim of a handler that raised ``exc``."""
    if isinstance(exc, Definite):
        return Result("failed", detail=_scrub(str(exc)) or "Definite", exception=exc)
    if isinstance(exc, Indefinite):
        return Result("unknown", detail=_scrub(str(exc)) or "Indefinite", exception=exc)
    return Result("unknown", detail=describe_exception(exc), exception=exc)


def from_return(value: Any, receipt: str | None, tool: str) -> Result:
    """Rules 1-3: the claim of a handler that returned ``value``; ``receipt`` is
    ``ctx.receipt`` at that moment."""
    if isinstance(value, Result):
        if value.outcome == "ok" and value.receipt is None and receipt is not None:
            return Result("ok", receipt=receipt, value=value.value)
        return value
    if value is None or isinstance(value, (dict, str)):
        return Result("ok", receipt=receipt, value=value)
    return Result(
        "unknown",
        detail=(
            f"TypeError: the handler of {tool!r} returned a {type(value).__name__}; return a "
            "dict, a str, None or retrylab.ok()/failed()/unknown() (an unrecognised return "
            "value claims unknown)"
        ),
        value=value,
    )
