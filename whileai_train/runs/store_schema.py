"""The local store's tables, and how a store written by an earlier version is brought up to them.

One SQLite file (runs/store.py reads and writes it): runs, their points, their notes, their alarms (one row each,
kept with the note that shows it), the metric names each run has used, and the holdout completions kept in
batches (runs/completions.py reads and writes those). A store opened by this version gains
what it lacks, in one transaction, whichever process opens it first; nothing is dropped. Stored JSON is read
with NaN / Infinity (written by older versions) as None, and written with every non-finite float as None.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from typing import Any

__all__ = ["finite", "prepare_schema", "stored_json", "update_last_loss"]

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
    owner TEXT,
    alarm_count INTEGER NOT NULL DEFAULT 0,
    last_loss REAL,
    last_loss_seq INTEGER
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
    client_seq INTEGER,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alarms (
    run_id TEXT NOT NULL,
    note_seq INTEGER,
    step INTEGER NOT NULL,
    name TEXT NOT NULL,
    message TEXT NOT NULL,
    evidence TEXT NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX IF NOT EXISTS alarms_by_note ON alarms (run_id, note_seq);
CREATE TABLE IF NOT EXISTS metric_keys (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS completion_batches (
    run_id TEXT NOT NULL,
    batch INTEGER NOT NULL,
    step INTEGER,
    ts REAL,
    rows INTEGER NOT NULL,
    cut INTEGER NOT NULL,
    dropped INTEGER NOT NULL,
    PRIMARY KEY (run_id, batch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS completions (
    run_id TEXT NOT NULL,
    batch INTEGER NOT NULL,
    row INTEGER NOT NULL,
    step INTEGER,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, batch, row)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS completions_by_step ON completions (run_id, step);
"""

# Columns added after the first release; an older store gains them (and their values) when opened.
_ADDED_RUN_COLUMNS = (("alarm_count", "INTEGER NOT NULL DEFAULT 0"), ("last_loss", "REAL"),
                      ("last_loss_seq", "INTEGER"), ("seq_mode", "TEXT"))
# A note's seq is its place in the run, given by the store; client_seq is the sender's own number (NULL when
# it sent none), unique per run, so a re-sent note is stored once. Made after the migration has added the column.
_NOTES_BY_CLIENT_SEQ = "CREATE UNIQUE INDEX IF NOT EXISTS notes_client_seq ON notes (run_id, client_seq)"

# An alarm is a row of its own (whileai_train/alarm_event.py), stored with the note that shows it: the note's seq
# keys it, so a re-sent note stores its alarm once. Stores written before that held alarms only as points and
# note text; the migration (user_version below 1) reads those once into the table.
_ALARMS_TABLE_VERSION = 1


def prepare_schema(conn: sqlite3.Connection) -> None:
    """Create the tables a new store needs, and bring an older store up to them (the migration below)."""
    conn.executescript(_SCHEMA)
    _migrate(conn)
    conn.execute(_NOTES_BY_CLIENT_SEQ)


def update_last_loss(conn: sqlite3.Connection, run_id: str, rows: list[tuple[Any, ...]]) -> None:
    """Keep the runs table's last loss current (the runs list reads it, not the points)."""
    best: tuple[int, float] | None = None
    for row in sorted((r for r in rows if '"loss":' in r[4]), key=lambda r: r[1], reverse=True):
        loss = stored_json(row[4]).get("loss")
        if isinstance(loss, (int, float)) and not isinstance(loss, bool):
            best = (row[1], float(loss))
            break
    if best is not None:
        conn.execute("UPDATE runs SET last_loss = ?, last_loss_seq = ? WHERE id = ?"
                     " AND (last_loss_seq IS NULL OR last_loss_seq <= ?)", (best[1], best[0], run_id, best[0]))


def _none_for_constant(_: str) -> None:
    return None


def stored_json(text: str | bytes) -> Any:
    """JSON as stored, with NaN / Infinity (written by older versions) read as None."""
    return json.loads(text, parse_constant=_none_for_constant)


def finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _migrate(conn: sqlite3.Connection) -> None:
    """Give a store written by an earlier version what this one reads: the runs' digest, filled from their
    points; the notes' client_seq (an earlier version stored a note under the sender's number, or, when it sent
    none, the next free one, so that number becomes its client_seq: a re-send is still stored once); and the
    alarms table, filled once from the alarm points and alarm notes an earlier version kept instead."""
    runs_done = {name for name, _ in _ADDED_RUN_COLUMNS} <= _columns(conn, "runs")
    alarms_done = conn.execute("PRAGMA user_version").fetchone()[0] >= _ALARMS_TABLE_VERSION
    if runs_done and alarms_done and "client_seq" in _columns(conn, "notes"):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        have = _columns(conn, "runs")  # another process may have won
        missing = [(name, decl) for name, decl in _ADDED_RUN_COLUMNS if name not in have]
        for name, decl in missing:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {name} {decl}")
        run_ids = [r[0] for r in conn.execute("SELECT id FROM runs")] if missing else []
        for run_id in run_ids:
            rows = [(run_id, s, st, t, d) for s, st, t, d in
                    conn.execute("SELECT seq, step, ts, data FROM points WHERE run_id = ?", (run_id,))]
            update_last_loss(conn, run_id, rows)
        if "client_seq" not in _columns(conn, "notes"):
            conn.execute("ALTER TABLE notes ADD COLUMN client_seq INTEGER")
            conn.execute("UPDATE notes SET client_seq = seq")
        if conn.execute("PRAGMA user_version").fetchone()[0] < _ALARMS_TABLE_VERSION:
            _carry_over_legacy_alarms(conn)
            conn.execute(f"PRAGMA user_version = {_ALARMS_TABLE_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


# How an earlier version kept an alarm: a point alarm/<name> = 1 at its step, and the monitor's note beside it.
# Read only here, once per store, to fill the alarms table; nothing else reads alarms from points or text.
_LEGACY_ALARM_KEY = '"alarm/'
_LEGACY_ALARM_NOTE = re.compile(r"^\*\*Alarm: (?P<name>[^*]+)\*\* at step (?P<step>\d+): (?P<message>.*)$", re.DOTALL)


def _carry_over_legacy_alarms(conn: sqlite3.Connection) -> None:
    """Fill the alarms table from an earlier version's alarm points (alarm/<name> non-zero), each with the
    one-line text and seq of its note when one is found; recount each run's alarm_count from the table."""
    notes: dict[tuple[str, str, int], tuple[int, str]] = {}
    for run_id, seq, markdown in conn.execute("SELECT run_id, seq, markdown FROM notes WHERE markdown LIKE '**Alarm: %'"):
        match = _LEGACY_ALARM_NOTE.match(markdown)
        if match:
            notes[(run_id, match["name"].strip(), int(match["step"]))] = (seq, match["message"].strip().splitlines()[0])
    rows = []
    for run_id, step, data in conn.execute("SELECT run_id, step, data FROM points WHERE instr(data, ?) > 0 AND step"
                                           " IS NOT NULL ORDER BY run_id, step, seq", (_LEGACY_ALARM_KEY,)):
        point = stored_json(data)
        for key, value in point.items():
            if (key.startswith("alarm/") and isinstance(value, (int, float)) and not isinstance(value, bool)
                    and value != 0):
                name = key[len("alarm/"):]
                note_seq, message = notes.get((run_id, name, int(step)), (None, f"{name} alarm at step {step}"))
                rows.append((run_id, note_seq, int(step), name, message))
    conn.executemany("INSERT OR IGNORE INTO alarms (run_id, note_seq, step, name, message) VALUES (?, ?, ?, ?, ?)",
                     rows)
    conn.execute("UPDATE runs SET alarm_count = (SELECT COUNT(*) FROM alarms WHERE alarms.run_id = runs.id)")
