"""journaled.py's code with its operation records held in memory instead of the durable
store: a crash after the send loses the key, the restarted worker mints another for the
redelivered call, and the provider cannot tell the resend from a new ticket."""

from typing import Any

import retrylab

import journaled


class MemoryRecords:
    """Records in the process's memory: gone with the process."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}

    def get(self, ctx: retrylab.Context, name: str) -> dict[str, Any] | None:
        record = self.records.get(name)
        return None if record is None else dict(record)

    def put(self, ctx: retrylab.Context, name: str, record: dict[str, Any]) -> None:
        self.records[name] = dict(record)

    def clear(self) -> None:
        self.records.clear()


if __name__ == "__main__":
    records = MemoryRecords()
    retrylab.tool("create")(journaled.make_handler(records))
    # Declares what journaled.py declares: the guarantee is judged, and must fail here.
    retrylab.run(
        hello_assumptions=journaled.ASSUMPTIONS,
        guarantee=journaled.GUARANTEE,
        on_reset=records.clear,
    )
