"""SQLite storage (WAL) for campaigns and tracked spend, safe under concurrent requests.

Every read-modify-write runs in one ``BEGIN IMMEDIATE`` transaction, so two concurrent updates of one campaign
serialize instead of overwriting each other; ``revision`` counts the writes (the concurrency test checks it).
Each thread has its own connection (the app calls the store on its event loop; a test may call it from threads).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1,
    doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS campaigns_account_seq ON campaigns (account, seq);
CREATE TABLE IF NOT EXISTS spend (
    project TEXT PRIMARY KEY,
    micros INTEGER NOT NULL
);
"""


class Store:
    def __init__(self, path: Path, *, campaign_ids: str = "random") -> None:
        self.path = path
        self.campaign_ids = campaign_ids  # "random" or "sequential" (SandboxSettings.campaign_ids)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conn().executescript(SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # -- campaigns --

    def create_campaign(self, account: str, doc: dict[str, Any]) -> dict[str, Any]:
        now = int(time.time())
        campaign_id = "cmp_" + secrets.token_hex(12)
        with self._tx() as conn:
            if self.campaign_ids == "sequential":  # the next row's number, inside the write transaction
                (last,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM campaigns").fetchone()
                campaign_id = f"cmp_{int(last) + 1:06d}"
            conn.execute(
                "INSERT INTO campaigns (id, account, created_at, updated_at, doc) VALUES (?, ?, ?, ?, ?)",
                (campaign_id, account, now, now, json.dumps(doc)),
            )
        return {"id": campaign_id, "created_at": now, "updated_at": now, "doc": doc}

    def get_campaign(self, account: str, campaign_id: str) -> dict[str, Any] | None:
        row = (
            self._conn()
            .execute(
                "SELECT id, created_at, updated_at, doc FROM campaigns WHERE id = ? AND account = ?",
                (campaign_id, account),
            )
            .fetchone()
        )
        return _row(row) if row is not None else None

    def update_campaign(
        self, account: str, campaign_id: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """Apply ``change`` to the stored document in one transaction. ``change`` returns the new document, or
        None for "nothing changed"; it may raise to abort (nothing written). None for an unknown id."""
        with self._tx() as conn:
            row = conn.execute(
                "SELECT id, created_at, updated_at, doc FROM campaigns WHERE id = ? AND account = ?",
                (campaign_id, account),
            ).fetchone()
            if row is None:
                return None
            current = _row(row)
            new_doc = change(json.loads(json.dumps(current["doc"])))
            if new_doc is None:
                return current
            # updated_at never goes back, even if the wall clock does.
            updated_at = max(int(time.time()), current["updated_at"])
            conn.execute(
                "UPDATE campaigns SET doc = ?, updated_at = ?, revision = revision + 1 WHERE id = ?",
                (json.dumps(new_doc), updated_at, campaign_id),
            )
        return {**current, "doc": new_doc, "updated_at": updated_at}

    def revision(self, campaign_id: str) -> int:
        row = self._conn().execute("SELECT revision FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
        return int(row[0]) if row else 0

    def list_campaigns(
        self,
        account: str,
        *,
        limit: int,
        order: str,
        after: str | None,
        before: str | None,
        mutants: frozenset[str] = frozenset(),
    ) -> tuple[list[dict[str, Any]], bool] | None:
        """A page in ``order`` and whether more items lie beyond it in the direction of the walk.

        ``after`` pages forward (items following the cursor in ``order``); ``before`` pages backward and
        returns the ``limit`` items immediately preceding the cursor, still in ``order``; ``has_more`` then
        says whether items precede the page. None when the cursor is not a campaign of this account.
        """
        conn = self._conn()
        cursor_id = after or before
        cursor_seq: int | None = None
        if cursor_id is not None:
            row = conn.execute(
                "SELECT seq FROM campaigns WHERE id = ? AND account = ?", (cursor_id, account)
            ).fetchone()
            if row is None:
                return None
            cursor_seq = int(row[0])
        asc = order == "asc"
        # "forward" is increasing seq for asc, decreasing for desc; before walks the other way.
        forward = before is None
        increasing = asc == forward
        op = ">" if increasing else "<"
        if "duplicate-across-pages" in mutants and after is not None:
            op += "="  # the cursor item is repeated on the next page
        sql = "SELECT id, created_at, updated_at, doc FROM campaigns WHERE account = ?"
        args: list[Any] = [account]
        if cursor_seq is not None:
            sql += f" AND seq {op} ?"
            args.append(cursor_seq)
        sql += f" ORDER BY seq {'ASC' if increasing else 'DESC'} LIMIT ?"
        args.append(limit + 1)
        rows = conn.execute(sql, args).fetchall()
        has_more = len(rows) > limit
        items = [_row(r) for r in rows[:limit]]
        if not forward:
            items.reverse()  # a before-page is returned in the requested order
        if "has-more-wrong-on-last-page" in mutants and forward and not has_more and items:
            has_more = True
        return items, has_more

    # -- spend --

    def add_spend(self, project: str, micros: int) -> int:
        with self._tx() as conn:
            row = conn.execute("SELECT micros FROM spend WHERE project = ?", (project,)).fetchone()
            total = (int(row[0]) if row else 0) + micros
            conn.execute(
                "INSERT INTO spend (project, micros) VALUES (?, ?) "
                "ON CONFLICT(project) DO UPDATE SET micros = excluded.micros",
                (project, total),
            )
        return total

    def spend(self, project: str) -> int:
        row = self._conn().execute("SELECT micros FROM spend WHERE project = ?", (project,)).fetchone()
        return int(row[0]) if row else 0


def _row(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "created_at": int(row["created_at"]),
        "updated_at": int(row["updated_at"]),
        "doc": json.loads(row["doc"]),
    }
