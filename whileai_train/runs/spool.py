"""The on-disk spool: what a platform run has logged but the platform has not yet acknowledged.

One append-only JSON-lines file per run, ``$WHILEAI_HOME/spool/<client id>.jsonl``, written by the sender's
flush thread at least once per flush interval (so a killed process loses at most that interval) and read
back by the same process after an outage or by ``whileai-train sync`` later. Records:

    {"t": "open", "client_id", "url", "meta", "pid", "host"}   {"t": "remote", "run_id"}
    {"t": "p", "p": point}          {"t": "acked", "through": seq}   (every point with seq <= through landed)
    {"t": "note", "seq", "markdown", "ts"}     {"t": "note_acked", "seq"}
    {"t": "progress", "step", "total"}         {"t": "finish", "status", "summary", "error"}   {"t": "finished"}

The key is never written here: `sync` resolves it again. A torn last line (kill mid-write) is ignored.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_train.runs.config import whileai_home

__all__ = ["Spool", "SpoolState", "spool_dir"]


def spool_dir() -> Path:
    return whileai_home() / "spool"


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
    notes: dict[int, tuple[str, float]] = field(default_factory=dict)
    progress: tuple[int, int | None] | None = None
    finish: dict[str, Any] | None = None
    finished: bool = False
    max_seq: int = -1

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
    """Appends records to one run's spool file. Used only by background threads and at open/finish."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  (held for the run's life)

    @classmethod
    def for_run(cls, client_id: str) -> Spool:
        return cls(spool_dir() / f"{client_id}.jsonl")

    def __repr__(self) -> str:
        return f"Spool({str(self.path)!r})"

    def write_lines(self, lines: list[str]) -> None:
        """Append pre-encoded JSON lines and hand them to the OS (survives a killed process)."""
        if not lines:
            return
        with self._lock:
            if self._file.closed:
                return
            self._file.write("\n".join(lines) + "\n")
            self._file.flush()

    def write(self, record: dict[str, Any]) -> None:
        self.write_lines([json.dumps(record, default=str)])

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

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
    def open_record(client_id: str, url: str, meta: dict[str, Any]) -> dict[str, Any]:
        return {"t": "open", "client_id": client_id, "url": url, "meta": meta, "pid": os.getpid(),
                "host": socket.gethostname()}


def read_spool(path: Path) -> SpoolState:
    """Replay a spool file into what is still owed."""
    state = SpoolState(path=path)
    acked_through = -1
    acked_notes: set[int] = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a torn line from a killed writer
            t = rec.get("t")
            if t == "p":
                p = rec["p"]
                seq = int(p["seq"])
                state.points[seq] = json.dumps(p, separators=(",", ":"))
                state.max_seq = max(state.max_seq, seq)
            elif t == "acked":
                acked_through = max(acked_through, int(rec["through"]))
            elif t == "open":
                state.client_id, state.url = rec["client_id"], rec["url"]
                state.meta, state.pid, state.host = rec.get("meta") or {}, rec.get("pid"), rec.get("host", "")
            elif t == "remote":
                state.remote_id = rec["run_id"]
            elif t == "note":
                state.notes[int(rec["seq"])] = (rec["markdown"], float(rec.get("ts") or 0.0))
            elif t == "note_acked":
                acked_notes.add(int(rec["seq"]))
            elif t == "progress":
                state.progress = (int(rec["step"]), rec.get("total"))
            elif t == "finish":
                state.finish = {k: rec.get(k) for k in ("status", "summary", "error")}
            elif t == "finished":
                state.finished = True
    state.points = {s: e for s, e in state.points.items() if s > acked_through}
    state.notes = {s: n for s, n in state.notes.items() if s not in acked_notes}
    return state
