"""The train-step check: what the trainer will learn from, counted while an export writes, then refused or warned.

SFT imitates every row it is given, so an SFT set with failing rows (reward below the pass threshold) is refused
with TrainingSelectionError unless ``check="warn"``. Rows with no reward are demonstrations, the usual SFT
input: they pass the check and are counted as ``ungraded``. DPO and GRPO learn only from tasks with both a pass
and a fail: nothing is refused, and fewer mixed tasks than ``min_mixed_tasks`` warns with the count used against
the count given and the reason per class left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from whileai_train.errors import ConfigError, TrainingSelectionError
from whileai_train.exporters.defaults import CHECK, CHECKS, MIN_MIXED_TASKS
from whileai_train.exporters.report import DroppedTasks, ExportReport, TrainStepCheck
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["SftTally", "check_selection_options", "count_rewards", "mixed_selection", "sft_fix", "task_class"]

_SHOWN_TASKS = 20  # failing tasks named in the report and the error; the count covers them all

_REASONS = {
    "dpo": {
        "all_pass": "every graded rollout passed: no failing side to pair it with",
        "all_fail": "every graded rollout failed: no passing side to pair it with",
        "ungraded": "no reward: neither side can be chosen",
        "no_usable_pair": "mixed, but each of its pairs was dropped (see dropped)",
    },
    "grpo": {
        "all_pass": "solved: every rollout passed, so a group's rewards are equal and its advantage zero",
        "all_fail": "every rollout failed: equal rewards in a group, zero advantage",
        "ungraded": "no reward and no calibration stamp: whether it teaches anything is unknown",
        "no_usable_pair": "",
    },
}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def check_selection_options(*, check: Any = CHECK, min_mixed_tasks: Any = MIN_MIXED_TASKS,
                            threshold: Any = PASS_THRESHOLD) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        raise ConfigError(f"threshold={threshold!r}: give the reward at or above which a row passes, a finite number "
                          f"(default {PASS_THRESHOLD})")
    if check not in CHECKS:
        raise ConfigError(f"check={check!r} is not one of {CHECKS}. Fix: 'refuse' (the default) refuses SFT rows "
                          "with a failing reward, 'warn' trains on them on purpose and says so in the report")
    if isinstance(min_mixed_tasks, bool) or not isinstance(min_mixed_tasks, int) or min_mixed_tasks < 0:
        raise ConfigError(f"min_mixed_tasks={min_mixed_tasks!r}: give a whole number of tasks >= 0 "
                          f"(default {MIN_MIXED_TASKS}, the product text's)")


class SftTally:
    """Counts, per source row an SFT export writes, whether its reward passes, fails or is absent."""

    __slots__ = ("failing_rows", "failing_tasks", "passing", "tasks", "threshold", "ungraded")

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.passing = self.ungraded = 0
        self.failing_rows: list[int] = []
        self.failing_tasks: dict[str, int] = {}
        self.tasks: set[str] = set()

    def add(self, index: int, task: str, reward: float | None) -> None:
        self.tasks.add(task)
        if reward is None:
            self.ungraded += 1
        elif reward >= self.threshold:
            self.passing += 1
        else:
            self.failing_rows.append(index)
            self.failing_tasks[task] = self.failing_tasks.get(task, 0) + 1

    def failing(self) -> str | None:
        """What fails, in words (how many rows of how many, in which tasks), or None when no row fails. The
        export's refusal and publish_gate(mode="sft")'s read this one text, so both say the same count."""
        if not self.failing_rows:
            return None
        shown = self._shown()
        named = ", ".join(f"{task} ({count})" for task, count in shown.items())
        more = len(self.failing_tasks) - len(shown)
        rows = self.passing + len(self.failing_rows) + self.ungraded
        return (f"{len(self.failing_rows)} of {rows} rows have a failing reward (below {self.threshold:g}), in "
                f"{_count(len(self.failing_tasks), 'task')}: {named}{f' and {more} more' if more else ''}")

    def refusal(self, outcome: str) -> str | None:
        """The refusal (what fails, why SFT cannot take it, then `outcome`; the fix is :func:`sft_fix`), or None
        when no row fails."""
        what = self.failing()
        if what is None:
            return None
        return f"{what}. SFT imitates every row, so they would be trained as examples to follow; {outcome}"

    def _shown(self) -> dict[str, int]:
        return dict(sorted(self.failing_tasks.items(), key=lambda item: -item[1])[:_SHOWN_TASKS])

    def finish(self, report: ExportReport, check: str) -> None:
        """Put the selection block on the report; refuse failing rows (check="refuse") or warn about them."""
        failing = len(self.failing_rows)
        selection = TrainStepCheck(method="sft", check=check, threshold=self.threshold,  # type: ignore[arg-type]
                              rows=self.passing + failing + self.ungraded, passing=self.passing, failing=failing,
                              ungraded=self.ungraded, failing_tasks=self._shown(),
                              tasks_failing=len(self.failing_tasks), tasks_given=len(self.tasks),
                              tasks_used=len(self.tasks))
        report.selection = selection
        refusal = self.refusal("nothing was written")
        if refusal is None:
            return
        if check == "refuse":
            raise TrainingSelectionError(f"{refusal}. Fix: {sft_fix(self.threshold)}", rows=self.failing_rows,
                                         tasks=self.failing_tasks, selection=selection)
        report.warnings.append(f"{self.failing()}: trained anyway (check='warn')")


def sft_fix(threshold: float) -> str:
    """The one fix for failing SFT rows, in Python's words and the command line's."""
    return ("keep the passing rows, e.g. `rows, report = wai.optimize(rows, mode=\"sft\", "
            f"min_reward={threshold:g})` (each task's best rollout at or above the pass threshold), or train on them "
            "on purpose with check='warn' (whileai-train export ... --check warn)")


def task_class(passes: int, fails: int, pass_rate: float | None = None) -> str:
    """mixed / all_pass / all_fail / ungraded: from the task's calibration pass rate when it has one (measured
    over all its graded repeats), else from its graded rows at hand."""
    if pass_rate is not None:
        return "mixed" if 0.0 < pass_rate < 1.0 else ("all_pass" if pass_rate >= 1.0 else "all_fail")
    if passes and fails:
        return "mixed"
    if passes:
        return "all_pass"
    return "all_fail" if fails else "ungraded"


def mixed_selection(report: ExportReport, method: str, classes: dict[str, str], *, passing: int, failing: int,
                    ungraded: int, min_mixed_tasks: int, threshold: float) -> TrainStepCheck:
    """The selection block of a DPO or GRPO export from each task's class; warns under `min_mixed_tasks`."""
    used = sum(1 for kind in classes.values() if kind == "mixed")
    counts: dict[str, int] = {}
    for kind in classes.values():
        if kind != "mixed":
            counts[kind] = counts.get(kind, 0) + 1
    dropped = [DroppedTasks(kind=kind, tasks=count, reason=_REASONS[method][kind])  # type: ignore[arg-type]
               for kind, count in sorted(counts.items())]
    selection = TrainStepCheck(method=method, threshold=threshold, rows=passing + failing + ungraded,  # type: ignore[arg-type]
                          passing=passing, failing=failing, ungraded=ungraded, tasks_given=len(classes),
                          tasks_used=used, min_mixed_tasks=min_mixed_tasks, dropped=dropped)
    report.selection = selection
    if used < min_mixed_tasks:
        why = "; ".join(f"{d.kind} {d.tasks} ({d.reason})" for d in dropped) or "none, every task given is mixed"
        report.warnings.append(
            f"{used} mixed tasks used of {len(classes)} given, fewer than min_mixed_tasks={min_mixed_tasks}: "
            f"{method.upper()} learns only from tasks with both a pass and a fail. Not learned from: {why}. Fix: "
            "add rollouts of tasks the policy sometimes solves, or more graded repeats per task")
    return selection


def count_rewards(rewards: Iterable[float | None], threshold: float) -> tuple[int, int, int]:
    """(passing, failing, ungraded) of some rewards."""
    passing = failing = ungraded = 0
    for reward in rewards:
        if reward is None:
            ungraded += 1
        elif reward >= threshold:
            passing += 1
        else:
            failing += 1
    return passing, failing, ungraded
