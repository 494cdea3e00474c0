"""The durable store's interface (protocol 1, the ``kv`` message), shared by the simulator's
store and the production stores.

Semantics, the same everywhere:

- keys and values are ``str``;
- every write (``put``, a successful ``cas``) takes the store's next version, a fencing
  token: versions count the writes of the whole store (of the run, under the simulator),
  from 1, and are never reused, so a key's version grows with each write and a version
  names one write;
- an absent key reads as ``(None, 0)``;
- ``cas(key, expect_version, value)`` writes only if the entry's current version is
  ``expect_version`` (0: the key is absent) and returns ``(ok, value, version)``: on success
  the value written and its new version, on failure the current value and version;
- ``delete`` removes the entry and returns whether it was there (a later write of the key
  takes a new version as any write does);
- ``list(prefix)`` returns ``(key, value, version)`` for every present key that starts with
  ``prefix``, in key order (Unicode code point order, which is UTF-8 byte order).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["KV", "check_key", "check_value", "check_version"]


@runtime_checkable
class KV(Protocol):
    """A versioned key-value store: ``ctx.kv``."""

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None`` when absent."""
        ...

    def get_versioned(self, key: str) -> tuple[str | None, int]:
        """``(value, version)`` of ``key``; ``(None, 0)`` when absent."""
        ...

    def put(self, key: str, value: str) -> int:
        """Write ``value`` under ``key`` unconditionally; returns the new version."""
        ...

    def cas(self, key: str, expect_version: int, value: str) -> tuple[bool, str | None, int]:
        """Write only if the current version is ``expect_version`` (0: absent). Returns
        ``(True, value, new_version)`` or ``(False, current_value, current_version)``."""
        ...

    def delete(self, key: str) -> bool:
        """Remove ``key``; returns whether it was there."""
        ...

    def list(self, prefix: str) -> list[tuple[str, str, int]]:
        """``(key, value, version)`` of the keys starting with ``prefix``, in key order."""
        ...


def check_key(key: object, what: str = "key") -> str:
    if not isinstance(key, str):
        raise TypeError(f"store {what}s are str, not {type(key).__name__} ({key!r})")
    return key


def check_value(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"store values are str, not {type(value).__name__}: serialise it first "
            "(e.g. json.dumps(value))"
        )
    return value


def check_version(version: object) -> int:
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise TypeError(f"expect_version is an int >= 0 (0: the key is absent), not {version!r}")
    return version
