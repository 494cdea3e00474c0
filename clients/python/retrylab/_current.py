"""The running tool call's ``ctx`` from anywhere below the handler: :func:`current`.

A LangChain ``@tool`` body, a library callback or a helper three calls down cannot take
``ctx`` as a parameter; they call ``retrylab.current()`` instead::

    def remember_key(ref: str) -> str:      # not given ctx
        ctx = retrylab.current()
        key = ctx.kv.get(f"key:{ctx.authorization}:{ref}")
        ...

The call is held in a :class:`contextvars.ContextVar`, set around the handler by the client
(under the simulator, sync and async mode, and in :func:`retrylab.production.call`): in async
mode every call's task has its own copy, so concurrent calls each see their own, and a task a
handler starts (``asyncio.create_task``, ``asyncio.gather``) inherits its call. A thread does
not inherit it (``threading`` starts threads with an empty context): production code that
hands work to a thread pool passes ``contextvars.copy_context()`` along, as for any context
variable.

``current()`` returns the same :class:`~retrylab.Context` the handler received, so it exposes
what ``ctx`` exposes and nothing more: the store, the call's id, its issue, its
``authorization``, the clock; never the intent the call serves, nor anything of the
simulator's ground truth (the protocol keeps them out of the executor's reach, or
certificates would be unsound).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from ._context import Context
from ._errors import RetrylabError

__all__ = ["CALL", "NoCallError", "current", "bound"]

#: The call whose handler (or code it calls, or a task it started) is running.
CALL: contextvars.ContextVar[Context | None] = contextvars.ContextVar("retrylab_call", default=None)

NO_CALL = (
    "no tool call is running: retrylab.current() is only available inside a tool handler or code it calls"
)


class NoCallError(RetrylabError, LookupError):
    """:func:`retrylab.current` was called while no tool call is running: at import time, in
    ``on_reset``, in a thread the handler started without copying its context, or in code the
    client did not call for a tool call."""


def current() -> Context:
    """The running tool call's :class:`~retrylab.Context` (``ctx``): its ``kv`` store,
    ``call`` id, ``issue``, ``authorization``, clock, ``log`` and ``state``, as the handler
    received it. Raises :class:`NoCallError` when no tool call is running."""
    ctx = CALL.get()
    if ctx is None:
        raise NoCallError(NO_CALL)
    return ctx


@contextmanager
def bound(ctx: Context) -> Iterator[Context]:
    """Make ``ctx`` the :func:`current` call for the ``with`` block (the clients wrap each
    handler in it)."""
    token = CALL.set(ctx)
    try:
        yield ctx
    finally:
        CALL.reset(token)
