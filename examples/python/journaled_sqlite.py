"""journaled.py's code with its operation records in a SQLite database on the disk the
run's workers share (`RETRYLAB_RUN_DIR`: a deployment's shared volume), as a team keeps a
journal when it has no store of its own: one connection per call, each record written in a
transaction committed before the send it protects.

Under the simulator the database is the run's own (made empty for every run, left as a
crash leaves it), so this gives journaled.py's figures and its certificate
(`tests/python_examples.rs`).
"""

import json
import os
import sqlite3
from typing import Any

import retrylab

import journaled


class SqliteRecords:
    """Records in SQLite on the run's shared disk: they survive a crash."""

    def connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(os.path.join(os.environ["RETRYLAB_RUN_DIR"], "journal.db"))
        db.execute("CREATE TABLE IF NOT EXISTS records (name TEXT PRIMARY KEY, record TEXT NOT NULL)")
        return db

    def get(self, ctx: retrylab.Context, name: str) -> dict[str, Any] | None:
        with self.connect() as db:
            row = db.execute("SELECT record FROM records WHERE name = ?", (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, ctx: retrylab.Context, name: str, record: dict[str, Any]) -> None:
        db = self.connect()
        with db:  # one transaction, committed on leaving the block
            db.execute(
                "INSERT INTO records (name, record) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET record = excluded.record",
                (name, json.dumps(record, sort_keys=True)),
            )
        db.close()


if __name__ == "__main__":
    retrylab.tool("create")(journaled.make_handler(SqliteRecords()))
    retrylab.run(hello_assumptions=journaled.ASSUMPTIONS, guarantee=journaled.GUARANTEE)
