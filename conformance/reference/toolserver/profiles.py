"""Profile store of the reference tool server: one row per (issuer, subject) with an opaque id.

The id is random when the row is made and never changes afterwards (display fields do); deleted rows keep their
id so it is never handed to another profile. SQLite in the data directory, one connection for the store's life in
each process, opened on first use (a connection and its pragma per call cost more than the call's statements).
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DISPLAY_FIELDS = ("name", "email", "nickname")


@dataclass(frozen=True)
class Profile:
    seq: int  # row number (what a numeric-id mutant leaks)
    id: str | None  # None or blank when the stored id was lost (hook for PROF-13)
    issuer: str
    subject: str
    name: str | None
    email: str | None
    nickname: str | None


class ProfileStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._pid = 0
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS profiles (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT,"
                " issuer TEXT NOT NULL, subject TEXT NOT NULL, name TEXT, email TEXT, nickname TEXT,"
                " deleted INTEGER NOT NULL DEFAULT 0, UNIQUE (issuer, subject))"
            )

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """The connection, in a transaction committed on exit. The server calls the store from its event loop, one
        call at a time (the store may be made on the thread that imports the app: hence any thread); a process forked
        after a call opens its own."""
        if self._connection is None or self._pid != os.getpid():
            self._connection = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
            # A test service's rows need not outlive a power cut: each commit is written, never waited for on the disk.
            self._connection.execute("PRAGMA synchronous=OFF")
            self._pid = os.getpid()
        with self._connection as db:
            yield db

    def resolve(self, issuer: str, subject: str, display: dict[str, str | None]) -> Profile:
        """The profile of this account, made on first sight with the display fields the token carries."""
        with self._db() as db:
            db.execute(
                "INSERT OR IGNORE INTO profiles (id, issuer, subject, name, email, nickname) VALUES (?, ?, ?, ?, ?, ?)",
                ("usr_" + secrets.token_hex(10), issuer, subject, *(display.get(f) for f in DISPLAY_FIELDS)),
            )
        found = self.get(issuer, subject)
        assert found is not None
        return found

    def get(self, issuer: str, subject: str) -> Profile | None:
        with self._db() as db:
            row = db.execute(
                "SELECT seq, id, issuer, subject, name, email, nickname FROM profiles"
                " WHERE issuer = ? AND subject = ? AND deleted = 0",
                (issuer, subject),
            ).fetchone()
        return Profile(*row) if row else None

    def blank_id(self, subject: str) -> int:
        """Lose the stored id of every profile of this subject (the reference hook behind PROF-13)."""
        with self._db() as db:
            return db.execute("UPDATE profiles SET id = '' WHERE subject = ?", (subject,)).rowcount

    def set_display(self, subject: str, fields: dict[str, str]) -> int:
        """Change display fields, as the service's own account settings would (the id stays)."""
        updates = {f: fields[f] for f in DISPLAY_FIELDS if f in fields}
        if not updates:
            return 0
        assignments = ", ".join(f"{f} = ?" for f in updates)
        with self._db() as db:
            return db.execute(
                f"UPDATE profiles SET {assignments} WHERE subject = ?", (*updates.values(), subject)
            ).rowcount
