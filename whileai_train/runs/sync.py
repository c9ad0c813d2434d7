"""Re-send what spooled platform runs still owe (what `whileai-train sync` runs).

A spool file is left behind when the platform was unreachable at finish, or when the process was killed.
Each is replayed oldest-first: the run is opened if it never was (the server de-duplicates on the
client id), unacknowledged points are sent in batches of at most 500 (the server de-duplicates on
(run id, seq)), then notes, then the finish record. A run whose process died before finishing is
finished "failed" with a line saying so. A spool still being written by a live process is skipped.
A delivery counts only when the platform answers with a 2xx JSON object (runs/sinks.py): a redirect, a page
that is not the API, or an answer that took fewer points than were sent keeps the file for the next sync.
The whole sync ends within its deadline (SenderConfig.sync_deadline_s), each request within its own: what is
not sent by then stays in the spool. A spool of a local-store run (its database was locked at finish) is
written to that database instead.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.config import SenderConfig, api_url
from whileai_train.runs.credentials import Credential, redact, resolve_credential
from whileai_train.runs.sender import os_cause
from whileai_train.runs.sinks import HttpSink, RunAlreadyFinished, SendError
from whileai_train.runs.spool import SpoolState, read_spool, spool_dir
from whileai_train.runs.store import LocalStore

__all__ = ["SyncResult", "sync_spool"]


@dataclass
class SyncResult:
    """One line per spool file: what was sent, what is still owed and why."""

    sent_points: int = 0
    synced: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        head = (f"synced {len(self.synced)} run(s), {self.sent_points} points sent"
                + (f"; {len(self.failed)} still owed" if self.failed else ""))
        return "\n".join([head, *self.synced, *self.skipped, *self.failed])


def sync_spool(api_key: str | None = None, url: str | None = None, config: SenderConfig | None = None,
                directory: Path | None = None) -> SyncResult:
    """Send every spooled run's owed records; files that land completely are removed.

    Never stops at one bad file: a file that cannot be read, or whose sends fail, is reported and kept, and
    the other files are still sent. Lines that cannot be read are skipped and named in the result."""
    config = config or SenderConfig.from_env()
    ends = time.monotonic() + config.sync_deadline_s
    result = SyncResult()
    folder = directory or spool_dir()
    files = _spool_files(folder)
    if not files:
        return result
    credential: Credential | None = None
    key_problem: str | None = None
    try:
        credential = resolve_credential(api_key)
    except RunError as exc:
        key_problem = str(exc)
    for path in files:
        if time.monotonic() >= ends:
            result.failed.append(f"{path.name}: not tried, the sync's deadline of {config.sync_deadline_s:g} s "
                                 "passed; kept for the next sync")
            continue
        try:
            state = read_spool(path)
        except OSError as exc:
            result.failed.append(f"{path.name}: cannot be read ({os_cause(exc)}); kept")
            continue
        if state.bad_lines:
            result.skipped.append(f"{path.name}: {state.bad_lines_text()}")
        if state.finished:
            path.unlink(missing_ok=True)
            continue
        if state.pid is not None and state.pid != os.getpid() and state.process_alive():
            result.skipped.append(f"{path.name}: still being written by process {state.pid}; skipped")
            continue
        if not state.client_id:
            result.failed.append(f"{path.name}: no readable open record (which run it belongs to is unknown); kept")
            continue
        if state.store is not None:
            _sync_to_store(path, state, result)
            continue
        if credential is None:
            why = key_problem or "no platform key (set WHILEAI_API_KEY)"
            result.failed.append(f"{path.name}: {why}; kept")
            continue
        try:
            base = api_url(url or state.url or None)
        except ConfigError as exc:
            result.failed.append(f"{path.name}: {exc}; kept")
            continue
        sink = HttpSink(base, credential, connect_timeout_s=config.connect_timeout_s,
                        read_timeout_s=config.read_timeout_s, deadline_s=config.request_deadline_s)
        sink.until = ends
        try:
            _sync_to_platform(path, state, sink, config, result)
        except SendError as exc:
            result.failed.append(f"{path.name}: {redact(str(exc), credential)}; kept for the next sync")
        finally:
            sink.close()
    return result


def _spool_files(folder: Path) -> list[Path]:
    """The spool files, oldest first (a file removed meanwhile is left out)."""
    if not folder.is_dir():
        return []
    dated = []
    for path in folder.glob("*.jsonl"):
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    return [path for _, path in sorted(dated)]


def _finish_record(state: SpoolState) -> dict[str, Any]:
    return state.finish or {
        "status": "failed", "summary": None,
        "error": f"the process (pid {state.pid}) ended without finishing the run; "
                 "its spooled points were sent by `whileai-train sync`",
    }


def _sync_to_platform(path: Path, state: SpoolState, sink: HttpSink, config: SenderConfig,
                      result: SyncResult) -> None:
    """Open (or reopen), send the owed points in batches, the notes, the finish; remove the file when done.
    A run the platform says is already finished is final: the file goes, and the line says what it refused."""
    finish = _finish_record(state)
    owed = sorted(state.points.items())
    sent = 0
    try:
        run_id = state.remote_id
        if run_id is None or state.reopen:
            run_id = sink.open_run(state.meta, state.client_id, resume=state.reopen)
        step = config.max_points_per_call
        for i in range(0, len(owed), step):
            batch = [(seq, None, None, enc) for seq, enc in owed[i:i + step]]
            sink.send_points(run_id, batch, state.progress if i == 0 else None)
            sent += len(batch)
            result.sent_points += len(batch)
        if not owed and state.progress is not None:
            sink.set_progress(run_id, *state.progress)
        for seq, (markdown, ts, alarm) in sorted(state.notes.items()):
            try:
                sink.send_note(run_id, seq, markdown, ts, alarm)
            except RunAlreadyFinished:
                raise
            except SendError as exc:
                if exc.retryable:
                    raise  # a server without the notes route is not a reason to keep the points owed
        sink.finish(run_id, finish["status"], finish.get("summary"), finish.get("error"))
    except RunAlreadyFinished as exc:
        path.unlink(missing_ok=True)
        result.synced.append(f"{state.remote_id or state.client_id}: {sink.where} says the run is already finished "
                             f"({exc}); {sent} points sent before that, {len(owed) - sent} not stored (final)")
        return
    path.unlink(missing_ok=True)
    result.synced.append(f"{run_id}: {len(owed)} points sent to {sink.where}, finished {finish['status']}")


def _sync_to_store(path: Path, state: SpoolState, result: SyncResult) -> None:
    """A local-store run whose last records could not be written there at finish: write them now."""
    finish = _finish_record(state)
    try:
        store = LocalStore(state.store)
    except RunError as exc:
        result.failed.append(f"{path.name}: {exc}; kept")
        return
    try:
        run_id = state.remote_id or store.create_run(state.meta, client_id=state.client_id)
        store.reopen(run_id)  # the reader may have finished it "failed" once its process was gone
        owed = sorted(state.points.items())
        new = store.add_points(run_id, [(seq, None, None, enc) for seq, enc in owed])
        for seq, (markdown, ts, alarm) in sorted(state.notes.items()):
            store.add_note(run_id, seq, markdown, ts, alarm=alarm)
        if state.progress is not None:
            store.set_progress(run_id, *state.progress)
        store.finish(run_id, finish["status"], finish.get("summary"), finish.get("error"))
    except (sqlite3.Error, OSError, RunError, ValueError) as exc:
        result.failed.append(f"{path.name}: the store {state.store} cannot take them ({type(exc).__name__}: "
                             f"{exc}); kept for the next sync")
        return
    finally:
        store.close()
    result.sent_points += new
    path.unlink(missing_ok=True)
    result.synced.append(f"{run_id}: {len(owed)} points written to the local store {state.store}, "
                         f"finished {finish['status']}")
