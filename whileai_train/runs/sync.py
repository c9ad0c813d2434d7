"""Re-send what spooled platform runs still owe (what `whileai-train sync` runs).

A spool file is left behind when the platform was unreachable at finish, or when the process was killed.
Each is replayed oldest-first: the run is opened if it never was (the server de-duplicates on the
client id), unacknowledged points are sent in batches of at most 500 (the server de-duplicates on
(run id, seq)), then notes, then the finish record. A run whose process died before finishing is
finished "failed" with a line saying so. A spool still being written by a live process is skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from whileai_train.runs.config import SenderConfig, api_url
from whileai_train.runs.credentials import redact, resolve_credential
from whileai_train.runs.sinks import HttpSink, SendError
from whileai_train.runs.spool import read_spool, spool_dir

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
    """Send every spooled run's owed records; files that land completely are removed."""
    config = config or SenderConfig.from_env()
    result = SyncResult()
    folder = directory or spool_dir()
    files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []
    if not files:
        return result
    credential = resolve_credential(api_key)
    for path in files:
        state = read_spool(path)
        if state.finished:
            path.unlink(missing_ok=True)
            continue
        if state.pid is not None and state.pid != os.getpid() and state.process_alive():
            result.skipped.append(f"{path.name}: still being written by process {state.pid}; skipped")
            continue
        if credential is None:
            result.failed.append(f"{path.name}: no platform key (set WHILEAI_API_KEY); kept")
            continue
        base = api_url(url or state.url or None)
        sink = HttpSink(base, credential, connect_timeout_s=config.connect_timeout_s,
                        read_timeout_s=config.read_timeout_s)
        try:
            run_id = state.remote_id or sink.open_run(state.meta, state.client_id)
            owed = sorted(state.points.items())
            step = config.max_points_per_call
            for i in range(0, len(owed), step):
                batch = [(seq, None, None, enc) for seq, enc in owed[i:i + step]]
                sink.send_points(run_id, batch, state.progress if i == 0 else None)
                result.sent_points += len(batch)
            if not owed and state.progress is not None:
                sink.set_progress(run_id, *state.progress)
            for seq, (markdown, ts) in sorted(state.notes.items()):
                try:
                    sink.send_note(run_id, seq, markdown, ts)
                except SendError as exc:
                    if exc.retryable:
                        raise  # a server without the notes route is not a reason to keep the points owed
            finish = state.finish or {
                "status": "failed", "summary": None,
                "error": f"the process (pid {state.pid}) ended without finishing the run; "
                         "its spooled points were sent by `whileai-train sync`",
            }
            sink.finish(run_id, finish["status"], finish.get("summary"), finish.get("error"))
        except SendError as exc:
            result.failed.append(f"{path.name}: {redact(str(exc), credential)}; kept for the next sync")
            continue
        finally:
            sink.close()
        path.unlink(missing_ok=True)
        result.synced.append(f"{run_id}: {len(owed)} points sent to {base}, finished {finish['status']}")
    return result
