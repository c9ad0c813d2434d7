"""compare_runs: did a change move pass@1? Paired over the tasks both runs share, unpaired only as a fallback.

Each task (`task_key`) is one value per side, its pass rate. With at least MIN_PAIRED_TASKS shared tasks
the difference after - before is bootstrapped over those tasks and tested with a sign-flip permutation
p-value (stats.paired_comparison); tasks on one side only are dropped and counted (`paired_share`). With
fewer shared tasks it falls back to Welch's unpaired test over every task of each side and says so.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError, InputError
from whileai_train.measure.defaults import LOW_PAIRED_SHARE, MIN_PAIRED_TASKS
from whileai_train.measure.pass_at import config_pair
from whileai_train.report import Report
from whileai_train.stats import DEFAULT_DRAWS, DEFAULT_SEED, paired_comparison, welch_p_value
from whileai_train.stats.welch import welch_interval
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.graded import Graded, graded_table, name_rows

__all__ = ["CompareRunsReport", "compare_runs"]

Verdict = Literal["improved", "regressed", "no_difference_detected", "not_measured"]


class CompareRunsReport(Report):
    """after - before in pass@1 over tasks, its 95% interval and p-value, and how much of the eval paired."""

    verdict: Verdict = "not_measured"
    test: Literal["paired", "unpaired_welch"] = "paired"
    delta: float | None = None
    ci95: tuple[float, float] | None = None
    p_value: float | None = None
    before: float | None = None  # pass@1 over the tasks the test used
    after: float | None = None
    n_paired: int = 0
    n_before_only: int = 0
    n_after_only: int = 0
    n_before_tasks: int = 0
    n_after_tasks: int = 0
    paired_share: float = 0.0  # paired tasks / tasks on either side
    note: str = ""
    config_before: dict[str, Any] = Field(default_factory=dict)
    config_after: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        if self.delta is None or self.before is None or self.after is None:
            lines = [f"compare_runs: {self.verdict}: nothing to compare ({self.note})"]
        else:
            ci = f" [{self.ci95[0]:+.3f}, {self.ci95[1]:+.3f}]" if self.ci95 else ""
            p = f", p={self.p_value:.3g}" if self.p_value is not None else ""
            how = (f"paired over {self.n_paired} shared tasks" if self.test == "paired"
                   else f"unpaired Welch test over {self.n_before_tasks} vs {self.n_after_tasks} tasks")
            head = (f"compare_runs: {self.verdict}: pass@1 {self.after:.3f} after vs {self.before:.3f} before, "
                    f"delta {self.delta:+.3f}{ci}{p} ({how})")
            lines = [head]
            lines.append(f"  paired_share {self.paired_share:.2f}: {self.note}")
        if self.verdict == "no_difference_detected":
            lines.append("  no_difference_detected means the 95% interval covers zero, not that the runs are equal: "
                         "a difference smaller than the interval's half-width can still be there; evaluate more "
                         "tasks to narrow it")
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


def _task_rates(table: Graded) -> dict[str, float]:
    tasks = table.graded_tasks
    rates = table.n_passed[tasks] / table.n_graded[tasks]
    return {table.tasks[t]: float(r) for t, r in zip(tasks.tolist(), rates.tolist())}


def _read(rows: Any, side: str, pass_threshold: float, report: CompareRunsReport) -> tuple[dict[str, float], Any]:
    table = graded_table(rows, pass_threshold=pass_threshold, what=f"compare_runs {side}_rows")
    rows = table.rows
    ungraded = table.ungraded_rows()
    if len(ungraded) == table.n_rows:
        raise InputError(f"compare_runs: none of the {table.n_rows} {side} rows has a reward "
                         f"({name_rows(ungraded)}). Fix: grade the {side} rows first")
    if len(ungraded):
        report.warnings.append(f"{len(ungraded)} ungraded {side} rows skipped ({name_rows(ungraded)})")
    return _task_rates(table), rows


def _verdict(ci95: tuple[float, float] | None) -> Verdict:
    if ci95 is None:
        return "not_measured"
    if ci95[0] > 0:
        return "improved"
    if ci95[1] < 0:
        return "regressed"
    return "no_difference_detected"


def compare_runs(before_rows: Any, after_rows: Any, *, pass_threshold: float = PASS_THRESHOLD,
                 min_paired: int = MIN_PAIRED_TASKS, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> CompareRunsReport:
    """Compare two runs' pass@1 task by task (after - before).

    Pairs the tasks both sides graded; with fewer than `min_paired` (5) it falls back to Welch's unpaired
    test and says so. The verdict is improved / regressed when the 95% interval excludes zero, else
    no_difference_detected (the interval covers zero: not that the runs are equal).
    """
    if isinstance(min_paired, bool) or not isinstance(min_paired, int) or min_paired < 2:
        raise ConfigError(f"compare_runs: min_paired={min_paired!r}; a paired interval needs at least 2 tasks. "
                          f"Fix: leave it at {MIN_PAIRED_TASKS}")
    report = CompareRunsReport()
    before, before_list = _read(before_rows, "before", pass_threshold, report)
    after, after_list = _read(after_rows, "after", pass_threshold, report)
    shared = sorted(before.keys() & after.keys())
    report.n_before_tasks, report.n_after_tasks = len(before), len(after)
    report.n_paired = len(shared)
    report.n_before_only = len(before) - len(shared)
    report.n_after_only = len(after) - len(shared)
    union = len(before) + len(after) - len(shared)
    report.paired_share = len(shared) / union
    dropped = report.n_before_only + report.n_after_only
    report.note = (f"{len(shared)} of {union} tasks paired; {dropped} on one side only dropped "
                   f"({report.n_before_only} before only, {report.n_after_only} after only)" if dropped
                   else f"all {union} tasks paired")
    if len(shared) >= min_paired:
        b = np.array([before[t] for t in shared])
        a = np.array([after[t] for t in shared])
        result = paired_comparison(b, a, draws=draws, seed=seed)
        report.test = "paired"
        report.before, report.after = float(b.mean()), float(a.mean())
        report.delta, report.ci95, report.p_value = result.delta, result.ci95, result.p_value
        if report.paired_share < LOW_PAIRED_SHARE:
            report.warnings.append(
                f"under half the tasks paired (paired_share {report.paired_share:.2f}): the two sides drew "
                "different task sets, so the delta over the few that pair is between two evals; pin the after "
                "side to the baseline's tasks (tasks=) or compare per tier with wai.dataset_report")
    else:
        b = np.array(list(before.values()))
        a = np.array(list(after.values()))
        report.test = "unpaired_welch"
        report.before, report.after = float(b.mean()), float(a.mean())
        report.delta = report.after - report.before
        report.ci95 = welch_interval(a, b)
        report.p_value = welch_p_value(a, b)
        report.notes.append(f"only {len(shared)} shared tasks (fewer than {min_paired}): fell back to the unpaired "
                            "Welch test over every task of each side, which is weaker and assumes the two task "
                            "sets are alike; evaluate both runs on the same tasks for a paired comparison")
        if report.ci95 is None:
            report.notes.append("each side needs at least 2 graded tasks for an interval: not_measured")
    report.verdict = _verdict(report.ci95)
    report.config_before, report.config_after, warnings = config_pair(before_list, after_list, "runs")
    report.warnings += warnings
    return report
