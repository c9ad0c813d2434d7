"""Calibration stamps: each graded row gets its task's pass rate over the k repeats the grader saw.

The stamp is the schema's Calibration object as a plain dict (task_id, student, n = k, pass_rate,
pass_rate_ci95 = Wilson interval, mean_kl), the same shape optimize(mode="rl") writes. A stamp a row
already carries (`calibration` or `extra.calibration`) is kept, never re-measured: k is the repeats the
grader saw, not the rows that survived a prune. `wai.calibration_of(row)` reads either back typed.

A selector that keeps rows by their outcome (optimize) writes `selected_by` on every kept row's stamp, so a
later pass_at knows the k-way numbers over those rows are fixed by the selection, not measured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from whileai_train.rows.contract import carried_stamp
from whileai_train.stats import wilson_interval
from whileai_train.tables.graded import Graded

__all__ = ["SELECTED_BY", "Stamped", "mark_selected", "policy_of", "selected_by", "stamp_rows", "task_stamps"]

# the stamp key a selector writes: which call kept the rows by their outcome (e.g. "optimize(mode='rl')")
SELECTED_BY = "selected_by"

_POLICY_KEYS = ("student", "policy_version", "model_version", "model")
_LINEAGE_POLICY_KEYS = ("student", "policy", "model")


def policy_of(row: Mapping[str, Any]) -> str | None:
    """The policy that produced a row: student / policy_version / model_version / model, else in lineage."""
    for key in _POLICY_KEYS:
        value = row.get(key)
        if value:
            return str(value)
    lineage = row.get("lineage")
    if lineage is not None and (type(lineage) is dict or isinstance(lineage, Mapping)):
        for key in _LINEAGE_POLICY_KEYS:
            value = lineage.get(key)
            if value:
                return str(value)
    return None


def _stamp_field(stamp: Any, name: str) -> Any:
    return stamp.get(name) if isinstance(stamp, Mapping) else getattr(stamp, name, None)


@lru_cache(maxsize=4096)
def _wilson(passes: int, n: int) -> tuple[float, float]:
    return wilson_interval(passes, n)  # few distinct (passes, n) pairs: one computation each


@dataclass
class Stamped:
    """Per-task stamps measured on the rows, which rows get one, and what the carried stamps say.

    The copies are made only when asked (`stamped_rows()`): a gate that only checks pays for no copy.
    """

    source: Sequence[Mapping[str, Any]]
    stamps: list[dict[str, Any] | None] = field(default_factory=list)  # per task number
    todo: list[int] = field(default_factory=list)  # rows that get a new stamp
    task_of: list[int] = field(default_factory=list)
    n_carried: int = 0
    # per task number: the carried stamp's n and pass_rate (first carried stamp of the task), else absent
    carried_n: dict[int, int] = field(default_factory=dict)
    carried_pass_rate: dict[int, float] = field(default_factory=dict)
    carried_k: Counter[int] = field(default_factory=Counter)
    _rows: list[Any] | None = None

    @property
    def n_stamped(self) -> int:
        return len(self.todo)

    def stamped_rows(self) -> list[Any]:
        """The rows, with a shallow copy carrying `calibration` where a stamp was added (made once)."""
        if self._rows is None:
            out = list(self.source)
            for i in self.todo:
                new = dict(self.source[i])
                new["calibration"] = dict(self.stamps[self.task_of[i]] or {})
                out[i] = new
            self._rows = out
        return self._rows


def task_stamps(table: Graded, *, policy: str | None = None) -> list[dict[str, Any] | None]:
    """Per task: the Calibration stamp measured on every graded row given (None for a task with none).

    k (`n`) is the repeats the grader saw, before any dedupe or trim (the stamp is the
    row contract's Calibration object); `pass_rate_ci95` is the Wilson 95% interval on that pass rate; `mean_kl`
    the mean KL over the task's rows that report one. `policy` names the policy of every stamp; by default
    each task's first row names it (`policy_of`).
    """
    n_tasks = table.n_tasks
    has_kl = ~np.isnan(table.kl)
    kl_counts = np.bincount(table.task_of_row[has_kl], minlength=n_tasks).tolist()
    kl_sums = np.bincount(table.task_of_row[has_kl], weights=table.kl[has_kl], minlength=n_tasks).tolist()
    n_graded, n_passed, first_row = table.n_graded.tolist(), table.n_passed.tolist(), table.first_row.tolist()
    rows, names = table.rows, table.tasks
    stamps: list[dict[str, Any] | None] = [None] * n_tasks
    for task in table.graded_tasks.tolist():
        n, passes = n_graded[task], n_passed[task]
        stamps[task] = {
            "task_id": names[task],
            "student": policy if policy is not None else policy_of(rows[first_row[task]]),
            "n": n, "pass_rate": passes / n, "pass_rate_ci95": _wilson(passes, n),
            "mean_kl": kl_sums[task] / kl_counts[task] if kl_counts[task] else None,
        }
    return stamps


def stamp_rows(table: Graded, *, policy: str | None = None) -> Stamped:
    """Stamp every graded row that carries no stamp (`task_stamps`); note what the carried stamps say.

    The input rows are never changed; `Stamped.stamped_rows()` makes the stamped copies.
    """
    rows = table.rows
    task_of = table.task_of_row.tolist()
    result = Stamped(rows, task_of=task_of, todo=np.flatnonzero(table.graded & ~table.carries).tolist())
    for i in np.flatnonzero(table.carries).tolist():  # in row order: a task's first carried stamp wins
        stamp, task = carried_stamp(rows[i]), task_of[i]
        result.n_carried += 1
        n = _stamp_field(stamp, "n")
        if type(n) is int and n >= 1:
            result.carried_k[n] += 1
            result.carried_n.setdefault(task, n)
        rate = _stamp_field(stamp, "pass_rate")
        if isinstance(rate, (int, float)) and not isinstance(rate, bool):
            result.carried_pass_rate.setdefault(task, float(rate))
    if result.todo:
        result.stamps = task_stamps(table, policy=policy)
    return result


def _as_dict(stamp: Any) -> dict[str, Any]:
    if isinstance(stamp, Mapping):
        return dict(stamp)
    dump = getattr(stamp, "model_dump", None)
    return dict(dump()) if callable(dump) else {}


def mark_selected(new: dict[str, Any], stamp: Any, by: str) -> None:
    """Put `stamp` (the task's graded measurement) on the kept row `new` with `selected_by=by`, where the row
    keeps it: `calibration`, or `extra.calibration` when the row carried it there. Values are never changed."""
    marked = {**_as_dict(stamp), SELECTED_BY: by}
    if new.get("calibration") is None and isinstance(new.get("extra"), Mapping) and \
            new["extra"].get("calibration") is not None:
        new["extra"] = {**new["extra"], "calibration": marked}
    else:
        new["calibration"] = marked


def selected_by(row: Mapping[str, Any]) -> str | None:
    """Which selector kept the row by its outcome, read off its carried stamp, or None."""
    value = _stamp_field(carried_stamp(row), SELECTED_BY)  # a typed Calibration keeps it as an extra field
    return value if isinstance(value, str) else None
