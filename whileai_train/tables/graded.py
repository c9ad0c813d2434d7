"""The one reader of graded rows: one Python pass into numpy arrays, the reward checks, the row-list formatter.

Every gate (pass_at, compare_runs, publish_gate) and every selector (optimize's rl/sft, preference pairs,
curriculum) reads rows through `graded_table`, so the same rows give the same tasks, rewards and typed
errors everywhere. The loop reads each row's task, reward, lineage source, KL and whether it carries a
stamp; everything after it is group-by arithmetic on arrays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from whileai_train.errors import InputError, RowError
from whileai_train.progress import rows_progress
from whileai_train.rows.contract import carried_stamp, reward_error, reward_of, reward_range_error, task_key
from whileai_train.rows.intake import take_rows
from whileai_train.tables.defaults import EVAL_SOURCE, PASS_THRESHOLD, SHOW_FIRST

__all__ = ["Graded", "graded_table", "name_rows"]

_FIX_GRADE = ("grade the rows first with your grader (a reward function, a verifier, a judge) so each "
              "carries a `reward` (0..1), or drop the ungraded ones")


def name_rows(indices: Iterable[int] | np.ndarray, limit: int = SHOW_FIRST) -> str:
    """'row 3', 'rows 3, 8, 12' or 'rows 3, 8, ... (+40 more)': enough to find them, short enough to read."""
    listed = [int(i) for i in indices]
    shown = ", ".join(str(i) for i in listed[:limit])
    more = f", ... (+{len(listed) - limit} more)" if len(listed) > limit else ""
    return f"row{'s' if len(listed) != 1 else ''} {shown}{more}"


@dataclass(frozen=True)
class Graded:
    """Rows as arrays: row i belongs to task `task_of_row[i]`, numbered in sorted `task_key` order (the order
    every bootstrap resamples) or, with ``order="first_seen"``, in order of first appearance (selectors keep
    the input's order)."""

    rows: Sequence[Mapping[str, Any]]
    tasks: list[str]            # task keys, by task number
    task_of_row: np.ndarray     # int, row -> task number
    first_row: np.ndarray       # int, task -> its first row
    rewards: np.ndarray         # float, NaN where the row is ungraded
    graded: np.ndarray          # bool, row has a reward
    passed: np.ndarray          # bool, graded and reward >= pass_threshold
    eval_sourced: np.ndarray    # bool, lineage.source == "eval" (reward from evaluate())
    carries: np.ndarray         # bool, row already carries a calibration stamp (`carried_stamp`)
    kl: np.ndarray              # float, NaN where the row reports none
    rows_per_task: np.ndarray   # all rows of the task, graded or not
    n_graded: np.ndarray        # graded rows per task
    n_passed: np.ndarray        # passing rows per task
    reward_min: np.ndarray      # per task over graded rows (NaN when none)
    reward_max: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)

    @property
    def graded_tasks(self) -> np.ndarray:
        """Task numbers with at least one graded row."""
        return np.flatnonzero(self.n_graded > 0)

    def pass_rates(self) -> np.ndarray:
        """Per-task share of graded rows that pass (NaN for a task with none graded)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n_graded > 0, self.n_passed / np.maximum(self.n_graded, 1), np.nan)

    def ungraded_rows(self) -> np.ndarray:
        return np.flatnonzero(~self.graded)


def _kl(row: Mapping[str, Any]) -> float:
    value = row.get("kl")
    if value is None:
        markers = row.get("markers")
        if isinstance(markers, Mapping):
            value = markers.get("kl")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return math.nan


def graded_table(source: Any, *, pass_threshold: float = PASS_THRESHOLD, what: str = "rows",
                 order: Literal["sorted", "first_seen"] = "sorted", need_graded: bool = False,
                 deep: bool = True) -> Graded:
    """Read rows (list of dicts, JSONL path, datasets.Dataset) into arrays; typed errors name the first bad row.

    Raises InputError on no rows (and, with `need_graded`, when every row is ungraded), RowError on a row that
    is not a dict, a reward that is not a number, NaN, or outside [0, 1] (the message counts the others).
    Some ungraded rows are not an error here: each caller decides what to do with them (and names them).
    """
    rows = take_rows(source, what, graded=True, deep=deep)
    n = len(rows)
    if n == 0:
        raise InputError(f"{what}: no rows. Fix: pass the graded rollouts (a list of dicts, a JSONL path or a "
                         "datasets.Dataset)")
    index_of: dict[str, int] = {}
    first_list: list[int] = []
    task_list: list[int] = []
    reward_list: list[float] = []
    eval_list: list[int] = []
    carry_list: list[int] = []
    kl_list: list[tuple[int, float]] = []
    nan = math.nan
    for i, row in enumerate(rows_progress(rows, "rewards and asks")):
        if type(row) is not dict and not isinstance(row, Mapping):
            raise RowError(i, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
        key = task_key(row)
        number = index_of.get(key)
        if number is None:
            number = index_of[key] = len(index_of)
            first_list.append(i)
        task_list.append(number)
        value = row.get("reward")
        if value is None:
            reward_list.append(nan)
        elif type(value) is float or type(value) is int:
            reward_list.append(value)  # NaN and out-of-range values are refused below, all counted
        else:
            checked = reward_of(row, i)  # raises for a bool, a string, a numpy NaN; a numpy number passes
            assert checked is not None
            reward_list.append(checked)
        if row.get("calibration") is not None or ("extra" in row and carried_stamp(row) is not None):
            carry_list.append(i)
        lineage = row.get("lineage")
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
    task_ids = np.array(task_list, dtype=np.int64)
    rewards = np.array(reward_list, dtype=float)
    graded = ~np.isnan(rewards)
    if not graded.any() and not any(row.get("reward") is not None for row in rows):
        if need_graded:
            raise InputError(f"{what}: all {n} rows are ungraded (reward is null), so no pass rate can be "
                             f"measured. Fix: {_FIX_GRADE}")
    else:
        _check_rewards(rows, rewards, graded)
    names = list(index_of)
    first_row = np.array(first_list, dtype=np.int64)
    if order == "sorted":
        by_name = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(len(names), dtype=np.int64)
        rank[by_name] = np.arange(len(names))
        task_of_row = rank[task_ids]
        tasks = [names[j] for j in by_name]
        first_row = first_row[by_name]
    else:
        task_of_row, tasks = task_ids, names
    eval_sourced = np.zeros(n, dtype=bool)
    eval_sourced[eval_list] = True
    carries = np.zeros(n, dtype=bool)
    carries[carry_list] = True
    kl_values = np.full(n, np.nan)
    if kl_list:
        where, values = zip(*kl_list)
        kl_values[list(where)] = values
    passed = graded & (np.nan_to_num(rewards, nan=-1.0) >= pass_threshold)
    n_tasks = len(tasks)
    reward_min = np.full(n_tasks, np.inf)
    reward_max = np.full(n_tasks, -np.inf)
    np.minimum.at(reward_min, task_of_row[graded], rewards[graded])
    np.maximum.at(reward_max, task_of_row[graded], rewards[graded])
    n_graded = np.bincount(task_of_row, weights=graded, minlength=n_tasks).astype(np.int64)
    reward_min[n_graded == 0] = np.nan
    reward_max[n_graded == 0] = np.nan
    return Graded(
        rows=rows, tasks=tasks, task_of_row=task_of_row, first_row=first_row, rewards=rewards, graded=graded,
        passed=passed, eval_sourced=eval_sourced, carries=carries, kl=kl_values,
        rows_per_task=np.bincount(task_of_row, minlength=n_tasks).astype(np.int64),
        n_graded=n_graded,
        n_passed=np.bincount(task_of_row, weights=passed, minlength=n_tasks).astype(np.int64),
        reward_min=reward_min, reward_max=reward_max,
    )


def _check_rewards(rows: Sequence[Mapping[str, Any]], rewards: np.ndarray, graded: np.ndarray) -> None:
    """A NaN or infinite reward, or one outside [0, 1], raises RowError at the first such row, naming all of them."""
    finite = np.isfinite(rewards)
    out = finite & ((rewards < 0.0) | (rewards > 1.0))
    given_bad = ~finite
    if given_bad.any():  # NaN or infinity given as a reward is refused; null (read as NaN) is ungraded
        given_bad[given_bad] = [rows[i].get("reward") is not None for i in np.flatnonzero(given_bad).tolist()]
    bad = np.flatnonzero(out | given_bad)
    if not len(bad):
        return
    first = int(bad[0])
    if given_bad[first]:
        nans = np.flatnonzero(given_bad)
        raise reward_error(first, rows[first].get("reward"), f"{len(nans)} rows: {name_rows(nans)}")
    outside = np.flatnonzero(out)
    raise reward_range_error(first, rows[first].get("reward"), f"{len(outside)} rows: {name_rows(outside)}")
