"""The summary of one marker column: the one rule behind every marker interval a report prints.

A marker is a number per row in [0, 1] (1.0 the good outcome). The rollouts of one task are repeats of one
situation and move together, so the unit is the task (`rows.task_key`): a task's value is the mean over its rows
that carry the marker, the summary is the mean over tasks, and its 95% interval is the percentile bootstrap
over tasks (`stats.bootstrap_mean_ci`: DEFAULT_DRAWS draws, DEFAULT_SEED). An interval over rows (Wilson) would
count k rollouts of one task as k independent draws and come out too narrow whenever they agree. Rows that
carry no task id are grouped by their ask (task_key), so rollouts of one prompt still count as one task.

A column equal on every row is degenerate: a mean, no interval, and a line saying so, because a rule that never
fires reads exactly like a behaviour that never happened. One task gives a mean and no interval: the spread
between tasks cannot be seen from one.

measure/ (metric_summary, marker_summary) and markers/ (the family reports) both summarise through here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from whileai_train.report import Report
from whileai_train.rows.contract import task_key
from whileai_train.stats import DEFAULT_DRAWS, DEFAULT_SEED
from whileai_train.stats.bootstrap import bootstrap_mean_cis

__all__ = [
    "MarkerSummary",
    "summarise_column",
    "summarise_columns",
    "task_means",
    "task_numbers",
]

_DEGENERATE_WHY = "a rule that never fires reads the same as a behaviour that never happened"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


class MarkerSummary(Report):
    """One marker (or pass@1) over tasks: the mean over tasks, its 95% bootstrap interval over tasks (None when
    degenerate or with one task; `note` says why), the tasks and rows that carry it, and how many of those rows
    fall short of 1.0."""

    name: str
    mean: float | None = None
    ci95: tuple[float, float] | None = None
    n_tasks: int = 0
    n_rows: int = 0
    n_bad: int = 0
    degenerate: bool = False
    note: str = ""

    def reading(self) -> str:
        """'0.912 [0.897, 0.925] over 250 tasks (1000 rows, 88 fall short)', or why there is no interval."""
        if self.mean is None:
            return f"not measured ({self.note})"
        if self.degenerate:
            return f"{self.mean:.3f} on every one of {_count(self.n_rows, 'row')}: degenerate, no interval"
        counts = f"over {_count(self.n_tasks, 'task')} ({_count(self.n_rows, 'row')}, {self.n_bad} fall short)"
        if self.ci95 is None:
            return f"{self.mean:.3f} {counts}: no interval ({self.note})"
        return f"{self.mean:.3f} [{self.ci95[0]:.3f}, {self.ci95[1]:.3f}] {counts}"

    def line(self) -> str:
        """The reading as one indented line of a report, names aligned (the report's warning says why a
        degenerate marker matters, once for all of them)."""
        return f"  {self.name + ':':<20} {self.reading()}"

    def __str__(self) -> str:
        why = f" ({_DEGENERATE_WHY})" if self.degenerate else ""
        return f"{self.name}: {self.reading()}{why}"



def task_means(index: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the finite `values` per `index` (0..size-1) and how many there were; NaN where none."""
    finite = ~np.isnan(values)
    counts = np.bincount(index[finite], minlength=size).astype(np.int64)
    sums = np.bincount(index[finite], weights=values[finite], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return means, counts


def task_numbers(rows: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, int]:
    """Each row's task number and the number of tasks; tasks numbered in sorted `task_key` order, the order
    `tables.graded.graded_table` numbers them (and every bootstrap resamples), so the same rows resample alike."""
    keys = [task_key(row) for row in rows]
    number = {key: i for i, key in enumerate(sorted(set(keys)))}
    return np.fromiter((number[key] for key in keys), dtype=np.int64, count=len(keys)), len(number)


def _without_interval(name: str, values: Sequence[float] | np.ndarray, task_of_row: np.ndarray,
                      n_tasks: int) -> tuple[MarkerSummary, np.ndarray, np.ndarray]:
    """The summary but its interval, the per-task means of the tasks that carry the column, and which those are."""
    column = np.asarray(values, dtype=float)
    if column.shape != task_of_row.shape:
        raise ValueError(f"summarise_column({name!r}): {len(column)} values against {len(task_of_row)} task numbers")
    carried = ~np.isnan(column)
    summary = MarkerSummary(name=name, n_rows=int(carried.sum()))
    if not summary.n_rows:
        summary.note = f"no row carries {name}"
        return summary, np.zeros(0), np.zeros(n_tasks, dtype=bool)
    means, counts = task_means(task_of_row, column, n_tasks)
    has = counts > 0
    per_task = means[has]
    present = column[carried]
    summary.n_tasks = len(per_task)
    summary.mean = float(per_task.mean())
    summary.n_bad = int((present < 1.0).sum())
    if float(present.min()) == float(present.max()):
        summary.degenerate = True
        summary.note = "the same value on every row"
    elif summary.n_tasks < 2:
        summary.note = "one task: an interval over tasks needs two or more"
    return summary, per_task, has


def summarise_columns(columns: Mapping[str, Sequence[float] | np.ndarray], task_of_row: np.ndarray, n_tasks: int,
                      *, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> list[MarkerSummary]:
    """The summary of each column (`values[i]` row i's value in [0, 1], NaN where the row does not carry it;
    `task_of_row[i]` its task number, 0..n_tasks-1, see `task_numbers`), in the columns' order.

    Columns carried by the same tasks share one set of bootstrap draws (stats.bootstrap.bootstrap_mean_cis): each interval is
    exactly the one `bootstrap_mean_ci` gives that column alone with the same seed, for the cost of one draw.
    """
    read = [_without_interval(name, values, task_of_row, n_tasks) for name, values in columns.items()]
    by_tasks: dict[bytes, list[int]] = {}
    for j, (summary, _, has) in enumerate(read):
        if summary.mean is not None and not summary.degenerate and summary.n_tasks >= 2:
            by_tasks.setdefault(np.packbits(has).tobytes(), []).append(j)
    for group in by_tasks.values():
        intervals = bootstrap_mean_cis([read[j][1] for j in group], draws=draws, seed=seed)
        for j, interval in zip(group, intervals, strict=True):
            read[j][0].ci95 = interval
    return [summary for summary, _, _ in read]


def summarise_column(name: str, values: Sequence[float] | np.ndarray, task_of_row: np.ndarray, n_tasks: int, *,
                     draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> MarkerSummary:
    """The summary of one column (see `summarise_columns`)."""
    return summarise_columns({name: values}, task_of_row, n_tasks, draws=draws, seed=seed)[0]
