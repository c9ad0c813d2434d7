"""The on-disk spool: what a platform run has logged but the platform has not yet acknowledged.

One append-only JSON-lines file per run, ``$WHILEAI_HOME/spool/<client id>.jsonl``, written by the sender's
flush thread at least once per flush interval (so a killed process loses at most that interval) and read
back by the same process after an outage or by ``whileai-train sync`` later. Records:

    {"t": "open", "client_id", "url", "meta", "pid", "host"}   {"t": "remote", "run_id"}
    {"t": "p", "p": point}          {"t": "acked", "through": seq}   (every point with seq <= through landed)
    {"t": "note", "seq", "markdown", "ts", "alarm"?}     {"t": "note_acked", "seq"}   (alarm: an AlarmEvent)
    {"t": "progress", "step", "total"}         {"t": "finish", "status", "summary", "error"}   {"t": "finished"}
    {"t": "reopen"}   (a resumed run: reopen it before sending)

An "open" record with "store" belongs to a local-store run whose last points could not be written to that
database at finish (it was locked); `sync` writes them there. The key is never written here: `sync`
resolves it again. A line that cannot be read (torn by a kill mid-write, bad bytes, wrong shape) is skipped,
counted and named.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_train.alarm_event import AlarmEvent
from whileai_train.runs.config import whileai_home

__all__ = ["Spool", "SpoolState", "read_spool", "spool_dir", "spool_path"]


def spool_dir() -> Path:
    return whileai_home() / "spool"


def spool_path(client_id: str) -> Path:
    """The spool file of one run (by its client id)."""
    return spool_dir() / f"{client_id}.jsonl"


@dataclass
class SpoolState:
    """What a spool file says is still owed to the platform."""

    path: Path
    client_id: str = ""
    url: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    pid: int | None = None
    host: str = ""
    remote_id: str | None = None
    points: dict[int, str] = field(default_factory=dict)  # seq -> encoded point, not yet acknowledged
    notes: dict[int, tuple[str, float, AlarmEvent | None]] = field(default_factory=dict)  # seq -> markdown, ts, alarm
    progress: tuple[int, int | None] | None = None
    finish: dict[str, Any] | None = None
    finished: bool = False
    max_seq: int = -1
    store: str | None = None  # a local-store run whose points could not be written there: its database path
    reopen: bool = False  # a resumed run: reopen it (it may have been finished) before sending
    bad_lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, why it was skipped)

    def bad_lines_text(self) -> str:
        """'N unreadable line(s) skipped (line 3: not UTF-8 text; ...)', or '' when every line was read."""
        if not self.bad_lines:
            return ""
        shown = "; ".join(f"line {n}: {why}" for n, why in self.bad_lines[:5])
        more = f"; {len(self.bad_lines) - 5} more" if len(self.bad_lines) > 5 else ""
        return f"{len(self.bad_lines)} unreadable line(s) skipped ({shown}{more})"

    def process_alive(self) -> bool:
        """True when the process that wrote this spool is still running on this host."""
        if self.pid is None or self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


class Spool:
    """Appends records to one run's spool file. Used only by background threads and at open/finish.

    A write that fails (disk full, read-only) raises `OSError`, and the lines it could not write are kept and
    written first by the next write: every record is idempotent on replay (points by seq, acks by number), so
    a line written twice is harmless, and one torn by the failure is skipped by the reader.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        self._backlog: list[str] = []
        self._torn = False  # the last failed write may have left a partial line: start the next on a new line

    def __repr__(self) -> str:
        return f"Spool({str(self.path)!r})"

    @property
    def unwritten(self) -> int:
        """Records handed to `write_lines` that are not on disk yet (a write failed)."""
        with self._lock:
            return len(self._backlog)

    def unwritten_records(self) -> tuple[set[int], bool]:
        """The seqs of the points among the unwritten records, and whether the finish record is among them."""
        with self._lock:
            backlog = list(self._backlog)
        seqs: set[int] = set()
        finish = False
        for line in backlog:
            record = json.loads(line)
            if record.get("t") == "p":
                seqs.add(int(record["p"]["seq"]))
            finish = finish or record.get("t") == "finish"
        return seqs, finish

    def write_lines(self, lines: list[str]) -> None:
        """Append pre-encoded JSON lines and hand them to the OS (survives a killed process). On a failure the
        lines not wholly on disk are kept for the next write, and `OSError` is raised."""
        with self._lock:
            if self._fd is None:
                return
            pending = self._backlog + lines
            if not pending:
                return
            prefix = b"\n" if self._torn else b""
            encoded = [(line + "\n").encode("utf-8") for line in pending]
            data = prefix + b"".join(encoded)
            written = 0
            try:
                while written < len(data):
                    written += os.write(self._fd, data[written:])
            except OSError:
                end, whole = len(prefix), 0
                for chunk in encoded:
                    if end + len(chunk) > written:
                        break
                    end += len(chunk)
                    whole += 1
                self._backlog = pending[whole:]
                self._torn = written > end or (self._torn and written == 0)
                raise
            self._backlog = []
            self._torn = False

    def write(self, record: dict[str, Any]) -> None:
        self.write_lines([json.dumps(record, default=str)])

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def remove(self) -> None:
        """Everything landed: the file goes."""
        self.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    @staticmethod
    def point_line(encoded_point: str) -> str:
        return '{"t":"p","p":' + encoded_point + "}"

    @staticmethod
    def note_line(seq: int, markdown: str, ts: float, alarm: AlarmEvent | None = None) -> str:
        record: dict[str, Any] = {"t": "note", "seq": seq, "markdown": markdown, "ts": ts}
        if alarm is not None:
            record["alarm"] = alarm.model_dump(mode="json")
        return json.dumps(record)

    @staticmethod
    def progress_line(step: int, total: int | None) -> str:
        return json.dumps({"t": "progress", "step": step, "total": total})

    @staticmethod
    def open_record(client_id: str, url: str, meta: dict[str, Any], store: str | None = None) -> dict[str, Any]:
        record = {"t": "open", "client_id": client_id, "url": url, "meta": meta, "pid": os.getpid(),
                  "host": socket.gethostname()}
        if store is not None:
            record["store"] = store
        return record


def _no_constant(name: str) -> None:
    """JSON has no NaN or Infinity: a spool line holding one is read with null in its place."""
    return


def _apply(state: SpoolState, rec: dict[str, Any], acks: dict[str, Any]) -> None:
    """Replay one record into `state`; a record of the wrong shape raises KeyError, TypeError or ValueError."""
    t = rec["t"]
    if t == "p":
        p = rec["p"]
        if not isinstance(p, dict):
            raise TypeError("the point is not an object")
        seq = int(p["seq"])
        state.points[seq] = json.dumps(p, separators=(",", ":"), allow_nan=False)
        state.max_seq = max(state.max_seq, seq)
    elif t == "acked":
        acks["through"] = max(acks["through"], int(rec["through"]))
    elif t == "open":
        meta = rec.get("meta") or {}
        if not isinstance(meta, dict) or not isinstance(rec["client_id"], str) or not isinstance(rec["url"], str):
            raise TypeError("the open record has the wrong types")
        pid = rec.get("pid")
        state.client_id, state.url, state.meta = rec["client_id"], rec["url"], meta
        state.pid, state.host = (pid if isinstance(pid, int) else None), str(rec.get("host") or "")
        store = rec.get("store")
        state.store = str(store) if store else None
    elif t == "remote":
        if not isinstance(rec["run_id"], str):
            raise TypeError("run_id is not a string")
        state.remote_id = rec["run_id"]
    elif t == "reopen":
        state.reopen = True
    elif t == "note":
        if not isinstance(rec["markdown"], str):
            raise TypeError("markdown is not a string")
        alarm = rec.get("alarm")
        state.notes[int(rec["seq"])] = (rec["markdown"], float(rec.get("ts") or 0.0),
                                        None if alarm is None else AlarmEvent.model_validate(alarm))
    elif t == "note_acked":
        acks["notes"].add(int(rec["seq"]))
    elif t == "progress":
        total = rec.get("total")
        state.progress = (int(rec["step"]), int(total) if total is not None else None)
    elif t == "finish":
        summary = rec.get("summary")
        if summary is not None and not isinstance(summary, dict):
            raise TypeError("the summary is not an object")
        state.finish = {"status": str(rec["status"]), "summary": summary, "error": rec.get("error")}
    elif t == "finished":
        state.finished = True
    else:
        raise ValueError(f"unknown record type {t!r}")


def read_spool(path: Path) -> SpoolState:
    """Replay a spool file into what is still owed. Never raises for the file's content: a line it cannot
    read (bad bytes, a character torn by a killed writer, not JSON, not an object, a record of the wrong
    shape) is skipped and named in `bad_lines`; an unreadable file raises `OSError`."""
    state = SpoolState(path=path)
    acks: dict[str, Any] = {"through": -1, "notes": set()}
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            torn = not raw.endswith(b"\n")  # only the last line can lack one: the writer was cut off mid-line
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                state.bad_lines.append((number, "a line torn by a killed writer" if torn else "not UTF-8 text"))
                continue
            try:
                rec = json.loads(text, parse_constant=_no_constant)
            except ValueError:
                state.bad_lines.append((number, "a line torn by a killed writer" if torn else "not JSON"))
                continue
            if not isinstance(rec, dict):
                state.bad_lines.append((number, f"a JSON {type(rec).__name__}, not a record"))
                continue
            try:
                _apply(state, rec, acks)
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                state.bad_lines.append((number, f"a record of the wrong shape ({type(exc).__name__}: {exc})"))
    state.points = {s: e for s, e in state.points.items() if s > acks["through"]}
    state.notes = {s: n for s, n in state.notes.items() if s not in acks["notes"]}
    return state
