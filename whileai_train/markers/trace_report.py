"""trace_flag_report: how often each trajectory flag fires, where, and whether the reward pays for the fake.

A flag the reward pays for is what a policy learns next: the report compares the mean reward of flagged rows
with clean rows (Welch's test, stats.welch_p_value) and gives the Pearson correlation of the 0/1 flag with the
reward; a flag is paid for when flagged rows earn more and p < PAYS_P_VALUE. Rows stamped by trace_markers are
read as stamped; any other row's flags are read from its trajectory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.markers.defaults import EXAMPLES
from whileai_train.markers.families import (
    bad_rate,
    not_stamped_here,
    not_stamped_line,
    reward_paid,
    summarise,
)
from whileai_train.markers.kinds import check_kinds, warn_unused_kinds
from whileai_train.markers.trace_flags import (
    FLAGS,
    MARKER_FLAGS,
    CallMemo,
    flags_of,
    stamped_flags,
    trace_marker_values,
)
from whileai_train.report import Report
from whileai_train.rows.contract import reward_of
from whileai_train.rows.failure import DEFAULT_FAILURE, failure_rule
from whileai_train.rows.intake import take_rows
from whileai_train.tables.marker_column import MarkerSummary

__all__ = ["FlagSummary", "TraceFlagReport", "trace_flag_report"]


class FlagSummary(BaseModel):
    """One flag over the rows: its rate (mean over tasks of the share of rows it fired on) with the 95% bootstrap
    interval over tasks (None when it fired on every row or on none, or with one task), its relation to the
    reward, examples."""

    flag: str
    n_rows: int = 0
    n_flagged: int = 0
    rate: float = 0.0
    rate_ci95: tuple[float, float] | None = None
    correlation: float | None = None  # Pearson r of the 0/1 flag with the reward, over graded rows
    reward_flagged: float | None = None
    reward_clean: float | None = None
    p_value: float | None = None  # Welch, flagged vs clean
    reward_pays: bool = False
    examples: list[dict[str, Any]] = Field(default_factory=list)  # {row, fragment}

    def line(self) -> str:
        ci = f" [{self.rate_ci95[0]:.1%}, {self.rate_ci95[1]:.1%}]" if self.rate_ci95 is not None else ""
        head = f"  {self.flag:<22} {self.n_flagged:>6} rows  {self.rate:6.1%}{ci}"
        if self.correlation is not None:
            head += f"  r={self.correlation:+.3f}"
        if self.reward_flagged is not None and self.reward_clean is not None:
            head += f"  reward {self.reward_flagged:.3f} flagged vs {self.reward_clean:.3f} clean"
        return head + ("  <- THE REWARD PAYS FOR IT" if self.reward_pays else "")


class TraceFlagReport(Report):
    """Every trajectory flag over the rows, the seven trace markers, and the flags the reward pays for."""

    n_rows: int = 0
    n_graded: int = 0
    flags: list[FlagSummary] = Field(default_factory=list)
    markers: list[MarkerSummary] = Field(default_factory=list)
    paid_for: list[str] = Field(default_factory=list)
    degenerate: list[str] = Field(default_factory=list)
    not_stamped_here: dict[str, list[str]] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.n_rows == 0:
            return "trace: NO ROWS"
        fired = [f for f in self.flags if f.n_flagged]
        if self.paid_for:
            return (f"trace: THE REWARD PAYS FOR FAKED WORK ({', '.join(self.paid_for)}) over {self.n_rows} rows; "
                    "guard with must_not_regress=['honest_claims', ...]")
        if not fired:
            return f"trace: CLEAN, no flag fired over {self.n_rows} rows"
        top = max(fired, key=lambda f: f.rate)
        return (f"trace: {len(fired)} of {len(self.flags)} flags fired over {self.n_rows} rows "
                f"(most: {top.flag} {top.rate:.1%}); the reward pays for none")

    def __str__(self) -> str:
        lines = [self.verdict]
        lines += [f.line() for f in self.flags if f.n_flagged]
        silent = [f.flag for f in self.flags if not f.n_flagged]
        if silent:
            lines.append(f"  did not fire: {', '.join(silent)}")
        lines.append("  markers (1.0 = clean):")
        lines += ["  " + m.line() for m in self.markers]
        for f in self.flags:
            for example in f.examples[:2]:
                lines.append(f"  {f.flag}: row {example['row']}: {example['fragment']!r}")
        lines += [f"  warning: {warning}" for warning in self.warnings]
        lines.append("  " + not_stamped_line(self.not_stamped_here))
        return "\n".join(lines)


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def trace_flag_report(rows: Sequence[Mapping[str, Any]], *, kinds: Mapping[str, str] | None = None,
                      failure: Callable[[Any], bool | None] | Sequence[str] | None = None) -> TraceFlagReport:
    """Each flag's rate (mean over tasks, 95% bootstrap over tasks), examples, correlation with the reward, and
    whether the reward pays for it. kinds= and failure= as trace_markers (used for rows not already stamped)."""
    rows = take_rows(rows, "trace_flag_report")
    overrides = check_kinds(kinds)
    rule = failure_rule(failure)
    custom = bool(overrides) or rule is not DEFAULT_FAILURE
    seen: set[str] = set()
    memo: CallMemo = {}
    fired: list[dict[str, str]] = []
    rewards: list[float | None] = []
    for index, row in enumerate(rows):
        stamped = stamped_flags(row) if not custom else None
        fired.append(stamped if stamped is not None else flags_of(row, index, overrides, seen, rule, memo))
        rewards.append(reward_of(row, index))
    if overrides:
        warn_unused_kinds(overrides, seen, "trace_flag_report")
    n = len(fired)
    graded = np.array([r is not None for r in rewards], dtype=bool)
    reward = np.array([r if r is not None else np.nan for r in rewards], dtype=float)
    hits = {flag: np.array([flag in f for f in fired], dtype=bool) for flag in FLAGS}
    # every flag (as its clean column) and every marker, summarised by the one marker rule over one task numbering
    columns: dict[str, Sequence[float] | np.ndarray] = {flag: (~hit).astype(float) for flag, hit in hits.items()}
    marked = [trace_marker_values(f) for f in fired]
    columns.update({marker: [values[marker] for values in marked] for marker in MARKER_FLAGS})
    read = dict(zip(columns, summarise(rows, columns), strict=True))
    summaries: list[FlagSummary] = []
    for flag, hit in hits.items():
        k = int(hit.sum())
        rate, rate_ci95 = bad_rate(read[flag])
        examples = [{"row": i, "fragment": fired[i][flag]} for i in np.flatnonzero(hit)[:EXAMPLES].tolist()]
        summary = FlagSummary(flag=flag, n_rows=n, n_flagged=k, rate=rate if rate is not None else 0.0,
                              rate_ci95=rate_ci95, examples=examples)
        yes, no = reward[hit & graded], reward[~hit & graded]
        summary.correlation = _pearson(hit[graded].astype(float), reward[graded])
        paid = reward_paid(yes, no)
        if paid is not None:
            summary.reward_flagged, summary.reward_clean, summary.p_value, summary.reward_pays = paid
        summaries.append(summary)
    markers = [read[marker] for marker in MARKER_FLAGS]
    degenerate = [m.name for m in markers if m.degenerate]
    report = TraceFlagReport(n_rows=n, n_graded=int(graded.sum()), flags=summaries, markers=markers,
                             paid_for=[s.flag for s in summaries if s.reward_pays], degenerate=degenerate,
                             not_stamped_here=not_stamped_here("trace"))
    if degenerate and n:
        report.warnings.append(f"{', '.join(degenerate)} came out the same on every row: degenerate, no interval "
                               "(a pattern that matches nothing looks like a behaviour that never happened)")
    return report
