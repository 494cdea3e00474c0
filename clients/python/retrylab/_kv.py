"""The durable store's interface (protocol 1, the ``kv`` message), shared by the simulator's
store and the production stores.

Semantics, the same everywhere:

- keys and values are ``str``;
- every write (``put``, a successful ``cas``) gives the entry a new version, a fencing
  token: the first write of a key gives 1, each later write the previous version + 1;
- an absent key reads as ``(None, 0)``;
- ``cas(key, expect_version, value)`` writes only if the entry's current version is
  ``expect_version`` (0: the key is absent) and returns ``(ok, value, version)``: on success
  the value written and its new version, on failure the current value and version;
- ``delete`` removes the entry; a later write of the key continues from the deleted entry's
  version (1 + the last one), so a version is never reused for a key;
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

    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing happens when it is absent)."""
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
