"""The exceptions of the retrylab client."""

from __future__ import annotations

__all__ = [
    "RetrylabError",
    "ProtocolError",
    "StrictModeError",
    "NotUnderSimulatorError",
    "OutsideHandlerError",
    "Definite",
    "Indefinite",
]


class RetrylabError(Exception):
    """Base class of the errors the retrylab client raises itself."""


class ProtocolError(RetrylabError):
    """The simulator sent something the protocol (version 1) does not allow here.

    This is a bug in retrylab or in the client, never in the executor's own code: the
    message names what arrived and what was expected. Once raised, the process is unusable
    for the simulator: every later protocol operation raises the same error again, so an
    ``except Exception`` in a handler cannot hide it.
    """


class StrictModeError(RetrylabError):
    """Strict mode refused real I/O (a socket, a DNS lookup) or a thread.

    Under the simulator, the process must reach time, the network and storage only through
    the protocol, or runs stop being reproducible. The message names the refused call and
    says what to use instead. A violation is also fatal for the process: even if the
    handler catches this exception, the client sends a ``log`` line naming it and exits
    with status 4 at the next protocol boundary, so the simulator reports it.
    """


class NotUnderSimulatorError(RetrylabError):
    """:func:`retrylab.run` was called, but the process was not started by retrylab."""


class OutsideHandlerError(RetrylabError):
    """A simulated operation (``time.sleep``, an HTTP request, a store access) was attempted
    while no tool handler was running.

    In sync mode the process may only send requests, sleeps and store operations inside the
    turn of a tool call: from the handler of an ``invoke``.
    """


class Definite(Exception):
    """Raise in a handler to report a **definite** failure (outcome ``failed``).

    ``failed`` claims that the effect does not exist and never will. Raise it only when you
    know that, e.g. the provider answered ``400`` to a request it did not apply. The
    exception's message becomes the result's ``detail``.
    """


class Indefinite(Exception):
    """Raise in a handler to report an **indefinite** outcome (``unknown``): the effect
    may exist. The exception's message becomes the result's ``detail`` as it is (other
    exceptions also give ``unknown``, with their type's name in front of the message).
    """
