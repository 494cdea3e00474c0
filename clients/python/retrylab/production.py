"""The production path: the same handlers, called outside the simulator.

::

    import retrylab, retrylab.production as prod

    store = prod.SqliteStore("/var/lib/myexecutor/journal.sqlite3")
    result = prod.call("create", {"ref": "r1", "tenant": "t0"}, store=store,
                       provider={"base_url": "https://api.example.com"})
    if result.outcome == "ok": ...

There, ``ctx.kv`` is the store you pass (:class:`SqliteStore`, durable, safe to share
between processes; or :class:`MemoryStore`), ``ctx.sleep`` is ``time.sleep``, ``ctx.now_ms()``
is the real clock (Unix milliseconds), ``ctx.log``/``ctx.state`` write to the ``logging``
module's ``retrylab`` logger, and :func:`retrylab.httpx_client` /
:func:`retrylab.requests_session` return ordinary clients. The handler's claim follows the
same rules as under the simulator; :func:`call` returns it as a :class:`retrylab.Result`
whose ``value`` is what the handler returned and ``exception`` what it raised.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from ._context import Context
from ._current import bound
from ._errors import RetrylabError
from ._kv import KV, check_key, check_value, check_version
from ._results import Result, describe_exception, from_exception, from_return
from ._runtime import handler_for, registered_tools

__all__ = ["call", "SqliteStore", "MemoryStore", "KV"]

log = logging.getLogger("retrylab")


class MemoryStore:
    """An in-memory :class:`retrylab.KV` with the simulator store's semantics (store-wide
    versions, ``cas``): for tests and development. Not durable; thread-safe."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[str, int]] = {}
        self._last_version = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        return self.get_versioned(key)[0]

    def get_versioned(self, key: str) -> tuple[str | None, int]:
        check_key(key)
        with self._lock:
            entry = self._entries.get(key)
            return (None, 0) if entry is None else entry

    def _write(self, key: str, value: str) -> int:
        self._last_version += 1
        self._entries[key] = (value, self._last_version)
        return self._last_version

    def put(self, key: str, value: str) -> int:
        check_key(key)
        check_value(value)
        with self._lock:
            return self._write(key, value)

    def cas(self, key: str, expect_version: int, value: str) -> tuple[bool, str | None, int]:
        check_key(key)
        check_version(expect_version)
        check_value(value)
        with self._lock:
            current, version = self._entries.get(key, (None, 0))
            if version != expect_version:
                return False, current, version
            return True, value, self._write(key, value)

    def delete(self, key: str) -> bool:
        check_key(key)
        with self._lock:
            return self._entries.pop(key, None) is not None

    def list(self, prefix: str) -> list[tuple[str, str, int]]:
        check_key(prefix, "prefixe")
        with self._lock:
            return sorted((k, v, ver) for k, (v, ver) in self._entries.items() if k.startswith(prefix))


class SqliteStore:
    """A durable :class:`retrylab.KV` in an SQLite file (standard library ``sqlite3``).

    Every operation is one transaction (``BEGIN IMMEDIATE`` for writes), so a ``cas`` is
    atomic also between processes sharing the file: use it for leases as under the
    simulator. Versions count the writes of the whole file, from 1, and are never reused
    (the counter survives deletes and restarts). ``path`` may be ``":memory:"``.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        with self._lock, _Transaction(self._db):
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS retrylab_kv ("
                " key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, version INTEGER NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS retrylab_kv_meta ("
                " id INTEGER PRIMARY KEY CHECK (id = 1), last_version INTEGER NOT NULL)"
            )
            self._db.execute("INSERT OR IGNORE INTO retrylab_kv_meta (id, last_version) VALUES (1, 0)")

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _row(self, key: str) -> tuple[str | None, int]:
        row = self._db.execute("SELECT value, version FROM retrylab_kv WHERE key = ?", (key,)).fetchone()
        return (None, 0) if row is None else (row[0], int(row[1]))

    def _write(self, key: str, value: str) -> int:
        self._db.execute("UPDATE retrylab_kv_meta SET last_version = last_version + 1 WHERE id = 1")
        version = int(self._db.execute("SELECT last_version FROM retrylab_kv_meta WHERE id = 1").fetchone()[0])
        self._db.execute(
            "INSERT INTO retrylab_kv (key, value, version) VALUES (?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value, version = excluded.version",
            (key, value, version),
        )
        return version

    def get(self, key: str) -> str | None:
        return self.get_versioned(key)[0]

    def get_versioned(self, key: str) -> tuple[str | None, int]:
        check_key(key)
        with self._lock:
            return self._row(key)

    def put(self, key: str, value: str) -> int:
        check_key(key)
        check_value(value)
        with self._lock, _Transaction(self._db):
            return self._write(key, value)

    def cas(self, key: str, expect_version: int, value: str) -> tuple[bool, str | None, int]:
        check_key(key)
        check_version(expect_version)
        check_value(value)
        with self._lock, _Transaction(self._db):
            current, version = self._row(key)
            if version != expect_version:
                return False, current, version
            return True, value, self._write(key, value)

    def delete(self, key: str) -> bool:
        check_key(key)
        with self._lock, _Transaction(self._db):
            return self._db.execute("DELETE FROM retrylab_kv WHERE key = ?", (key,)).rowcount > 0

    def list(self, prefix: str) -> list[tuple[str, str, int]]:
        check_key(prefix, "prefixe")
        with self._lock:
            rows = self._db.execute(
                "SELECT key, value, version FROM retrylab_kv WHERE substr(key, 1, ?) = ? ORDER BY key",
                (len(prefix), prefix),
            ).fetchall()
        return [(k, v, int(ver)) for k, v, ver in rows]

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")


class _ProductionBackend:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def log(self, ctx: Context, text: str) -> None:
        log.info("[%s %s#%d] %s", ctx.tool, ctx.call, ctx.issue, text)

    def state(self, ctx: Context, name: str, receipt: str | None) -> None:
        if receipt is None:
            log.info("[%s %s#%d] state %s", ctx.tool, ctx.call, ctx.issue, name)
        else:
            log.info("[%s %s#%d] state %s receipt %s", ctx.tool, ctx.call, ctx.issue, name, receipt)


def call(
    tool: str,
    args: dict[str, Any],
    *,
    store: KV,
    params: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    provider: dict[str, Any] | None = None,
    call_id: str | None = None,
    issue: int = 1,
    worker: int = 0,
    incarnation: int = 0,
    redelivery: bool = False,
) -> Result:
    """Run the handler registered for ``tool`` on ``args``, outside the simulator, and
    return its claim.

    ``store`` becomes ``ctx.kv``; ``params``, ``config`` and ``provider`` become the
    ``ctx`` attributes of the same names (``{}`` when omitted); ``call_id`` defaults to a
    fresh ``"call-<uuid4 hex>"``. The handler's exception, if any, is not raised but
    returned in :attr:`Result.exception` with the outcome the rules give it (``failed`` for
    :class:`retrylab.Definite`, ``unknown`` otherwise).
    """
    handler = handler_for(tool)
    if handler is None:
        known = ", ".join(registered_tools()) or "none"
        raise RetrylabError(
            f"no handler is registered for tool {tool!r} (registered: {known}); decorate it with "
            f"@retrylab.tool({tool!r}) and import its module first"
        )
    if not isinstance(args, dict):
        raise TypeError(f"a tool call's args are a dict, not {type(args).__name__}")
    if not isinstance(store, KV):
        raise TypeError(
            f"store must provide get/get_versioned/put/cas/delete/list (a retrylab KV such as "
            f"SqliteStore(path)), not {type(store).__name__}"
        )
    ctx = Context(
        call=call_id if call_id is not None else f"call-{uuid.uuid4().hex}",
        issue=issue,
        tool=tool,
        args=args,
        worker=worker,
        incarnation=incarnation,
        redelivery=redelivery,
        cancelled=False,
        params=dict(params or {}),
        config=dict(config or {}),
        provider=dict(provider or {}),
        kv=store,
        backend=_ProductionBackend(),
    )
    try:
        with bound(ctx):  # retrylab.current() below the handler
            value = handler(args, ctx)
    except Exception as e:
        return from_exception(e)
    try:
        return from_return(value, ctx.receipt, tool)
    except (TypeError, ValueError) as e:
        return Result("unknown", detail=describe_exception(e), exception=e)
