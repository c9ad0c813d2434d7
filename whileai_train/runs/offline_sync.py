"""Send the runs WHILEAI_MODE=offline kept in the local store to the platform (what `whileai-train sync` also does).

A run opened offline carries summary["context"]["offline"] = true. Once it is finished, sync opens it on the
platform under its own id as the client id (the platform de-duplicates on it), sends its points in batches of at
most 500 (de-duplicated on (run id, seq)), its notes, and its finish with status, summary and error; then the
local record says where it went (summary["synced_to"]) and it is not sent again. A running offline run is left
for a later sync. Each run's sends end within the request deadline; what fails is kept for the next sync.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from whileai_train.errors import RunError
from whileai_train.runs.config import SenderConfig, api_url
from whileai_train.runs.credentials import redact, resolve_credential
from whileai_train.runs.defaults import MAX_POINTS_PER_CALL
from whileai_train.runs.sinks import HttpSink, RunAlreadyFinished, SendError
from whileai_train.runs.store import LocalStore, default_store_path
from whileai_train.runs.sync import SyncResult

__all__ = ["offline_runs", "sync_offline"]


def offline_runs(store: LocalStore) -> list[dict[str, Any]]:
    """The finished offline runs of `store` not yet sent, oldest first."""
    found = []
    for record in reversed(store.list_runs(limit=100_000)):
        summary = record.get("summary") or {}
        context = summary.get("context")
        if isinstance(context, dict) and context.get("offline") and not summary.get("synced_to") and record["status"] != "running":
            found.append(record)
    return found


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def sync_offline(api_key: str | None = None, url: str | None = None,
                 config: SenderConfig | None = None) -> SyncResult:
    """Send every finished offline run of the local store to the platform; one line per run in the result."""
    result = SyncResult()
    if not default_store_path().exists():
        return result
    store = LocalStore()
    todo = offline_runs(store)
    if not todo:
        return result
    credential = resolve_credential(api_key)
    if credential is None:
        result.failed.extend(f"{r['id']}: kept offline, no platform key (set WHILEAI_API_KEY or pass api_key=)"
                             for r in todo)
        return result
    config = config or SenderConfig.from_env()
    base = api_url(url)
    ends = time.monotonic() + config.sync_deadline_s
    for record in todo:
        run_id = record["id"]
        if time.monotonic() >= ends:
            result.failed.append(f"{run_id}: not tried, the sync's deadline passed; kept for the next sync")
            continue
        sink = HttpSink(base, credential, connect_timeout_s=config.connect_timeout_s,
                        read_timeout_s=config.read_timeout_s, deadline_s=config.request_deadline_s)
        try:
            sent = _send(store, sink, record)
        except (SendError, RunError, OSError) as exc:
            result.failed.append(redact(f"{run_id}: kept for the next sync ({exc})", credential))
            continue
        finally:
            sink.close()
        result.sent_points += sent
        result.synced.append(f"{run_id}: {sent} points, its notes and its finish ({record['status']}) sent to {base}")
    return result


def _send(store: LocalStore, sink: HttpSink, record: dict[str, Any]) -> int:
    run_id = record["id"]
    meta = {k: record.get(k) for k in ("name", "dataset_id", "base_model", "total_steps")}
    remote = sink.open_run(meta, run_id)
    points = store.points(run_id)
    for start in range(0, len(points), MAX_POINTS_PER_CALL):
        batch = points[start:start + MAX_POINTS_PER_CALL]
        encoded = [(p.get("seq"), p.get("step"), p.get("ts"),
                    json.dumps({k: _finite(v) for k, v in p.items()}, allow_nan=False)) for p in batch]
        sink.send_points(remote, encoded)  # type: ignore[arg-type]
    alarms = store.alarms_by_note(run_id)
    for note in (store.get_run(run_id) or {}).get("notes") or []:
        sink.send_note(remote, int(note["seq"]), str(note["markdown"]), float(note["ts"] or time.time()),
                       alarms.get(int(note["seq"])))
    summary = dict(record.get("summary") or {})
    try:
        sink.finish(remote, record["status"], summary, record.get("error"))
    except RunAlreadyFinished:
        pass  # finished there by an earlier sync that stopped before marking it here
    store.update_summary(run_id, {"synced_to": f"{sink.where} as {remote}"})
    return len(points)
