"""A run's points as a file to download: CSV (one row a point, one column a metric) or JSON (the run record and
every point), served at GET /runs/{id}/points.csv and /runs/{id}/points.json and linked from the run page.

The CSV's first columns are step, seq and ts, then every metric name in sorted order; a point without a metric
leaves its cell empty. A metric name that a spreadsheet would read as a formula (it starts with =, +, -, @, a tab
or a carriage return) is written with a leading apostrophe, so opening the file never runs anything.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from whileai_train.runs.store import LocalStore

__all__ = ["download_name", "points_csv", "points_json"]

_FIRST = ("step", "seq", "ts")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def download_name(run_id: str, extension: str) -> str:
    """A file name for the download that any browser and file system takes: the run id's safe characters."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)[:80] or "run"
    return f"{safe}-points.{extension}"


def _cell_name(name: str) -> str:
    return "'" + name if name.startswith(_FORMULA_START) else name


def points_csv(store: LocalStore, run_id: str) -> str:
    """Every point of the run as CSV text (header row first)."""
    points = store.points(run_id)
    metrics = sorted({k for p in points for k in p} - set(_FIRST))
    columns = [*_FIRST, *metrics]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_cell_name(c) for c in columns])
    for point in points:
        writer.writerow(["" if point.get(c) is None else point[c] for c in columns])
    return out.getvalue()


def points_json(store: LocalStore, run_id: str) -> dict[str, Any]:
    """The run record (status, summary with its context, notes, alarms) and every point."""
    record = store.get_run(run_id) or {}
    record["points"] = store.points(run_id)
    return record
