"""group_signal: how much of a grouped update's batch would carry a learning signal, task by task.

GRPO (and DPO / RM pairs drawn within a task) learns from the contrast inside a task's group of rollouts: a group
that all passes or all fails has zero advantage and teaches nothing. Tasks are `task_key(row)` (the scenario,
not the prompt string), like every other report. A task is mixed when its graded rollouts hold both a pass and a
fail (reward >= pass_threshold splits them); `mixed_share` is the share of the tasks with two or more graded
rollouts that are mixed, with its Wilson 95% interval (tasks are the independent units). `zero_std_tasks` counts
the groups whose rewards are all equal, which is what TRL's ``frac_reward_zero_std`` sees per batch (partial
credit can differ inside a group that is all fail by the pass split).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.errors import ConfigError
from whileai_train.measure.defaults import MIN_MIXED_TASKS
from whileai_train.report import Report
from whileai_train.stats import wilson_interval
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.graded import Graded, graded_table, name_rows

__all__ = ["GroupSignalReport", "TaskSignal", "group_signal", "mixed_tasks"]

Verdict = Literal["OK", "LOW SIGNAL", "NO SIGNAL"]


class TaskSignal(BaseModel):
    """One task's group: graded rollouts, passes, pass rate, reward spread, and whether it is mixed."""

    task: str
    n: int
    passes: int
    pass_rate: float
    reward_std: float  # population std of the graded rewards (0: the group has no advantage)
    mixed: bool


class GroupSignalReport(Report):
    """The share of tasks whose group would teach a grouped update something (mixed), with its interval."""

    verdict: Verdict = "NO SIGNAL"
    n_rows: int = 0
    n_graded: int = 0
    n_tasks: int = 0
    grouped_tasks: int = 0  # tasks with two or more graded rollouts: a group to contrast
    mixed_tasks: int = 0
    all_pass_tasks: int = 0
    all_fail_tasks: int = 0
    single_rollout_tasks: int = 0
    ungraded_tasks: int = 0
    mixed_share: float | None = None
    mixed_share_ci95: tuple[float, float] | None = None
    zero_std_tasks: int = 0
    signal_rows: int = 0  # graded rows in mixed groups
    signal_row_share: float | None = None
    rollouts_per_task: dict[int, int] = Field(default_factory=dict)  # graded rollouts -> tasks
    min_mixed_tasks: int = MIN_MIXED_TASKS
    pass_threshold: float = PASS_THRESHOLD
    tasks: list[TaskSignal] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    what_to_do: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        if self.mixed_share is None:
            head = (f"group_signal: {self.verdict}: no task has two graded rollouts ({self.n_tasks} tasks, "
                    f"{self.n_graded} graded rows), so there is no group to contrast")
        else:
            low, high = self.mixed_share_ci95 or (0.0, 1.0)
            head = (f"group_signal: {self.verdict}: {self.mixed_tasks} of {self.grouped_tasks} tasks mixed "
                    f"({self.mixed_share:.0%}, 95% CI {low:.0%}-{high:.0%}); {self.signal_rows} of {self.n_graded} "
                    "graded rows carry a signal")
        lines = [head,
                 f"  all pass {self.all_pass_tasks}, all fail {self.all_fail_tasks}, one graded rollout "
                 f"{self.single_rollout_tasks}, ungraded {self.ungraded_tasks}; zero reward spread "
                 f"{self.zero_std_tasks} of {self.grouped_tasks} groups",
                 "  graded rollouts per task: " + ", ".join(f"{k}: {n} tasks" for k, n in
                                                           self.rollouts_per_task.items())]
        lines += [f"  warning: {w}" for w in self.warnings]
        lines += [f"  what to do: {step}" for step in self.what_to_do]
        return "\n".join(lines)


def mixed_tasks(table: Graded) -> np.ndarray:
    """Per task: both a pass and a fail among its graded rollouts."""
    return (table.n_passed > 0) & (table.n_passed < table.n_graded)


def _reward_std(table: Graded) -> np.ndarray:
    graded = table.graded
    task = table.task_of_row[graded]
    rewards = table.rewards[graded]
    n = np.maximum(table.n_graded, 1)
    mean = np.bincount(task, weights=rewards, minlength=table.n_tasks) / n
    squares = np.bincount(task, weights=(rewards - mean[task]) ** 2, minlength=table.n_tasks) / n
    return np.sqrt(squares)


def group_signal(rows: Any, *, pass_threshold: float = PASS_THRESHOLD,
                 min_mixed_tasks: int = MIN_MIXED_TASKS) -> GroupSignalReport:
    """How many tasks have a mixed group (a pass and a fail), the share with its Wilson interval, and the rows in
    them: what a grouped update (GRPO, DPO or RM pairs within a task) can learn from these rows.

    `rows`: a list of dicts, a JSONL path or a datasets.Dataset of graded rollouts, several per task.
    """
    if isinstance(min_mixed_tasks, bool) or not isinstance(min_mixed_tasks, int) or min_mixed_tasks < 1:
        raise ConfigError(f"min_mixed_tasks={min_mixed_tasks!r}: a whole number of tasks >= 1 (default "
                          f"{MIN_MIXED_TASKS})")
    table = graded_table(rows, pass_threshold=pass_threshold, what="group_signal", need_graded=True)
    n_graded, n_passed = table.n_graded, table.n_passed
    mixed = mixed_tasks(table)
    grouped = n_graded >= 2
    std = _reward_std(table)
    report = GroupSignalReport(
        n_rows=table.n_rows, n_graded=int(table.graded.sum()), n_tasks=table.n_tasks,
        grouped_tasks=int(grouped.sum()), mixed_tasks=int(mixed.sum()),
        all_pass_tasks=int((grouped & (n_passed == n_graded)).sum()),
        all_fail_tasks=int((grouped & (n_passed == 0)).sum()),
        single_rollout_tasks=int((n_graded == 1).sum()), ungraded_tasks=int((n_graded == 0).sum()),
        zero_std_tasks=int((grouped & (std == 0)).sum()), signal_rows=int(n_graded[mixed].sum()),
        rollouts_per_task={int(k): int(v) for k, v in sorted(Counter(n_graded[n_graded > 0].tolist()).items())},
        min_mixed_tasks=min_mixed_tasks, pass_threshold=pass_threshold)
    report.signal_row_share = report.signal_rows / report.n_graded
    report.tasks = [TaskSignal(task=table.tasks[t], n=int(n_graded[t]), passes=int(n_passed[t]),
                               pass_rate=float(n_passed[t] / n_graded[t]), reward_std=float(std[t]),
                               mixed=bool(mixed[t])) for t in table.graded_tasks.tolist()]
    if report.grouped_tasks:
        report.mixed_share = report.mixed_tasks / report.grouped_tasks
        report.mixed_share_ci95 = wilson_interval(report.mixed_tasks, report.grouped_tasks)
    if report.mixed_tasks == 0:
        report.verdict = "NO SIGNAL"
        report.what_to_do.append("sample several rollouts per task (repeats=) at a temperature that varies them, "
                                 "on tasks inside the 20-80% difficulty band; a grouped update learns nothing here")
    elif report.mixed_tasks < min_mixed_tasks:
        report.verdict = "LOW SIGNAL"
        report.warnings.append(f"{report.mixed_tasks} mixed tasks, under min_mixed_tasks={min_mixed_tasks}: a "
                               "grouped update learns from few situations")
        report.what_to_do.append("add tasks in the 20-80% band, or more rollouts per task so more groups mix")
    else:
        report.verdict = "OK"
    if report.single_rollout_tasks:
        report.warnings.append(f"{report.single_rollout_tasks} tasks have one graded rollout: no group to contrast "
                               "(a grouped update needs repeats of each task)")
    ungraded = table.ungraded_rows()
    if len(ungraded):
        report.warnings.append(f"{len(ungraded)} ungraded rows left out ({name_rows(ungraded)})")
    return report
