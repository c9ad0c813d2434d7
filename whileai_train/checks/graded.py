"""One pass over rows: task of each row (by `task_key`), its reward, and per-task counts, as numpy arrays.

pass_at, compare_runs and publish_gate read rows through this, so the same rows give the same task count
everywhere and the reward checks (type, NaN, the [0, 1] range) are made once, with the row named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from whileai_train.checks.gate_defaults import PASS_THRESHOLD, SHOW_FIRST
from whileai_train.errors import InputError, RowError
from whileai_train.rows import reward_of, task_key

__all__ = ["Graded", "graded_table", "show_indices"]


def show_indices(indices: Sequence[int] | np.ndarray, first: int = SHOW_FIRST) -> str:
    """'3, 7, 12' or '3, 7, 12, ... (40 in all)': row numbers for a message."""
    items = [str(int(i)) for i in list(indices)[:first]]
    more = f", ... ({len(indices)} in all)" if len(indices) > first else ""
    return ", ".join(items) + more


@dataclass(frozen=True)
class Graded:
    """Rows as arrays. Tasks are numbered in sorted `task_key` order (the order every bootstrap resamples)."""

    n_rows: int
    tasks: list[str]            # sorted task keys
    task_of_row: np.ndarray     # int, row -> task number
    rewards: np.ndarray         # float, NaN where the row is ungraded
    graded: np.ndarray          # bool, row has a reward
    passed: np.ndarray          # bool, graded and reward >= pass_threshold
    rows_per_task: np.ndarray   # all rows of the task, graded or not
    n_graded: np.ndarray        # graded rows per task
    n_passed: np.ndarray        # passing rows per task
    reward_min: np.ndarray      # per task over graded rows (NaN when none)
    reward_max: np.ndarray

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


def graded_table(rows: Sequence[Mapping[str, Any]], *, pass_threshold: float = PASS_THRESHOLD,
                 what: str = "rows") -> Graded:
    """Read task keys and rewards off `rows` in one pass; typed errors name the first bad row.

    Raises InputError on no rows, RowError on a row that is not a dict, a reward that is not a number,
    NaN, or outside [0, 1] (the message counts the others).
    """
    if isinstance(rows, Mapping):
        raise InputError(f"{what}: got one row (a dict), not a list of rows. Fix: pass [row] or a list of rows")
    n = len(rows)
    if n == 0:
        raise InputError(f"{what}: no rows. Fix: pass the graded rollouts (a list of dicts or a JSONL file)")
    index_of: dict[str, int] = {}
    task_list: list[int] = []
    reward_list: list[float] = []
    nan = math.nan
    for i, row in enumerate(rows):
        if type(row) is not dict and not isinstance(row, Mapping):
            raise RowError(i, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
        scenario = row.get("scenario_id")
        key = scenario if (type(scenario) is str and scenario) else task_key(row)  # task_key's first rule, inlined
        number = index_of.get(key)
        if number is None:
            number = index_of[key] = len(index_of)
        task_list.append(number)
        value = row.get("reward")
        if value is None:
            reward_list.append(nan)
        elif (type(value) is float or type(value) is int) and 0.0 <= value <= 1.0:
            reward_list.append(value)
        else:
            reward_list.append(_checked_reward(rows, i, value))
    task_ids = np.array(task_list, dtype=np.int64)
    rewards = np.array(reward_list, dtype=float)
    names = list(index_of)
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    task_of_row = rank[task_ids]
    tasks = [names[j] for j in order]
    graded = ~np.isnan(rewards)
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
        n_rows=n, tasks=tasks, task_of_row=task_of_row, rewards=rewards, graded=graded, passed=passed,
        rows_per_task=np.bincount(task_of_row, minlength=n_tasks).astype(np.int64),
        n_graded=n_graded,
        n_passed=np.bincount(task_of_row, weights=passed, minlength=n_tasks).astype(np.int64),
        reward_min=reward_min, reward_max=reward_max,
    )


def _checked_reward(rows: Sequence[Mapping[str, Any]], i: int, value: Any) -> float:
    """The slow path: a numpy number passes; a wrong type, NaN or a reward outside [0, 1] raises, naming rows."""
    checked = reward_of(rows[i], i)  # raises for a string, a bool, NaN
    assert checked is not None
    if not 0.0 <= checked <= 1.0:
        bad = [j for j, r in enumerate(rows) if isinstance(r, Mapping) and _out_of_range(r.get("reward"))]
        problem = f"reward is {value!r}, outside [0, 1]"
        if len(bad) > 1:
            problem += f"; rows outside: {show_indices(bad)}"
        raise RowError(i, "reward", problem, "scale the grader's score to 0..1 (1.0 pass, 0.0 fail) or set it to "
                       "null when ungraded")
    return checked


def _out_of_range(value: Any) -> bool:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not 0.0 <= value <= 1.0
