"""What every selector shares: one pass over the rows into numpy arrays, the calibration stamps, the report base.

Rows stay plain dicts; the one Python loop here reads each row's task, reward, lineage source, policy and KL,
and everything after it is group-by arithmetic on arrays (100k rows in a fraction of a second).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
from pydantic import ConfigDict, Field

from whileai_train.checks.optimize_defaults import EVAL_SOURCE, PASS_THRESHOLD, ROWS_NAMED
from whileai_train.errors import InputError, RowError
from whileai_train.report import Report
from whileai_train.rows import read_rows, reward_of, task_key
from whileai_train.stats import wilson_interval

__all__ = [
    "GradedRows",
    "OptimizeResult",
    "SelectionReport",
    "calibration_stamps",
    "carries_stamp",
    "eval_warning",
    "name_rows",
    "read_graded",
]

_FIX_GRADE = "grade the rows first (run_judge or data.grade), or drop the ungraded ones"
_FIX_RANGE = "rescale rewards to 0..1 (1.0 pass, 0.0 fail, partial credit in between)"


def name_rows(indices: Iterable[int], limit: int = ROWS_NAMED) -> str:
    """'rows 3, 8, 12' or 'rows 3, 8, ... (+40 more)': enough to find them, short enough to read."""
    listed = [int(i) for i in indices]
    shown = ", ".join(str(i) for i in listed[:limit])
    more = f", ... (+{len(listed) - limit} more)" if len(listed) > limit else ""
    return f"row{'s' if len(listed) != 1 else ''} {shown}{more}"


@dataclass
class GradedRows:
    """The rows as arrays: row i belongs to task `task_of[i]` (codes in order of first appearance)."""

    rows: Sequence[Mapping[str, Any]]
    task_names: list[str]
    task_of: np.ndarray
    rewards: np.ndarray  # NaN where ungraded
    graded: np.ndarray
    eval_sourced: np.ndarray
    kl: np.ndarray  # NaN where the row reports none
    students: list[str | None]  # per task: the policy named by its first row

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def n_tasks(self) -> int:
        return len(self.task_names)

    @property
    def passed(self) -> np.ndarray:
        """Pass vs fail per row: a graded reward at or above 0.5 (partial credit splits there)."""
        with np.errstate(invalid="ignore"):
            return self.graded & (self.rewards >= PASS_THRESHOLD)


def _student(row: Mapping[str, Any], lineage: Any) -> str | None:
    for key in ("student", "policy_version", "model_version", "model"):
        value = row.get(key)
        if value:
            return str(value)
    if isinstance(lineage, Mapping):
        for key in ("student", "policy", "model"):
            value = lineage.get(key)
            if value:
                return str(value)
    return None


def _kl(row: Mapping[str, Any]) -> float:
    value = row.get("kl")
    if value is None:
        markers = row.get("markers")
        if isinstance(markers, Mapping):
            value = markers.get("kl")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return math.nan


def read_graded(source: Any, *, what: str) -> GradedRows:
    """Read rows (list of dicts, JSONL path, datasets.Dataset) into arrays, with the typed input errors.

    Empty input and all-ungraded input raise :class:`InputError`; a reward that is not a number, NaN, or
    outside [0, 1] raises :class:`RowError` naming the first such row and counting the rest. Some ungraded
    rows are not an error here: each selector decides what to do with them (and names them).
    """
    rows = source if type(source) is list else read_rows(source)
    if not rows:
        raise InputError(f"{what}: no rows. Fix: pass graded rollout rows (a list of dicts or a JSONL path)")
    n = len(rows)
    codes: dict[str, int] = {}
    task_list: list[int] = []
    reward_list: list[float] = []
    eval_list: list[int] = []
    kl_list: list[tuple[int, float]] = []
    students: list[str | None] = []
    nan = math.nan
    for i, row in enumerate(rows):
        if type(row) is not dict and not isinstance(row, Mapping):
            raise RowError(i, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
        key = task_key(row)
        code = codes.get(key)
        lineage = row.get("lineage")
        if code is None:
            code = codes[key] = len(codes)
            students.append(_student(row, lineage))
        task_list.append(code)
        reward = row.get("reward")
        if reward is None:
            reward_list.append(nan)
        elif type(reward) is float or type(reward) is int:
            reward_list.append(reward)
        else:
            checked = reward_of(row, i)  # raises for a bool, a string, ...
            reward_list.append(nan if checked is None else checked)
        if lineage is not None and (type(lineage) is dict or isinstance(lineage, Mapping)) \
                and lineage.get("source") == EVAL_SOURCE:
            eval_list.append(i)
        kl = row.get("kl")
        if kl is None:
            markers = row.get("markers")
            if markers:
                kl = markers.get("kl") if markers.__class__ is dict else _kl(row)
        if kl is not None:
            kl_list.append((i, kl if kl.__class__ is float else _kl(row)))
    task_of = np.array(task_list, dtype=np.int64)
    rewards = np.array(reward_list, dtype=float)
    missing = np.isnan(rewards)
    graded = ~missing
    for i in np.flatnonzero(missing).tolist():  # NaN given as a reward is graded (and refused below)
        if rows[i].get("reward") is not None:
            graded[i] = True
    eval_sourced = np.zeros(n, dtype=bool)
    eval_sourced[eval_list] = True
    kl = np.full(n, np.nan)
    if kl_list:
        where, values = zip(*kl_list)
        kl[list(where)] = values
    if not graded.any():
        raise InputError(f"{what}: all {n} rows are ungraded (reward is null), so no pass rate can be measured. "
                         f"Fix: {_FIX_GRADE}")
    bad_nan = np.flatnonzero(graded & np.isnan(rewards))
    if len(bad_nan):
        raise RowError(int(bad_nan[0]), "reward", f"reward is NaN ({len(bad_nan)} rows: {name_rows(bad_nan)})",
                       "grade those rows again or set reward to null")
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(graded & ((rewards < 0.0) | (rewards > 1.0)))
    if len(bad):
        first = int(bad[0])
        raise RowError(first, "reward", f"reward {rewards[first]!r} is outside [0, 1] "
                       f"({len(bad)} rows: {name_rows(bad)}); pass rates and the 0.5 pass split need 0..1",
                       _FIX_RANGE)
    return GradedRows(rows, list(codes), task_of, rewards, graded, eval_sourced, kl, students)


@lru_cache(maxsize=4096)
def _wilson(k: int, n: int) -> tuple[float, float]:
    return wilson_interval(k, n)  # few distinct (k, n) pairs: one computation each


def calibration_stamps(view: GradedRows) -> list[dict[str, Any] | None]:
    """Per task: the Calibration stamp measured on every graded row given (None for a task with none).

    k (`n`) is the repeats the grader saw, before any dedupe or trim (product text, "The stamp is the
    schema's Calibration object"); `pass_rate_ci95` is the Wilson 95% interval on that pass rate.
    """
    tasks = view.n_tasks
    graded_tasks = view.task_of[view.graded]
    counts = np.bincount(graded_tasks, minlength=tasks)
    passes = np.bincount(graded_tasks, weights=view.passed[view.graded], minlength=tasks)
    has_kl = ~np.isnan(view.kl)
    kl_counts = np.bincount(view.task_of[has_kl], minlength=tasks)
    kl_sums = np.bincount(view.task_of[has_kl], weights=view.kl[has_kl], minlength=tasks)
    stamps: list[dict[str, Any] | None] = []
    for task in range(tasks):
        n = int(counts[task])
        if n == 0:
            stamps.append(None)
            continue
        k = round(float(passes[task]))
        stamps.append({
            "task_id": view.task_names[task], "student": view.students[task], "n": n, "pass_rate": k / n,
            "pass_rate_ci95": _wilson(k, n),
            "mean_kl": float(kl_sums[task] / kl_counts[task]) if kl_counts[task] else None,
        })
    return stamps


def carries_stamp(row: Mapping[str, Any]) -> bool:
    """The row already has a calibration stamp (top level or extra.calibration): keep it, never re-measure."""
    if row.get("calibration") is not None:
        return True
    extra = row.get("extra")
    return extra is not None and isinstance(extra, Mapping) and extra.get("calibration") is not None


def eval_warning(count: int, indices: Sequence[int], unit: str = "rows") -> str:
    """The eval_sourced warning: a held-out score used as reward makes the reported scorer the optimised one."""
    return (f"eval_sourced: {count} {unit} take their reward from evaluate() (lineage.source == 'eval'; input "
            f"{name_rows(indices)}): the scorer you report becomes the one you optimise against. Nothing was "
            "dropped; grade the training set with run_judge or data.grade and keep evaluate for held-out rows")


class SelectionReport(Report):
    """Base of the selector reports: pydantic, readable as `report["key"]` like the product text writes it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    eval_sourced: int = 0
    eval_sourced_rows: list[int] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class OptimizeResult(NamedTuple):
    """What optimize and the selectors return: the kept rows (new dicts) and the report.

    Unpacks as ``rows, report = wai.optimize(data, mode="rl")``; or read ``.rows`` and ``.report``.
    """

    rows: list[dict[str, Any]]
    report: Any
