"""Reading runs back from Python: the list of runs (filtered) and a run's points as a pandas DataFrame.

    wai.list_runs(status="stopped", name="grpo", tag="ablation")   # newest first: the local store, then the platform
    frame = wai.points_frame(run_id)                                # one row per point: step, ts, seq, every metric

The local store is read when it exists; the platform too when a key is set (and WHILEAI_MODE is online), page by
page. Each run carries `where` ("local" or "platform"). Tags, project and group are the run's context
(summary["tags"], summary["project"], summary["group"]; `wai.run(..., tags=)` or the trainer's arguments).
pandas is an optional extra (`pip install whileai_train[pandas]`); without it points_frame says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.config import SenderConfig, run_mode
from whileai_train.runs.credentials import resolve_credential

__all__ = ["list_runs", "points_frame", "run_tags"]

_PAGE = 1000  # runs per GET /runs call (the API's MAX_RUNS_PER_PAGE)
_STATUSES = ("running", "done", "failed", "stopped")


def run_tags(record: Mapping[str, Any]) -> list[str]:
    """The tags of a run record (summary["tags"]: a list, or the comma-joined text the runs list carries)."""
    tags = (record.get("summary") or {}).get("tags")
    if isinstance(tags, str):
        return [t.strip() for t in tags.split(",") if t.strip()]
    return [str(t) for t in tags] if isinstance(tags, list) else []


def _keep(record: Mapping[str, Any], tag: str | None) -> bool:
    return tag is None or tag in run_tags(record)


def list_runs(status: str | None = None, name: str | None = None, tag: str | None = None, *, limit: int = 200,
              api_key: str | None = None, url: str | None = None) -> list[dict[str, Any]]:
    """Runs newest first, each a record (id, name, status, step, summary, ..., where), at most `limit`.

    Args:
        status: "running", "done", "failed" or "stopped".
        name: a part of the name (case-insensitive).
        tag: a tag the run carries.
    """
    if status is not None and status not in _STATUSES:
        raise ConfigError(f"status={status!r} is not one of {', '.join(_STATUSES)}. Fix: pass one of those or None.")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"limit={limit!r} must be a positive integer. Fix: pass e.g. limit=50.")
    from whileai_train.runs.store import LocalStore, default_store_path

    found: list[dict[str, Any]] = []
    if default_store_path().exists():
        store, offset = LocalStore(), 0
        while len(found) < limit:
            page = store.list_runs(limit=_PAGE, status=status, name_contains=name, offset=offset)
            found.extend({**r, "where": "local"} for r in page if _keep(r, tag))
            if len(page) < _PAGE:
                break
            offset += len(page)
    credential = resolve_credential(api_key) if run_mode() == "online" else None
    if credential is not None and len(found) < limit:
        found.extend(_platform_runs(credential, url, status, name, tag, limit - len(found)))
    return found[:limit]


def _platform_runs(credential: Any, url: str | None, status: str | None, name: str | None, tag: str | None,
                   limit: int) -> list[dict[str, Any]]:
    import httpx

    from whileai_train.runs.records import platform_client, platform_error

    config = SenderConfig.from_env()
    found: list[dict[str, Any]] = []
    offset = 0
    try:
        with platform_client(credential, url, config) as client:
            while len(found) < limit:
                params: dict[str, Any] = {"limit": _PAGE, "offset": offset}
                params.update({k: v for k, v in (("status", status), ("q", name)) if v is not None})
                response = client.get("/runs", params=params)
                response.raise_for_status()
                body = response.json()
                page = body.get("runs") if isinstance(body, dict) else None
                if not isinstance(page, list):
                    raise RunError(f"GET /runs answered {type(body).__name__} without a list of runs")
                found.extend({**r, "where": "platform"} for r in page if isinstance(r, dict) and _keep(r, tag))
                if len(page) < _PAGE:
                    break
                offset += len(page)
    except httpx.HTTPError as exc:
        raise platform_error("GET /runs failed", exc, credential, config, url) from None
    except ValueError as exc:
        raise RunError(f"GET /runs answered something that is not JSON ({exc})") from None
    return found


def points_frame(run: str | Mapping[str, Any], *, api_key: str | None = None, url: str | None = None) -> Any:
    """A run's points as a pandas DataFrame, one row per point in order (step, ts, seq, then every metric; a
    metric a point lacks is NaN). `run` is a run id (read with get_run) or a record get_run returned."""
    try:
        import pandas as pd
    except ImportError as exc:
        raise ConfigError("points_frame needs pandas, which is not installed. Fix: pip install pandas "
                          "(or whileai_train[pandas]); get_run(run_id)['points'] is the same list without it") from exc
    if isinstance(run, str):
        from whileai_train.runs.records import get_run

        record: Mapping[str, Any] = get_run(run, api_key=api_key, url=url)
    elif isinstance(run, Mapping):
        record = run
    else:
        raise ConfigError(f"points_frame got {type(run).__name__}. Fix: pass a run id or a get_run record.")
    points = [p for p in record.get("points") or [] if isinstance(p, Mapping)]
    frame = pd.DataFrame.from_records(points)
    first = [c for c in ("step", "ts", "seq") if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]]
