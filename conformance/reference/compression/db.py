"""SQLite state: compression counts per key per calendar month, and the outputs (original upload kept for resizes).

Each increment is one ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` statement, so concurrent requests never
lose a count; the output row and its count are written in one transaction, so a failure leaves neither behind.
"""

from __future__ import annotations

import datetime as dt
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS counts (
    key_id TEXT NOT NULL, month TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (key_id, month)
);
CREATE TABLE IF NOT EXISTS outputs (
    id TEXT PRIMARY KEY, key_id TEXT NOT NULL, mime TEXT NOT NULL,
    input_size INTEGER NOT NULL, original BLOB NOT NULL, output BLOB NOT NULL,
    width INTEGER NOT NULL, height INTEGER NOT NULL, created_at TEXT NOT NULL
);
"""


def current_month() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m")


@dataclass(frozen=True)
class Output:
    id: str
    key_id: str
    mime: str
    input_size: int
    original: bytes
    output: bytes
    width: int
    height: int


class Database:
    """One connection per thread (sqlite3 objects are not shared across threads); WAL for concurrent readers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        with self._connect() as conn:
            conn.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # a commit is written, not waited for on the disk (WAL: still atomic)
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    @property
    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def count(self, key_id: str) -> int:
        row = self.conn.execute(
            "SELECT count FROM counts WHERE key_id = ? AND month = ?", (key_id, current_month())
        ).fetchone()
        return int(row[0]) if row else 0

    def _increment(self, conn: sqlite3.Connection, key_id: str, by: int) -> int:
        row = conn.execute(
            "INSERT INTO counts (key_id, month, count) VALUES (?, ?, ?) "
            "ON CONFLICT (key_id, month) DO UPDATE SET count = count + excluded.count RETURNING count",
            (key_id, current_month(), by),
        ).fetchone()
        return int(row[0])

    def increment(self, key_id: str, by: int = 1) -> int:
        if by == 0:
            return self.count(key_id)
        return self._increment(self.conn, key_id, by)

    def add_output(
        self, key_id: str, mime: str, original: bytes, output: bytes, width: int, height: int
    ) -> tuple[str, int]:
        """Store the output and count the upload atomically; returns (id, new count)."""
        output_id = secrets.token_urlsafe(18)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT INTO outputs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    output_id,
                    key_id,
                    mime,
                    len(original),
                    original,
                    output,
                    width,
                    height,
                    dt.datetime.now(dt.UTC).isoformat(),
                ),
            )
            count = self._increment(conn, key_id, 1)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return output_id, count

    def get_output(self, output_id: str, key_id: str | None) -> Output | None:
        """The output of that account; ``key_id`` None: of whichever account made it (only a mutant asks so)."""
        row = self.conn.execute(
            "SELECT id, key_id, mime, input_size, original, output, width, height FROM outputs "
            "WHERE id = ? AND (key_id = ? OR ? IS NULL)",
            (output_id, key_id, key_id),
        ).fetchone()
        if row is None:
            return None
        return Output(*row)
