"""build_preference_pairs: a task's passing rollouts against its failing ones, as (chosen, rejected) pairs.

Pairs never cross phrasings: rows pair within one task (`task_key`) and one ask text, because DPO scores both
sides against one shared prompt. Within a group the best pass meets the worst fail first (the clearest
contrast), then the next of each, so a group gives min(passes, fails) pairs (`max_pairs_per_task` caps it);
no row is used twice. Pass means reward >= 0.5 (partial credit splits there).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError
from whileai_train.rows.contract import prompt_text
from whileai_train.select.select_rows import SelectionReport, eval_warning
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.graded import graded_table, name_rows

__all__ = ["PreferencePairs", "PreferencePairsReport", "build_preference_pairs"]


class PreferencePairsReport(SelectionReport):
    """How many pairs came out of how many tasks, and why the other tasks gave none."""

    n: int = 0
    pairs: int = 0
    tasks: int = 0
    tasks_paired: int = 0
    threshold: float = PASS_THRESHOLD
    max_pairs_per_task: int | None = None
    skipped: dict[str, int] = Field(default_factory=dict)
    margin_mean: float | None = None

    @property
    def verdict(self) -> str:
        if self.pairs == 0:
            return "NO PAIRS"
        return "pairs built, check the warnings" if self.warnings else "pairs built"

    def __str__(self) -> str:
        lines = [(f"preference pairs: {self.verdict}: {self.pairs} pairs from {self.tasks_paired} of {self.tasks} "
                  f"tasks ({self.n} rows; pass at reward >= {self.threshold:g})")]
        if self.margin_mean is not None:
            lines.append(f"  mean reward margin chosen - rejected: {self.margin_mean:.3f}")
        if self.skipped:
            lines.append("  tasks without a pair: " + ", ".join(f"{why} {count}" for why, count in self.skipped.items()))
        lines.append(f"  eval_sourced: {self.eval_sourced}")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        if self.pairs == 0:
            lines.append("  next: sample more rollouts per ask until asks have both a pass and a fail")
        return "\n".join(lines)


class PreferencePairs(NamedTuple):
    """``pairs, report = build_preference_pairs(rows)``."""

    pairs: list[dict[str, Any]]
    report: PreferencePairsReport

    def __repr__(self) -> str:
        return f"PreferencePairs(pairs=[{len(self.pairs)} pairs], report={self.report!r})"


def build_preference_pairs(rows: Any, *, threshold: float = PASS_THRESHOLD,
                           max_pairs_per_task: int | None = None) -> PreferencePairs:
    """Pair each task's passing rows (chosen) with its failing rows (rejected).

    Each pair is ``{"task_id", "prompt", "chosen", "rejected", "chosen_reward", "rejected_reward", "margin",
    "chosen_index", "rejected_index"}`` with `chosen` / `rejected` new copies of the input rows (the input is
    untouched). The report counts eval-sourced pairs (either side's reward came from evaluate()).
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold={threshold!r}. Fix: pass the pass/fail split as a reward in (0, 1], e.g. 0.5")
    if max_pairs_per_task is not None and (isinstance(max_pairs_per_task, bool) or
                                           not isinstance(max_pairs_per_task, int) or max_pairs_per_task < 1):
        raise ConfigError(f"max_pairs_per_task={max_pairs_per_task!r}. Fix: a positive whole number, or None")
    view = graded_table(rows, what="build_preference_pairs", order="first_seen", need_graded=True)
    rows = view.rows
    codes: dict[tuple[int, str], int] = {}
    group_of = np.array([codes.setdefault((task, prompt_text(row)), len(codes))
                         for task, row in zip(view.task_of_row.tolist(), rows)], dtype=np.int64)
    keys = list(codes)
    graded_index = np.flatnonzero(view.graded)
    rewards = view.rewards
    passed = rewards[graded_index] >= threshold
    wins, losses = graded_index[passed], graded_index[~passed]
    # best pass first and worst fail first within each group; ties in input order
    wins = wins[np.lexsort((wins, -rewards[wins], group_of[wins]))]
    losses = losses[np.lexsort((losses, rewards[losses], group_of[losses]))]
    win_starts = np.searchsorted(group_of[wins], np.arange(len(keys) + 1))
    loss_starts = np.searchsorted(group_of[losses], np.arange(len(keys) + 1))

    report = PreferencePairsReport(n=view.n_rows, tasks=view.n_tasks, threshold=float(threshold),
                                   max_pairs_per_task=max_pairs_per_task)
    pairs: list[dict[str, Any]] = []
    paired_tasks: set[int] = set()
    eval_rows: list[int] = []
    eval_pairs = 0
    per_task: dict[int, int] = {}
    for group, (task, prompt) in enumerate(keys):
        group_wins = wins[win_starts[group]:win_starts[group + 1]].tolist()
        group_losses = losses[loss_starts[group]:loss_starts[group + 1]].tolist()
        count = min(len(group_wins), len(group_losses))
        if max_pairs_per_task is not None:
            count = min(count, max_pairs_per_task - per_task.get(task, 0))
            per_task[task] = per_task.get(task, 0) + count
        if count:
            paired_tasks.add(task)
        for chosen, rejected in zip(group_wins[:count], group_losses[:count]):
            pairs.append({
                "task_id": view.tasks[task], "prompt": prompt, "chosen": dict(rows[chosen]),
                "rejected": dict(rows[rejected]), "chosen_reward": float(rewards[chosen]),
                "rejected_reward": float(rewards[rejected]), "margin": float(rewards[chosen] - rewards[rejected]),
                "chosen_index": chosen, "rejected_index": rejected,
            })
            if view.eval_sourced[chosen] or view.eval_sourced[rejected]:
                eval_pairs += 1
                eval_rows.extend(i for i in (chosen, rejected) if view.eval_sourced[i])
    report.pairs, report.tasks_paired = len(pairs), len(paired_tasks)
    if pairs:
        report.margin_mean = float(np.mean([pair["margin"] for pair in pairs]))

    task_graded = np.bincount(view.task_of_row[graded_index], minlength=view.n_tasks)
    task_wins = np.bincount(view.task_of_row[wins], minlength=view.n_tasks)
    unpaired = np.array([task not in paired_tasks for task in range(view.n_tasks)], dtype=bool)
    reasons = {
        "ungraded": unpaired & (task_graded == 0),
        "all_pass": unpaired & (task_graded > 0) & (task_wins == task_graded),
        "all_fail": unpaired & (task_graded > 0) & (task_wins == 0),
    }
    reasons["split_across_prompts"] = unpaired & ~reasons["ungraded"] & ~reasons["all_pass"] & ~reasons["all_fail"]
    report.skipped = {why: int(mask.sum()) for why, mask in reasons.items() if mask.any()}

    ungraded = np.flatnonzero(~view.graded)
    if len(ungraded):
        report.warnings.append(f"skipped {len(ungraded)} ungraded rows (reward is null): {name_rows(ungraded)}")
    if not pairs:
        if not len(losses) or not len(wins):
            which = "passes" if not len(losses) else "fails"
            report.warnings.append(f"no pairs: every graded row {which} (one class only; pass at reward >= "
                                   f"{threshold:g}), so no task has a pass to prefer over a fail. Fix: sample "
                                   "harder (or easier) asks, or grade with partial credit and lower threshold=")
        else:
            report.warnings.append("no pairs: no task (ask text) has both a pass and a fail. Fix: sample more "
                                   "rollouts per ask")
    report.eval_sourced, report.eval_sourced_rows = eval_pairs, sorted(set(eval_rows))
    if eval_pairs:
        report.warnings.append(eval_warning(eval_pairs, report.eval_sourced_rows, unit="pairs"))
    return PreferencePairs(pairs, report)
