"""The embedded local store: one SQLite database (WAL) holding runs, their points, notes and summary.

It lives at ``$WHILEAI_HOME/runs.db`` (``~/.whileai/runs.db`` by default). Points are keyed by
(run id, sequence number) and inserted with ``INSERT OR IGNORE``, so a re-send never duplicates; a run
opened twice with the same client id is the same run. The runs HTTP API (server/api.py) serves this store.
Safe across threads (one connection per thread) and processes (SQLite's WAL locking).
"""

from __future__ import annotations

import functools
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from whileai_train.runs.config import whileai_home

__all__ = ["LocalStore", "default_store_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    client_id TEXT UNIQUE,
    name TEXT NOT NULL,
    dataset_id TEXT,
    base_model TEXT,
    total_steps INTEGER,
    step INTEGER,
    status TEXT NOT NULL,
    created REAL NOT NULL,
    finished REAL,
    summary TEXT,
    error TEXT,
    owner TEXT
);
CREATE TABLE IF NOT EXISTS points (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step INTEGER,
    ts REAL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notes (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ts REAL,
    markdown TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""

RUN_STATUSES = ("running", "done", "failed", "stopped")

_ROWS_PER_INSERT = 500  # a full HTTP batch (product text: up to 500 points a call) in one statement


@functools.lru_cache(maxsize=64)
def _insert_points_sql(n: int) -> str:
    values = ",".join(["(?, ?, ?, ?, ?)"] * n)
    return f"INSERT OR IGNORE INTO points (run_id, seq, step, ts, data) VALUES {values}"


def default_store_path() -> Path:
    return whileai_home() / "runs.db"


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:12]


def this_process() -> str:
    """`host:pid` of the writing process, so a reader can tell a run whose process is gone (SIGKILL, OOM)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _process_is_gone(owner: str | None) -> bool:
    """True only when `owner` names a process on this host that no longer exists (never guesses elsewhere)."""
    if not owner or ":" not in owner:
        return False
    host, _, pid_text = owner.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists but not ours to signal
        return False
    return False


class LocalStore:
    """Runs, points and notes in one SQLite file. Every write is its own short transaction."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connect()  # create the schema now: errors belong at open, not mid-training

    def __repr__(self) -> str:
        return f"LocalStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable against a killed process
            conn.executescript(_SCHEMA)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- writes ---------------------------------------------------------------------------------------
    def create_run(self, meta: dict[str, Any], client_id: str | None = None, run_id: str | None = None,
                   owner: str | None = None) -> str:
        """Open a run and return its id; the same `client_id` always returns the same run.

        `owner` (``host:pid``, see :func:`this_process`) lets readers finish a run whose process died.
        """
        conn = self._connect()
        if client_id:
            row = conn.execute("SELECT id FROM runs WHERE client_id = ?", (client_id,)).fetchone()
            if row:
                return str(row[0])
        rid = run_id or new_run_id()
        conn.execute(
            "INSERT OR IGNORE INTO runs (id, client_id, name, dataset_id, base_model, total_steps, step, status,"
            " created, owner) VALUES (?, ?, ?, ?, ?, ?, 0, 'running', ?, ?)",
            (rid, client_id, str(meta.get("name") or rid), meta.get("dataset_id"), meta.get("base_model"),
             meta.get("total_steps"), time.time(), owner),
        )
        if client_id:  # a concurrent open with the same client id won the race
            row = conn.execute("SELECT id FROM runs WHERE client_id = ?", (client_id,)).fetchone()
            return str(row[0])
        return rid

    def has_run(self, run_id: str) -> bool:
        return self._connect().execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None

    def reopen(self, run_id: str, owner: str | None = None) -> None:
        """Mark a run running again (checkpoint resume continues the same run), now owned by `owner`."""
        self._connect().execute(
            "UPDATE runs SET status = 'running', finished = NULL, error = NULL, owner = ? WHERE id = ?",
            (owner, run_id),
        )

    def finish_orphans(self) -> int:
        """Finish "failed" every running run whose writing process on this host is gone; returns how many.

        A SIGKILL or an out-of-memory kill reaches no handler, so nothing else would ever close such a run.
        """
        conn = self._connect()
        rows = conn.execute("SELECT id, owner FROM runs WHERE status = 'running' AND owner IS NOT NULL").fetchall()
        gone = [(run_id, owner) for run_id, owner in rows if _process_is_gone(owner)]
        for run_id, owner in gone:
            pid = owner.rpartition(":")[2]
            conn.execute(
                "UPDATE runs SET status = 'failed', finished = ?, error = ? WHERE id = ? AND status = 'running'",
                (time.time(), (f"the process that wrote this run (pid {pid}) ended without finishing it "
                               "(killed, or out of memory); its points up to then are kept"), run_id),
            )
        return len(gone)

    def add_points(self, run_id: str, points: Sequence[dict[str, Any]] | Iterable[tuple[int, Any, Any, str]]) -> int:
        """Insert points (dicts with seq, step, ts, or pre-encoded (seq, step, ts, json) tuples).

        Returns how many were new; a point whose (run id, seq) is already stored is ignored.
        """
        rows = []
        for p in points:
            if isinstance(p, tuple):
                rows.append((run_id, *p))
            else:
                rows.append((run_id, int(p["seq"]), p.get("step"), p.get("ts"), json.dumps(p)))
        conn = self._connect()
        per_statement = max(1, min(_ROWS_PER_INSERT, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // 5))
        before = conn.total_changes
        conn.execute("BEGIN")
        try:
            # One multi-row INSERT per chunk, not executemany: executemany releases and retakes the GIL around
            # every row, and each retake can preempt the training thread; one statement releases it once.
            for i in range(0, len(rows), per_statement):
                chunk = rows[i:i + per_statement]
                conn.execute(_insert_points_sql(len(chunk)), [v for row in chunk for v in row])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return conn.total_changes - before

    def add_note(self, run_id: str, seq: int, markdown: str, ts: float | None = None) -> bool:
        cur = self._connect().execute(
            "INSERT OR IGNORE INTO notes (run_id, seq, ts, markdown) VALUES (?, ?, ?, ?)",
            (run_id, int(seq), ts if ts is not None else time.time(), str(markdown)),
        )
        return cur.rowcount > 0

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        self._connect().execute(
            "UPDATE runs SET step = MAX(COALESCE(step, 0), ?), total_steps = COALESCE(?, total_steps) WHERE id = ?",
            (int(step), total, run_id),
        )

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None = None, error: str | None = None) -> None:
        if status not in RUN_STATUSES[1:]:
            raise ValueError(f"status {status!r}: expected one of done, failed, stopped")
        self._connect().execute(
            "UPDATE runs SET status = ?, summary = ?, error = ?, finished = ? WHERE id = ?",
            (status, json.dumps(summary) if summary is not None else None, error, time.time(), run_id),
        )

    def update_summary(self, run_id: str, patch: dict[str, Any]) -> None:
        """Merge the top-level keys of `patch` into the run's summary (allowed after finish)."""
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT summary FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise KeyError(run_id)
            summary = json.loads(row[0]) if row[0] else {}
            summary.update(patch)
            conn.execute("UPDATE runs SET summary = ? WHERE id = ?", (json.dumps(summary, default=str), run_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- reads ----------------------------------------------------------------------------------------
    def get_run(self, run_id: str, last_points: int | None = None) -> dict[str, Any] | None:
        """The run record: fields, summary, note list, point count and (optionally) its last points."""
        self.finish_orphans()
        conn = self._connect()
        row = conn.execute(
            "SELECT id, name, dataset_id, base_model, total_steps, step, status, created, finished, summary, error"
            " FROM runs WHERE id = ?", (run_id,),
        ).fetchone()
        if row is None:
            return None
        keys = ("id", "name", "dataset_id", "base_model", "total_steps", "step", "status", "created",
                "finished", "summary", "error")
        record = dict(zip(keys, row))
        record["summary"] = json.loads(record["summary"]) if record["summary"] else None
        record["points_count"] = conn.execute("SELECT COUNT(*) FROM points WHERE run_id = ?", (run_id,)).fetchone()[0]
        record["notes"] = [
            {"seq": s, "ts": t, "markdown": m}
            for s, t, m in conn.execute("SELECT seq, ts, markdown FROM notes WHERE run_id = ? ORDER BY seq", (run_id,))
        ]
        if last_points:
            rows = conn.execute(
                "SELECT data FROM points WHERE run_id = ? ORDER BY seq DESC LIMIT ?", (run_id, int(last_points))
            ).fetchall()
            record["points"] = [json.loads(r[0]) for r in reversed(rows)]
        return record

    def points(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._connect().execute("SELECT data FROM points WHERE run_id = ? ORDER BY seq", (run_id,))
        return [json.loads(r[0]) for r in rows]

    def list_runs(self, limit: int = 50) -> list[dict[str, Any]]:
        self.finish_orphans()
        rows = self._connect().execute(
            "SELECT id, name, status, step, total_steps, created, summary, client_id FROM runs"
            " ORDER BY created DESC LIMIT ?",
            (int(limit),),
        ).fetchall()
        out = []
        for rid, name, status, step, total, created, summary, client_id in rows:
            out.append({"id": rid, "name": name, "status": status, "step": step, "total_steps": total,
                        "created": created, "summary": json.loads(summary) if summary else None,
                        "client_id": client_id})
        return out
