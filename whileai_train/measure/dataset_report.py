"""dataset_report: a row set per tier: tasks, rows, pass rate with its interval, mixed share.

delta_report's not-comparable advice ("the two arms drew different situation sets ... compare per tier with
dataset_report") needs a per-tier reading that holds when the task sets differ: print dataset_report on each arm
and compare the tiers both hold. A row's tier is ``by=`` (default TIER_KEY, "tier"), read off the row, then its
``tags`` (the platform's {"difficulty": ...}), then its ``lineage``; a callable ``by=`` is called with the row.

Tasks are `task_key(row)`. A tier's pass rate is the mean over its tasks of each task's pass rate (pass_at's pass@1),
and its ``ci95`` is the Wilson interval over tasks: Wilson(pass_rate x n_tasks, n_tasks). With one rollout per task
that is the Wilson interval over rows; with repeats it stays valid where a Wilson interval over rows does not,
because the rollouts of one task are not independent draws (docs/measurement.md). The mixed share per tier is
group_signal's rule: tasks with two or more graded rollouts holding a pass and a fail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.errors import ConfigError
from whileai_train.measure.defaults import NO_GROUP, TIER_KEY
from whileai_train.report import Report
from whileai_train.stats import wilson_interval
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.graded import graded_table, name_rows

__all__ = ["DatasetReport", "TierStats", "dataset_report", "tier_of", "wilson_over_tasks"]


class TierStats(BaseModel):
    """One tier: its tasks and rows, the pass rate over tasks with its Wilson interval, and its mixed share."""

    tier: str
    n_tasks: int
    n_rows: int
    n_graded: int
    pass_rate: float | None  # mean over graded tasks of each task's pass rate
    ci95: tuple[float, float] | None  # Wilson over tasks
    grouped_tasks: int  # tasks with two or more graded rollouts
    mixed_tasks: int
    mixed_share: float | None

    def line(self) -> str:
        if self.pass_rate is None or self.ci95 is None:
            rate = "no graded row"
        else:
            rate = f"pass rate {self.pass_rate:.3f} [{self.ci95[0]:.3f}, {self.ci95[1]:.3f}]"
        mixed = f"{self.mixed_tasks} of {self.grouped_tasks} mixed" if self.grouped_tasks else "no repeats"
        return f"  tier {self.tier}: {rate} over {self.n_tasks} tasks ({self.n_graded} graded rows); {mixed}"


class DatasetReport(Report):
    """A row set per tier (`by`): each tier's tasks, pass rate over tasks with a Wilson interval, mixed share."""

    by: str = TIER_KEY
    n_rows: int = 0
    n_graded: int = 0
    n_tasks: int = 0
    pass_rate: float | None = None
    ci95: tuple[float, float] | None = None
    mixed_tasks: int = 0
    grouped_tasks: int = 0
    mixed_share: float | None = None
    rollouts_per_task: dict[int, int] = Field(default_factory=dict)  # graded rollouts -> tasks
    tiers: list[TierStats] = Field(default_factory=list)
    pass_threshold: float = PASS_THRESHOLD
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        state = "check the warnings" if self.warnings else "ok"
        rate = (f"pass rate {self.pass_rate:.3f} [{self.ci95[0]:.3f}, {self.ci95[1]:.3f}]"
                if self.pass_rate is not None and self.ci95 is not None else "no graded row")
        lines = [f"dataset_report {state}: {len(self.tiers)} tiers by {self.by} over {self.n_tasks} tasks "
                 f"({self.n_rows} rows); {rate} (95% Wilson over tasks)"]
        lines += [tier.line() for tier in self.tiers]
        if self.grouped_tasks:
            lines.append(f"  mixed tasks: {self.mixed_tasks} of {self.grouped_tasks} with repeats")
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


def wilson_over_tasks(task_rates: np.ndarray) -> tuple[float, float] | None:
    """Wilson 95% interval for a mean of per-task pass rates, the tasks as the trials: Wilson(mean x T, T).

    Per-task rates lie in [0, 1], so their variance is at most mean (1 - mean): the interval is exact with one
    rollout per task and never narrower than the truth with repeats (rollouts of one task are not independent)."""
    if len(task_rates) == 0:
        return None
    return wilson_interval(float(task_rates.mean()) * len(task_rates), len(task_rates))


def tier_of(row: Mapping[str, Any], by: str | Callable[[Mapping[str, Any]], Any]) -> str:
    """The row's tier: `by(row)`, else row[by], else row["tags"][by], else row["lineage"][by]; NO_GROUP if none."""
    if callable(by):
        value = by(row)
    else:
        value = row.get(by)
        for holder in ("tags", "lineage"):
            if value is not None:
                break
            inner = row.get(holder)
            value = inner.get(by) if isinstance(inner, Mapping) else None
    return NO_GROUP if value is None else str(value)


def _mixed(n_graded: np.ndarray, n_passed: np.ndarray) -> tuple[int, int]:
    grouped = n_graded >= 2
    return int(grouped.sum()), int((grouped & (n_passed > 0) & (n_passed < n_graded)).sum())


def dataset_report(rows: Any, *, by: str | Callable[[Mapping[str, Any]], Any] = TIER_KEY,
                   pass_threshold: float = PASS_THRESHOLD) -> DatasetReport:
    """The rows per tier: tasks, rows, pass rate over tasks with a Wilson interval over tasks, and mixed share.

    `rows`: a list of dicts, a JSONL path or a datasets.Dataset. `by`: the row key naming a row's tier (default
    "tier"; read off the row, its tags, then its lineage) or a callable row -> tier.
    """
    if not callable(by) and (not isinstance(by, str) or not by):
        raise ConfigError(f"by={by!r}: a row key (the tier's name, e.g. 'tier' or 'difficulty') or a callable "
                          "row -> tier")
    table = graded_table(rows, pass_threshold=pass_threshold, what="dataset_report", need_graded=True)
    by_name = by if isinstance(by, str) else getattr(by, "__name__", "by")
    names = [tier_of(row, by) for row in table.rows]
    tier_names = sorted(set(names), key=lambda name: (name == NO_GROUP, name))
    code = {name: i for i, name in enumerate(tier_names)}
    tier_of_row = np.fromiter((code[name] for name in names), dtype=np.int64, count=len(names))
    report = DatasetReport(by=by_name, n_rows=table.n_rows, n_graded=int(table.graded.sum()), n_tasks=table.n_tasks,
                           pass_threshold=pass_threshold)
    n_tasks, graded, passed = table.n_tasks, table.graded, table.passed
    for number, name in enumerate(tier_names):
        in_tier = tier_of_row == number
        tasks_here = np.unique(table.task_of_row[in_tier])
        n_graded = np.bincount(table.task_of_row[in_tier & graded], minlength=n_tasks)
        n_passed = np.bincount(table.task_of_row[in_tier & passed], minlength=n_tasks)
        rated = n_graded > 0
        rates = n_passed[rated] / n_graded[rated]
        grouped, mixed = _mixed(n_graded, n_passed)
        report.tiers.append(TierStats(
            tier=name, n_tasks=len(tasks_here), n_rows=int(in_tier.sum()), n_graded=int(n_graded.sum()),
            pass_rate=float(rates.mean()) if len(rates) else None, ci95=wilson_over_tasks(rates),
            grouped_tasks=grouped, mixed_tasks=mixed, mixed_share=mixed / grouped if grouped else None))
    rates = table.pass_rates()[table.graded_tasks]
    report.pass_rate, report.ci95 = float(rates.mean()), wilson_over_tasks(rates)
    report.grouped_tasks, report.mixed_tasks = _mixed(table.n_graded, table.n_passed)
    report.mixed_share = report.mixed_tasks / report.grouped_tasks if report.grouped_tasks else None
    report.rollouts_per_task = {int(k): int(v) for k, v in
                                sorted(Counter(table.n_graded[table.graded_tasks].tolist()).items())}
    if any(k > 1 for k in report.rollouts_per_task):
        report.notes.append("tasks repeat: each interval is Wilson over tasks, not over rows, because the rollouts "
                            "of one task are not independent draws")
    missing = names.count(NO_GROUP)
    if missing:
        where = f"by({by_name})" if callable(by) else f"the row, its tags or its lineage under {by_name!r}"
        report.warnings.append(f"{missing} of {table.n_rows} rows name no tier ({where} is missing): they are "
                               f"tier {NO_GROUP}. Fix: stamp the tier on each row, or pass by= the key that holds it")
    pairs = {(int(t), int(c)) for t, c in zip(table.task_of_row.tolist(), tier_of_row.tolist())}
    tiers_per_task = Counter(task for task, _ in pairs)
    split = sorted(table.tasks[task] for task, count in tiers_per_task.items() if count > 1)
    if split:
        report.warnings.append(f"{len(split)} tasks have rows in more than one tier ({', '.join(split[:5])}"
                               f"{' ...' if len(split) > 5 else ''}): a task is one situation, so its tier should be "
                               "one; each tier counts the rows it holds")
    ungraded = table.ungraded_rows()
    if len(ungraded):
        report.warnings.append(f"{len(ungraded)} ungraded rows left out of the pass rates ({name_rows(ungraded)})")
    return report
