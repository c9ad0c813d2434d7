"""metric_summary / marker_summary: each marker's mean over tasks with a 95% bootstrap interval over tasks.

A marker is a named behaviour measurement on row["markers"] (1.0 the good outcome). A task's value is the mean
over its rows that carry the marker; the summary is the mean over tasks, its interval the percentile bootstrap
over tasks (stats.bootstrap_mean_ci, seeded). A marker with the same value on every row is degenerate: no
interval, a line saying so, and one warning naming every such marker, since a rule that matches nothing looks
exactly like a behaviour that never happened.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError
from whileai_train.measure.sides import PASS_AT_1, Side, read_side, task_means
from whileai_train.report import Report
from whileai_train.stats import DEFAULT_DRAWS, bootstrap_mean_ci
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["MarkerSummaryReport", "MetricSummary", "marker_summary", "metric_summary"]


class MetricSummary(Report):
    """One metric over tasks: mean, 95% bootstrap interval (None when degenerate), tasks and rows it covers."""

    name: str
    mean: float | None = None
    ci95: tuple[float, float] | None = None
    n_tasks: int = 0
    n_rows: int = 0
    degenerate: bool = False
    note: str = ""

    def line(self) -> str:
        if self.mean is None:
            return f"{self.name}: not measured ({self.note})"
        if self.degenerate:
            return (f"{self.name}: {self.mean:.3f} on every one of {self.n_rows} rows: degenerate, no interval "
                    "(a rule that never fires reads the same as a behaviour that never happened)")
        ci = f" [{self.ci95[0]:.3f}, {self.ci95[1]:.3f}]" if self.ci95 else ""
        return f"{self.name}: {self.mean:.3f}{ci} over {self.n_tasks} tasks ({self.n_rows} rows)"

    def __str__(self) -> str:
        return "metric_summary: " + self.line()


class MarkerSummaryReport(Report):
    """Every marker the rows carry, each a MetricSummary; `degenerate` names those equal on every row."""

    markers: dict[str, MetricSummary] = Field(default_factory=dict)
    degenerate: list[str] = Field(default_factory=list)
    n_rows: int = 0
    n_tasks: int = 0
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        if not self.markers:
            head = f"marker_summary: NO MARKERS on {self.n_rows} rows (nothing stamped row['markers'])"
        else:
            bad = f"; {len(self.degenerate)} degenerate ({', '.join(self.degenerate)})" if self.degenerate else ""
            head = (f"marker_summary: {len(self.markers)} markers over {self.n_tasks} tasks ({self.n_rows} rows, "
                    f"95% bootstrap over tasks){bad}")
        lines = [head] + [f"  {summary.line()}" for summary in self.markers.values()]
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


def summarize(side: Side, name: str, *, draws: int, seed: int) -> MetricSummary:
    """The summary of one column of an already-read side."""
    values = side.values(name)
    carried = ~np.isnan(values)
    summary = MetricSummary(name=name, n_rows=int(carried.sum()))
    if not carried.any():
        summary.note = f"no row carries {name}"
        return summary
    means, counts = task_means(side.table.task_of_row, values, side.n_tasks)
    per_task = means[counts > 0]
    summary.n_tasks = len(per_task)
    summary.mean = float(per_task.mean())
    present = values[carried]
    if float(present.min()) == float(present.max()):
        summary.degenerate = True
        summary.note = "the same value on every row"
        return summary
    summary.ci95 = bootstrap_mean_ci(per_task, draws=draws, seed=seed)
    return summary


def metric_summary(rows: Any, name: str, *, pass_threshold: float = PASS_THRESHOLD, draws: int = DEFAULT_DRAWS,
                   seed: int = 0) -> MetricSummary:
    """`name` (a marker on row["markers"], or "pass@1") over tasks: mean and its 95% bootstrap interval."""
    side = read_side(rows, what="metric_summary", pass_threshold=pass_threshold)
    if name != PASS_AT_1 and name not in side.markers:
        carried = ", ".join(sorted(side.markers)) or "none"
        raise ConfigError(f"metric_summary: no row carries {name!r} (markers on these rows: {carried}). Fix: pass "
                          "one of those, or \"pass@1\"")
    return summarize(side, name, draws=draws, seed=seed)


def marker_summary(rows: Any, *, pass_threshold: float = PASS_THRESHOLD, draws: int = DEFAULT_DRAWS,
                   seed: int = 0) -> MarkerSummaryReport:
    """Every marker on row["markers"]: mean over tasks with a 95% bootstrap interval; degenerate ones named."""
    side = read_side(rows, what="marker_summary", pass_threshold=pass_threshold)
    report = MarkerSummaryReport(n_rows=side.table.n_rows, n_tasks=side.n_tasks)
    for name in sorted(side.markers):
        report.markers[name] = summarize(side, name, draws=draws, seed=seed)
    report.degenerate = [name for name, summary in report.markers.items() if summary.degenerate]
    if report.degenerate:
        report.warnings.append(
            f"{len(report.degenerate)} markers came out the same on every row ({', '.join(report.degenerate)}): "
            "a rule that matches nothing looks exactly like a behaviour that never happened; check that it can fire")
    if not report.markers:
        report.notes.append("no row carries row['markers']; stamp them from a grader or a marker family first")
    return report
