"""The ``ctx`` a handler receives, the same under the simulator and in production."""

from __future__ import annotations

from typing import Any, Protocol

from ._kv import KV
from ._protocol import FROM_EXEC_FIELDS

__all__ = ["Context", "STATES"]

#: The operation states a ``state`` message may record (from the protocol's schema).
STATES: tuple[str, ...] = tuple(FROM_EXEC_FIELDS["state"]["state"]["spec"]["enum"])


class _Backend(Protocol):
    def now_ms(self) -> int: ...

    def sleep(self, seconds: float) -> None: ...

    def log(self, ctx: Context, text: str) -> None: ...

    def state(self, ctx: Context, name: str, receipt: str | None) -> None: ...


class Context:
    """What a handler knows about its tool call, and its access to time and the store.

    Attributes:
        call: the call's id (``"c1"``).
        issue: the agent's re-run count of this call (1, 2, ...).
        tool: the tool's name.
        args: the call's arguments (the dict the handler also receives).
        authorization: the user's authorization of the action the call serves
            (``args["authorization"]``; ``None`` when the call carries none).
        worker: the simulated worker this process is.
        incarnation: 0 for the run's first process of this worker, n after n crashes.
        redelivery: ``True`` when a restarted worker is handed again a call its crashed
            incarnation had not answered; whether the work was done is for the handler to
            find out (the store, a read-back).
        cancelled: ``True`` once the agent stopped waiting for this call (a ``cancel``
            notification, seen while the handler was blocked in an HTTP request or a sleep,
            or before the call was delivered). A result is still accepted and judged.
        receipt: the provider's resource id an ``ok`` result reports by default. The client
            sets it to the ``id`` of every 2xx provider response (JSON object with a string
            ``id``) of this call under the simulator; a handler may assign it (``None``: no
            receipt).
        kv: the durable store (:class:`retrylab.KV`).
        params: the design entry's own parameters (``init.params``).
        config: the model's ``executor`` section (``init.config``).
        provider: where the provider answers (``init.provider``: ``base_url``,
            ``key_header`` and the provider's face, ``http``).
    """

    def __init__(
        self,
        *,
        call: str,
        issue: int,
        tool: str,
        args: dict[str, Any],
        worker: int,
        incarnation: int,
        redelivery: bool,
        cancelled: bool,
        params: dict[str, Any],
        config: dict[str, Any],
        provider: dict[str, Any],
        kv: KV,
        backend: _Backend,
    ) -> None:
        self.call = call
        self.issue = issue
        self.tool = tool
        self.args = args
        self.worker = worker
        self.incarnation = incarnation
        self.redelivery = redelivery
        self.cancelled = cancelled
        self.receipt: str | None = None
        self.params = params
        self.config = config
        self.provider = provider
        self.kv = kv
        self._backend = backend

    @property
    def authorization(self) -> str | None:
        """``args["authorization"]`` when it is a str, else ``None``."""
        value = self.args.get("authorization") if isinstance(self.args, dict) else None
        return value if isinstance(value, str) else None

    def now_ms(self) -> int:
        """The current time in milliseconds: virtual milliseconds since the run began under
        the simulator; Unix milliseconds in production. Compare it only with other
        ``now_ms()`` values of the same deployment."""
        return self._backend.now_ms()

    def sleep(self, seconds: float) -> None:
        """Sleep: a virtual ``sleep`` under the simulator (rounded up to whole
        milliseconds; 0 returns at once), ``time.sleep`` in production."""
        self._backend.sleep(seconds)

    def log(self, text: str) -> None:
        """A line in retrylab's ``trace`` at the current virtual time (the ``logging``
        module's ``retrylab`` logger in production)."""
        if not isinstance(text, str):
            raise TypeError(f"ctx.log() takes a str, not {type(text).__name__}")
        self._backend.log(self, text)

    def state(self, name: str, receipt: str | None = None) -> None:
        """Record the state of the operation serving this call: ``"confirmed"`` (with the
        ``receipt``, optional), ``"failed"`` or ``"escalated"`` (a ``state`` message, judged
        by ``no_false_resolution`` and ``resolved_within``). A ``result`` of ``ok`` or
        ``failed`` already implies ``confirmed`` or ``failed``."""
        if name not in STATES:
            raise ValueError(f"state must be one of {', '.join(STATES)}, not {name!r}")
        if receipt is not None:
            if not isinstance(receipt, str):
                raise TypeError(f"a receipt is the provider's resource id as a str, not {type(receipt).__name__}")
            if name != "confirmed":
                raise ValueError(f"only the 'confirmed' state carries a receipt, not {name!r}")
        self._backend.state(self, name, receipt)

    def __repr__(self) -> str:
        return (
            f"Context(call={self.call!r}, issue={self.issue}, tool={self.tool!r}, worker={self.worker}, "
            f"incarnation={self.incarnation}, redelivery={self.redelivery}, cancelled={self.cancelled})"
        )
