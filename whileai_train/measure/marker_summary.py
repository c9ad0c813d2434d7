"""metric_summary / marker_summary: each marker's mean over tasks with a 95% bootstrap interval over tasks.

A marker is a named behaviour measurement on row["markers"] (1.0 the good outcome). Each is summarised by the
one marker rule, tables.marker_column (the family reports use it too): the mean over tasks of
each task's mean over its rows that carry the marker, and the percentile bootstrap over tasks. A marker with the
same value on every row is degenerate: no interval, a line saying so, and one warning naming every such marker,
since a rule that matches nothing looks exactly like a behaviour that never happened.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from whileai_train.errors import ConfigError
from whileai_train.measure.sides import PASS_AT_1, read_side
from whileai_train.report import Report
from whileai_train.stats import DEFAULT_DRAWS, DEFAULT_SEED
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.marker_column import (
    MarkerSummary,
    summarise_column,
    summarise_columns,
)

__all__ = ["MarkerSummaryReport", "marker_summary", "metric_summary"]


class MarkerSummaryReport(Report):
    """Every marker the rows carry, each a MarkerSummary; `degenerate` names those equal on every row."""

    markers: dict[str, MarkerSummary] = Field(default_factory=dict)
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
        lines = [head] + [summary.line() for summary in self.markers.values()]
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


def metric_summary(rows: Any, name: str, *, pass_threshold: float = PASS_THRESHOLD, draws: int = DEFAULT_DRAWS,
                   seed: int = DEFAULT_SEED) -> MarkerSummary:
    """`name` (a marker on row["markers"], or "pass@1") over tasks: mean and its 95% bootstrap interval."""
    side = read_side(rows, what="metric_summary", pass_threshold=pass_threshold)
    if name != PASS_AT_1 and name not in side.markers:
        carried = ", ".join(sorted(side.markers)) or "none"
        raise ConfigError(f"metric_summary: no row carries {name!r} (markers on these rows: {carried}). Fix: pass "
                          "one of those, or \"pass@1\"")
    return summarise_column(name, side.values(name), side.table.task_of_row, side.n_tasks, draws=draws, seed=seed)


def marker_summary(rows: Any, *, pass_threshold: float = PASS_THRESHOLD, draws: int = DEFAULT_DRAWS,
                   seed: int = DEFAULT_SEED) -> MarkerSummaryReport:
    """Every marker on row["markers"]: mean over tasks with a 95% bootstrap interval; degenerate ones named."""
    side = read_side(rows, what="marker_summary", pass_threshold=pass_threshold)
    report = MarkerSummaryReport(n_rows=side.table.n_rows, n_tasks=side.n_tasks)
    columns = {name: side.values(name) for name in sorted(side.markers)}
    summaries = summarise_columns(columns, side.table.task_of_row, side.n_tasks, draws=draws, seed=seed)
    report.markers = {summary.name: summary for summary in summaries}
    report.degenerate = [name for name, summary in report.markers.items() if summary.degenerate]
    if report.degenerate:
        report.warnings.append(
            f"{len(report.degenerate)} markers came out the same on every row ({', '.join(report.degenerate)}): "
            "a rule that matches nothing looks exactly like a behaviour that never happened; check that it can fire")
    if not report.markers:
        report.notes.append("no row carries row['markers']; stamp them from a grader or a marker family first")
    return report
