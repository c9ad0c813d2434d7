"""The embedded local store: one SQLite database (WAL) holding runs, their points, notes and summary.

It lives at ``$WHILEAI_HOME/runs.db`` (``~/.whileai/runs.db`` by default). Points are keyed by
(run id, sequence number) and inserted with ``INSERT OR IGNORE``, so a re-send never duplicates; a point
sent without a sequence number is numbered by the store, after the run's highest, in arrival order. A run
is numbered one way: its first points decide whether the client numbers them or the store does, and a
later point numbered the other way is refused (RunLimitError "seq_mixed"), never silently dropped as the
duplicate of a number the store gave out. Notes are keyed apart: the store gives every note its place (its
seq, in arrival order) and keeps the sender's own number beside it only to store a re-send once, so a note
sent without a number (a PATCH) never takes a number a client will use. Numbers stay within MAX_SEQ. The
limits the server sets per run (metric names, notes, summary size) are passed in by the caller and checked
inside the same transaction as the write they limit. A run opened twice with the same client id is the
same run. A finished run is final: a second finish, or points, notes or progress after it raise
RunFinishedError and change nothing; only `update_summary` (late results such as the holdout block) and
`append_note` amend it. The runs HTTP API (server/) serves this store.

One writer path: every write is one ``BEGIN IMMEDIATE`` transaction taken under this object's lock, so
threads of one process queue here and processes queue on SQLite's WAL write lock (busy timeout below);
readers never block writers. Reads turn NaN / Infinity from older stores into None (no route emits NaN).
The tables, and how an older store is brought up to them, are in store_schema.py.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from whileai_train.alarm_event import AlarmEvent
from whileai_train.errors import RunError, RunFinishedError, RunLimitError
from whileai_train.runs.config import whileai_home
from whileai_train.runs.defaults import MAX_SEQ, STORE_BUSY_TIMEOUT_S
from whileai_train.runs.run_ids import adopted_id, new_run_id, process_is_gone
from whileai_train.runs.store_schema import finite, prepare_schema, stored_json, update_last_loss

__all__ = ["LocalStore", "default_store_path"]

RUN_STATUSES = ("running", "done", "failed", "stopped")

# how a run's points are numbered, set by its first points: by the client that sends them, or by the store
_SEQ_MODES = {True: "client", False: "store"}

_ROWS_PER_INSERT = 500  # a full HTTP batch (runs/defaults.MAX_POINTS_PER_CALL) in one statement


@functools.lru_cache(maxsize=64)
def _insert_points_sql(n: int) -> str:
    values = ",".join(["(?, ?, ?, ?, ?)"] * n)
    return f"INSERT OR IGNORE INTO points (run_id, seq, step, ts, data) VALUES {values}"


def _open_problem(path: Path, exc: BaseException) -> str:
    """What went wrong opening the store at `path`, with the fix, in one sentence."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return (f"{path} is not a usable SQLite database ({text}). Fix: move it aside (mv {path} {path}.bad); "
                "a new one is created on the next run")
    if isinstance(exc, PermissionError) or "readonly" in str(exc) or "read-only" in str(exc).lower():
        return (f"{path} cannot be written ({text}). Fix: make {path.parent} writable, or set WHILEAI_HOME to a "
                "writable folder")
    return f"{path} cannot be opened ({text}). Fix: check the folder {path.parent} and the disk"


def default_store_path() -> Path:
    return whileai_home() / "runs.db"


class LocalStore:
    """Runs, points and notes in one SQLite file. Every write is its own short transaction."""

    def __init__(self, path: str | Path | None = None, *, busy_timeout_s: float = STORE_BUSY_TIMEOUT_S) -> None:
        """Open (or create) the store. A folder that cannot be written or a file that is not a usable SQLite
        database raises `RunError` naming the path and the fix (never a raw sqlite3 or OS error)."""
        self.path = Path(path) if path is not None else default_store_path()
        self._busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._write_lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connect()  # create the schema now: errors belong at open, not mid-training
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise RunError(_open_problem(self.path, exc)) from None

    def __repr__(self) -> str:
        return f"LocalStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout_s, isolation_level=None,
                                   check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable against a killed process
                prepare_schema(conn)
            except BaseException:
                conn.close()
                raise
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """The one writer path: this object's lock, then one IMMEDIATE transaction (commit or roll back)."""
        conn = self._connect()
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def writing_to_running(self, run_id: str, what: str) -> Iterator[sqlite3.Connection]:
        """One write transaction on a run that exists and is still running, for a room that keeps tables of its
        own in this file (runs/completions.py). RunError when there is no such run, RunFinishedError when it is
        finished (`what` says what was refused)."""
        with self._writing() as conn:
            if self._status(conn, run_id) is None:
                raise RunError(f"no run {run_id} in {self.path}. Fix: `whileai-train runs` lists the ids.")
            self._refuse_finished(conn, run_id, what)
            yield conn

    def reading(self) -> sqlite3.Connection:
        """This thread's connection, for reads (WAL: they never wait on the writer)."""
        return self._connect()

    @staticmethod
    def _status(conn: sqlite3.Connection, run_id: str) -> str | None:
        row = conn.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
        return None if row is None else str(row[0])

    @classmethod
    def _refuse_finished(cls, conn: sqlite3.Connection, run_id: str, what: str) -> None:
        status = cls._status(conn, run_id)
        if status is not None and status != "running":
            raise RunFinishedError(run_id, status, what)

    # -- writes ---------------------------------------------------------------------------------------
    def create_run(self, meta: dict[str, Any], client_id: str | None = None, run_id: str | None = None,
                   owner: str | None = None) -> str:
        """Open a run and return its id; the same `client_id` always returns the same run.

        `owner` (``host:pid``, see :func:`this_process`) lets readers finish a run whose process died.
        """
        with self._writing() as conn:
            if client_id:
                row = conn.execute("SELECT id FROM runs WHERE client_id = ?", (client_id,)).fetchone()
                if row:
                    return str(row[0])
            rid = run_id or adopted_id(client_id) or new_run_id()
            if run_id is None and rid == client_id and conn.execute("SELECT 1 FROM runs WHERE id = ?",
                                                                     (rid,)).fetchone():
                rid = new_run_id()  # another client chose the same id: this run gets one of its own
            conn.execute(
                "INSERT OR IGNORE INTO runs (id, client_id, name, dataset_id, base_model, total_steps, step,"
                " status, created, owner) VALUES (?, ?, ?, ?, ?, ?, 0, 'running', ?, ?)",
                (rid, client_id, str(meta.get("name") or rid), meta.get("dataset_id"), meta.get("base_model"),
                 meta.get("total_steps"), time.time(), owner),
            )
            return rid

    def has_run(self, run_id: str) -> bool:
        return self._connect().execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None

    def reopen(self, run_id: str, owner: str | None = None) -> None:
        """Mark a run running again (checkpoint resume continues the same run), now owned by `owner`."""
        with self._writing() as conn:
            conn.execute(
                "UPDATE runs SET status = 'running', finished = NULL, error = NULL, owner = ? WHERE id = ?",
                (owner, run_id),
            )

    def finish_orphans(self) -> int:
        """Finish "failed" every running run whose writing process on this host is gone; returns how many.

        A SIGKILL or an out-of-memory kill reaches no handler, so nothing else would ever close such a run.
        """
        rows = self._connect().execute(
            "SELECT id, owner FROM runs WHERE status = 'running' AND owner IS NOT NULL").fetchall()
        gone = [(run_id, owner) for run_id, owner in rows if process_is_gone(owner)]
        if not gone:
            return 0
        with self._writing() as conn:
            for run_id, owner in gone:
                pid = owner.rpartition(":")[2]
                conn.execute(
                    "UPDATE runs SET status = 'failed', finished = ?, error = ? WHERE id = ? AND status = 'running'",
                    (time.time(), (f"the process that wrote this run (pid {pid}) ended without finishing it "
                                   "(killed, or out of memory); its points up to then are kept"), run_id),
                )
        return len(gone)

    def add_points(self, run_id: str, points: Sequence[dict[str, Any]] | Iterable[tuple[int | None, Any, Any, str]],
                   progress: tuple[int, int | None] | None = None, *, keys: set[str] | None = None,
                   max_keys: int | None = None) -> int:
        """Insert points (dicts with step, ts and optionally seq, or pre-encoded (seq, step, ts, json) tuples).

        Returns how many were new; a point whose (run id, seq) is already stored is ignored. A dict without
        a seq, or a tuple whose seq is None (its JSON object then has no "seq" key), is numbered after the
        run's highest seq, in the order given. `progress` (step, total) is set
        in the same transaction. `keys`, the metric names these points carry, are remembered per run, and
        refused past `max_keys` names. Raises RunFinishedError when the run is finished, and RunLimitError
        when the points mix numbered and unnumbered, pass MAX_SEQ or pass `max_keys` (nothing written).
        """
        encoded: list[tuple[Any, Any, Any, str] | None] = []
        unnumbered: list[dict[str, Any] | tuple[Any, Any, Any, str]] = []
        for p in points:
            if isinstance(p, tuple) and p[0] is not None:
                encoded.append(p)
            elif isinstance(p, tuple) or p.get("seq") is None:
                unnumbered.append(p)
                encoded.append(None)
            else:
                encoded.append((int(p["seq"]), p.get("step"), p.get("ts"),
                                json.dumps(finite(p), separators=(",", ":"))))
        with self._writing() as conn:
            self._refuse_finished(conn, run_id, "adding points")
            if encoded:
                _keep_one_numbering(conn, run_id, numbered=len(unnumbered) < len(encoded),
                                    unnumbered=bool(unnumbered))
            if keys:
                _remember_keys(conn, run_id, keys, max_keys)
            if unnumbered:
                top = conn.execute("SELECT MAX(seq) FROM points WHERE run_id = ?", (run_id,)).fetchone()[0]
                next_seq = (top + 1) if top is not None else 0
                _check_room(run_id, "point", next_seq, len(unnumbered))
                filled = iter(unnumbered)
                for i, row in enumerate(encoded):
                    if row is None:
                        item = next(filled)
                        if isinstance(item, tuple):  # pre-encoded JSON object without "seq": add it
                            text = item[3].rstrip()
                            text = f'{text[:-1]}{"," if text[:-1].strip() != "{" else ""}"seq":{next_seq}}}'
                            encoded[i] = (next_seq, item[1], item[2], text)
                        else:
                            point = dict(item, seq=next_seq)
                            encoded[i] = (next_seq, point.get("step"), point.get("ts"),
                                          json.dumps(finite(point), separators=(",", ":")))
                        next_seq += 1
            rows = [(run_id, *r) for r in encoded if r is not None]
            per_statement = max(1, min(_ROWS_PER_INSERT, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // 5))
            before = conn.total_changes
            # One multi-row INSERT per chunk, not executemany: executemany releases and retakes the GIL around
            # every row, and each retake can preempt the training thread; one statement releases it once.
            for i in range(0, len(rows), per_statement):
                chunk = rows[i:i + per_statement]
                conn.execute(_insert_points_sql(len(chunk)), [v for row in chunk for v in row])
            new = conn.total_changes - before
            update_last_loss(conn, run_id, rows)
            if progress is not None:
                _set_progress(conn, run_id, *progress)
        return new

    def add_note(self, run_id: str, seq: int | None, markdown: str, ts: float | None = None, *,
                 max_notes: int | None = None, alarm: AlarmEvent | None = None) -> bool:
        """Add a note after the run's last, and the `alarm` it shows (if any) to the run's alarms. `seq` is the
        sender's own number for it (None: it has none); False when the run already holds a note with that number
        (a re-send: its alarm is not stored twice). Past `max_notes` notes in the run, RunLimitError (a re-sent
        note is still False, not refused)."""
        with self._writing() as conn:
            self._refuse_finished(conn, run_id, "adding a note")
            return _insert_note(conn, run_id, seq, markdown, ts, max_notes, alarm)

    def append_note(self, run_id: str, markdown: str, *, max_notes: int | None = None) -> None:
        """Add a note numbered after the run's last, allowed after finish (a late remark through PATCH)."""
        with self._writing() as conn:
            if self._status(conn, run_id) is None:
                raise RunError(f"no run {run_id} in {self.path}. Fix: `whileai-train runs` lists the ids.")
            _insert_note(conn, run_id, None, markdown, None, max_notes)

    def set_progress(self, run_id: str, step: int, total: int | None) -> None:
        with self._writing() as conn:
            self._refuse_finished(conn, run_id, "setting progress")
            _set_progress(conn, run_id, step, total)

    def finish(self, run_id: str, status: str, summary: dict[str, Any] | None = None, error: str | None = None) -> None:
        """Finish a running run. A finished run is final: a second finish raises RunFinishedError and the
        first status, summary and error stay."""
        if status not in RUN_STATUSES[1:]:
            raise ValueError(f"status {status!r}: expected one of done, failed, stopped")
        with self._writing() as conn:
            self._refuse_finished(conn, run_id, f"a second finish ({status})")
            conn.execute(
                "UPDATE runs SET status = ?, summary = ?, error = ?, finished = ? WHERE id = ?",
                (status, json.dumps(finite(summary)) if summary is not None else None, error, time.time(),
                 run_id),
            )

    def update_summary(self, run_id: str, patch: dict[str, Any], *, max_bytes: int | None = None) -> None:
        """Merge `patch`'s top-level keys into the run's summary (allowed after finish: late results such as
        summary["holdout"] and summary["delta"]). Raises RunError when there is no such run, and RunLimitError
        when the merged summary would pass `max_bytes` of JSON (the stored summary is left as it was)."""
        with self._writing() as conn:
            row = conn.execute("SELECT summary FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunError(f"no run {run_id} in {self.path}. Fix: `whileai-train runs` lists the ids.")
            summary = stored_json(row[0]) if row[0] else {}
            if not isinstance(summary, dict):
                summary = {}
            summary.update(finite(dict(patch)))
            text = json.dumps(summary)
            if max_bytes is not None and len(text.encode()) > max_bytes:
                raise RunLimitError("summary_too_large", f"run {run_id}'s summary would be {len(text.encode())} "
                                    f"bytes of JSON with this change; the cap is {max_bytes} per run. Fix: keep large "
                                    "results in files and put their path in the summary")
            conn.execute("UPDATE runs SET summary = ? WHERE id = ?", (text, run_id))

    # -- reads ----------------------------------------------------------------------------------------
    def get_run(self, run_id: str, last_points: int | None = None) -> dict[str, Any] | None:
        """The run record: fields, summary, notes, alarms, point count and (optionally) its last points."""
        self.finish_orphans()
        conn = self._connect()
        row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        record = _run_record(row)
        record["points_count"] = self.points_count(run_id)
        record["notes"] = [
            {"seq": s, "ts": t, "markdown": m}
            for s, t, m in conn.execute("SELECT seq, ts, markdown FROM notes WHERE run_id = ? ORDER BY seq", (run_id,))
        ]
        record["alarms"] = [event.model_dump() for event in self.alarms(run_id)]
        if last_points:
            rows = conn.execute(
                "SELECT data FROM points WHERE run_id = ? ORDER BY seq DESC LIMIT ?", (run_id, int(last_points))
            ).fetchall()
            record["points"] = [stored_json(r[0]) for r in reversed(rows)]
        return record

    def alarms(self, run_id: str) -> list[AlarmEvent]:
        """The run's alarms in step order."""
        return [event for _, event in self._alarm_rows(run_id)]

    def alarms_by_note(self, run_id: str) -> dict[int, AlarmEvent]:
        """The run's alarms under the seq of the note that shows each (an alarm carried over from a store written
        before alarms had a table, whose note was not found, has none and is not here)."""
        return {note_seq: event for note_seq, event in self._alarm_rows(run_id) if note_seq is not None}

    def _alarm_rows(self, run_id: str) -> list[tuple[int | None, AlarmEvent]]:
        rows = self._connect().execute("SELECT note_seq, name, step, message, evidence FROM alarms WHERE run_id = ?"
                                       " ORDER BY step, note_seq", (run_id,))
        return [(note_seq, AlarmEvent(name=name, step=step, message=message, evidence=stored_json(evidence)))
                for note_seq, name, step, message, evidence in rows]

    def points_count(self, run_id: str) -> int:
        """How many points the run holds."""
        return int(self._connect().execute("SELECT COUNT(*) FROM points WHERE run_id = ?", (run_id,)).fetchone()[0])

    def points(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._connect().execute("SELECT data FROM points WHERE run_id = ? ORDER BY seq", (run_id,))
        return [stored_json(r[0]) for r in rows]

    def points_page(self, run_id: str, after_seq: int | None = None, limit: int = 5000
                    ) -> tuple[list[dict[str, Any]], int | None]:
        """Up to `limit` points with seq above `after_seq`, in seq order, and the cursor for the next page
        (None when this page reached the end)."""
        rows = self._connect().execute(
            "SELECT seq, data FROM points WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (run_id, after_seq if after_seq is not None else -(2 ** 63), int(limit) + 1),
        ).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        return [stored_json(r[1]) for r in rows], (int(rows[-1][0]) if more else None)

    def list_runs(self, limit: int = 50, *, status: str | None = None, name_contains: str | None = None,
                  offset: int = 0) -> list[dict[str, Any]]:
        """Runs newest first; `status` and `name_contains` (case-insensitive) filter them."""
        self.finish_orphans()
        where, args = [], []
        if status:
            where.append("status = ?")
            args.append(status)
        if name_contains:
            where.append("instr(lower(name), lower(?)) > 0")
            args.append(name_contains)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        rows = self._connect().execute(
            f"SELECT {_RUN_COLUMNS}, client_id FROM runs {clause} ORDER BY created DESC LIMIT ? OFFSET ?",
            (*args, int(limit), int(offset)),
        ).fetchall()
        out = []
        for row in rows:
            record = _run_record(row[:-1])
            record["client_id"] = row[-1]
            out.append(record)
        return out


_RUN_COLUMNS = ("id, name, dataset_id, base_model, total_steps, step, status, created, finished, summary, error,"
                " alarm_count, last_loss")
_RUN_KEYS = tuple(c.strip() for c in _RUN_COLUMNS.split(","))


def _run_record(row: Sequence[Any]) -> dict[str, Any]:
    record = dict(zip(_RUN_KEYS, row))
    summary = stored_json(record["summary"]) if record["summary"] else None
    record["summary"] = summary if isinstance(summary, dict) else None
    if isinstance(record["last_loss"], float) and not math.isfinite(record["last_loss"]):
        record["last_loss"] = None
    record["stop_reason"] = (summary or {}).get("stop_reason") if isinstance(summary, dict) else None
    return record


def _set_progress(conn: sqlite3.Connection, run_id: str, step: int, total: int | None) -> None:
    conn.execute(
        "UPDATE runs SET step = MAX(COALESCE(step, 0), ?), total_steps = COALESCE(?, total_steps) WHERE id = ?",
        (int(step), total, run_id),
    )


def _insert_note(conn: sqlite3.Connection, run_id: str, client_seq: int | None, markdown: str, ts: float | None,
                 max_notes: int | None = None, alarm: AlarmEvent | None = None) -> bool:
    """Store a note at the run's next place, with the alarm it shows; False when the sender's number
    `client_seq` is already stored."""
    if client_seq is not None and conn.execute("SELECT 1 FROM notes WHERE run_id = ? AND client_seq = ?",
                                               (run_id, int(client_seq))).fetchone() is not None:
        return False  # a re-send: already stored, so never refused by the cap
    if max_notes is not None:
        count = conn.execute("SELECT COUNT(*) FROM notes WHERE run_id = ?", (run_id,)).fetchone()[0]
        if count >= max_notes:
            raise RunLimitError("too_many_notes", f"run {run_id} already has {count} notes; the cap is {max_notes} "
                                "per run. Fix: put more in one note, or in the summary")
    top = conn.execute("SELECT MAX(seq) FROM notes WHERE run_id = ?", (run_id,)).fetchone()[0]
    place = (top + 1) if top is not None else 0
    _check_room(run_id, "note", place, 1)
    conn.execute("INSERT INTO notes (run_id, seq, ts, markdown, client_seq) VALUES (?, ?, ?, ?, ?)",
                 (run_id, place, ts if ts is not None else time.time(), str(markdown),
                  None if client_seq is None else int(client_seq)))
    if alarm is not None:
        conn.execute("INSERT INTO alarms (run_id, note_seq, step, name, message, evidence) VALUES (?, ?, ?, ?, ?, ?)",
                     (run_id, place, alarm.step, alarm.name, alarm.message, json.dumps(finite(alarm.evidence))))
        conn.execute("UPDATE runs SET alarm_count = alarm_count + 1 WHERE id = ?", (run_id,))
    return True


def _keep_one_numbering(conn: sqlite3.Connection, run_id: str, *, numbered: bool, unnumbered: bool) -> None:
    """Refuse points numbered the other way from the run's first points (or mixed in one call); the first
    points of a run set its way."""
    if numbered and unnumbered:
        raise RunLimitError("seq_mixed", "these points mix some with a seq and some without; a run's points are "
                            "numbered one way. Fix: give every point a seq (numbered per client), or none (the "
                            "server numbers them in arrival order)")
    row = conn.execute("SELECT seq_mode FROM runs WHERE id = ?", (run_id,)).fetchone()
    mode = _SEQ_MODES[numbered]
    if row is None or row[0] == mode:
        return
    if row[0] is None:
        conn.execute("UPDATE runs SET seq_mode = ? WHERE id = ?", (mode, run_id))
        return
    theirs = "with a seq" if row[0] == "client" else "without a seq (numbered by the server)"
    ours = "with" if numbered else "without"
    raise RunLimitError("seq_mixed", f"run {run_id}'s points were sent {theirs}; points {ours} one would collide "
                        "with those numbers and be lost, so they are refused. Fix: number every point of a run the "
                        "same way (give each client's points a seq of its own range, or send none), or log to a "
                        "new run")


def _remember_keys(conn: sqlite3.Connection, run_id: str, keys: set[str], max_keys: int | None) -> None:
    known = {row[0] for row in conn.execute("SELECT key FROM metric_keys WHERE run_id = ?", (run_id,))}
    fresh = sorted(keys - known)
    if not fresh:
        return
    if max_keys is not None and len(known) + len(fresh) > max_keys:
        shown = ", ".join(repr(k[:40]) for k in fresh[:3]) + (", ..." if len(fresh) > 3 else "")
        raise RunLimitError("too_many_metrics", f"run {run_id} has {len(known)} metric names and these points add "
                            f"{len(fresh)} more ({shown}); the cap is {max_keys} names per run. Fix: log fewer "
                            "distinct names (one name per quantity, the index in the step), or start a new run")
    conn.executemany("INSERT INTO metric_keys (run_id, key) VALUES (?, ?)", [(run_id, k) for k in fresh])


def _check_room(run_id: str, what: str, first: int, count: int) -> None:
    """The store's own numbers stay within MAX_SEQ (exact in a browser's numbers)."""
    if first + count - 1 > MAX_SEQ:
        raise RunLimitError("seq_exhausted", f"run {run_id} has no {what} numbers left: the next would be past "
                            f"{MAX_SEQ} (2^53 - 1, the largest a browser holds exactly). Fix: log to a new run")
