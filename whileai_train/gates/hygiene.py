"""Data hygiene reports beside hack_scan: pooled correlations, duplicate rollouts, near-duplicate asks, length.

* :func:`reward_correlations`: the older pooled check, reward against reply length, tool calls and turns,
  flagged at HACK_THRESHOLD (0.3). Pooled over all rows (not within ask), so it mixes easy and hard asks; the
  within-ask answer is hack_scan's.
* :func:`dedupe_groups`: rollouts that repeat a trajectory within their ask (the same trajectory twice adds
  nothing to a group-relative advantage).
* :func:`near_duplicate_prompts`: asks of different tasks that read almost the same (gates/near_duplicates.py,
  re-exported here).
* :func:`length_report`: how reply length spreads, overall and by pass/fail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.errors import InputError, RowError
from whileai_train.gates.defaults import (
    HACK_THRESHOLD,
    LENGTH_BIAS_RATIO,
    SHOW,
)
from whileai_train.gates.features import vector_dot
from whileai_train.gates.near_duplicates import (
    NearDuplicateGroup,
    NearDuplicatePair,
    NearDuplicateReport,
    near_duplicate_prompts,
)
from whileai_train.report import Report
from whileai_train.rows.contract import reward_of, reward_range_error, task_key
from whileai_train.rows.intake import take_rows
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.trajectories import read_sizes, trajectory_key

__all__ = [
    "CorrelationsReport",
    "DedupeReport",
    "DuplicateGroup",
    "LengthReport",
    "LengthStats",
    "NearDuplicateGroup",
    "NearDuplicatePair",
    "NearDuplicateReport",
    "correlations_from",
    "dedupe_groups",
    "length_report",
    "length_report_from",
    "near_duplicate_prompts",
    "reward_correlations",
]


def _rows(rows: Any, who: str) -> Sequence[Mapping[str, Any]]:
    rows = take_rows(rows, who, graded=who != "dedupe_groups")
    if len(rows) == 0:
        raise InputError(f"{who} got no rows. Fix: pass the rollout rows to check")
    for index, row in enumerate(rows):
        if row.__class__ is not dict and not isinstance(row, Mapping):
            raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
    return rows


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r; None when either side is constant (undefined)."""
    xc, yc = x - x.mean(), y - y.mean()
    denominator = math.sqrt(vector_dot(xc, xc) * vector_dot(yc, yc))
    if denominator <= 1e-12 * max(1.0, float(np.abs(x).max()) * float(np.abs(y).max())):
        return None
    return vector_dot(xc, yc) / denominator


# ---------------------------------------------------------------------------------------------- correlations


class CorrelationsReport(Report):
    """Pooled Pearson correlation of reward with reply length, tool calls and turns."""

    correlations: dict[str, float | None]
    flagged: list[str] = Field(default_factory=list)
    threshold: float = HACK_THRESHOLD
    n_rows: int = 0
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        if self.flagged:
            head = "FLAGGED: reward correlates with " + ", ".join(
                f"{name} (r {self.correlations[name]:+.2f})" for name in self.flagged) + \
                f" at |r| >= {self.threshold}"
        else:
            head = f"OK: no pooled correlation of reward reaches |r| {self.threshold}"
        lines = [head, f"  rows {self.n_rows}: " + ", ".join(
            f"{name} {'n/a' if value is None else f'{value:+.3f}'}" for name, value in self.correlations.items())]
        lines.extend(f"  warning: {text}" for text in self.warnings)
        if self.flagged:
            lines.append("  do: run hack_scan(rows, endorsed=[...]) to see, within ask, whether the reward pays "
                         "for this or for the work it comes with")
        return "\n".join(lines)


def reward_correlations(rows: Sequence[Mapping[str, Any]], *, threshold: float = HACK_THRESHOLD) -> CorrelationsReport:
    """Pearson r of reward with reply length (characters of the agent's text), tool calls and turns, pooled."""
    rows = _rows(rows, "reward_correlations")
    rewards = np.fromiter((np.nan if (reward := reward_of(row, index)) is None else reward
                           for index, row in enumerate(rows)), dtype=np.float64, count=len(rows))
    graded = np.flatnonzero(~np.isnan(rewards))
    graded_rows = rows if len(graded) == len(rows) else [rows[i] for i in graded.tolist()]
    return correlations_from(read_sizes(graded_rows), rewards[graded], len(rows), threshold=threshold)


def correlations_from(sizes: tuple[np.ndarray, np.ndarray, np.ndarray], rewards: np.ndarray, n_rows: int, *,
                      threshold: float = HACK_THRESHOLD) -> CorrelationsReport:
    """reward_correlations from the graded rows' read_sizes (reply length, tool calls, turns) and rewards
    (`n_rows`: all rows given, graded or not), for a caller that has read them already."""
    warnings = []
    if len(rewards) < n_rows:
        warnings.append(f"{n_rows - len(rewards)} rows have no reward and were left out")
    if len(rewards) < 3:
        raise InputError(f"reward_correlations needs at least 3 graded rows, got {len(rewards)}. "
                         "Fix: grade the rows first (each needs a numeric `reward`)")
    y = np.asarray(rewards, dtype=np.float64)
    names = ("reply_length", "tool_calls", "turns")
    correlations = {name: _pearson(np.asarray(x, dtype=np.float64), y) for x, name in zip(sizes, names)}
    if all(value is None for value in correlations.values()) or float(y.std()) == 0.0:
        warnings.append("the reward is constant (or nothing varies), so no correlation is defined")
    flagged = [name for name, value in correlations.items() if value is not None and abs(value) >= threshold]
    return CorrelationsReport(correlations=correlations, flagged=flagged, threshold=threshold, n_rows=len(rewards),
                              warnings=warnings)


# ---------------------------------------------------------------------------------------------- duplicates


class DuplicateGroup(BaseModel):
    """Rows of one ask that took the same trajectory; the first is kept."""

    ask: str
    rows: list[int]
    rewards_differ: bool = False


class DedupeReport(Report):
    """Duplicate rollouts within an ask: which rows repeat a trajectory, and which to drop."""

    n_rows: int
    n_duplicates: int
    groups: list[DuplicateGroup] = Field(default_factory=list)
    drop: list[int] = Field(default_factory=list)
    n_inconsistent: int = 0

    def __str__(self) -> str:
        if not self.n_duplicates:
            return f"OK: no rollout repeats a trajectory within its ask ({self.n_rows} rows)"
        lines = [(f"DUPLICATES: {self.n_duplicates} of {self.n_rows} rows repeat a trajectory within their ask "
                  f"({len(self.groups)} groups)")]
        for group in self.groups[:SHOW]:
            lines.append(f"  ask {group.ask[:60]!r}: rows {group.rows[:8]}"
                         + (" (rewards differ)" if group.rewards_differ else ""))
        if self.n_inconsistent:
            lines.append(f"  warning: {self.n_inconsistent} groups got different rewards for the same trajectory: "
                         "the grader is not deterministic on them (check judge consistency)")
        lines.append("  do: drop the rows in `drop` (the same trajectory twice adds nothing to a group-relative "
                     "advantage; optimize(mode='rl') does this)")
        return "\n".join(lines)


def dedupe_groups(rows: Sequence[Mapping[str, Any]]) -> DedupeReport:
    """Rows of one ask (task_key) with the same trajectory (agent texts, tool calls and their arguments)."""
    rows = _rows(rows, "dedupe_groups")
    # keyed by the key's hash: an int per row holds nothing the garbage collector has to walk, where a tuple of
    # texts and calls per row would be walked by every full collection; a hash match is checked on the full keys
    first: dict[int, int] = {}
    collided: dict[tuple[str, Any], int] = {}  # keys whose hash an earlier, different key took
    members: dict[int, list[int]] = {}
    for index, row in enumerate(rows):
        key = (task_key(row), trajectory_key(row))
        seen = first.setdefault(hash(key), index)
        if seen != index and key != (task_key(rows[seen]), trajectory_key(rows[seen])):
            seen = collided.setdefault(key, index)
        if seen != index:
            members.setdefault(seen, [seen]).append(index)
    groups = []
    drop: list[int] = []
    inconsistent = 0
    for head in sorted(members):
        indices = members[head]
        rewards = {reward_of(rows[i], i) for i in indices}
        differ = len(rewards) > 1
        inconsistent += differ
        groups.append(DuplicateGroup(ask=task_key(rows[head]), rows=indices, rewards_differ=differ))
        drop.extend(indices[1:])
    return DedupeReport(n_rows=len(rows), n_duplicates=len(drop), groups=groups, drop=sorted(drop),
                        n_inconsistent=inconsistent)


# ---------------------------------------------------------------------------------------------- length


class LengthStats(BaseModel):
    """Reply length (characters of the agent's text) over a set of rows."""

    n: int
    mean: float
    std: float
    p10: float
    median: float
    p90: float
    max: float


class LengthReport(Report):
    """How reply length spreads, overall and by pass/fail (reward >= 0.5 passes)."""

    overall: LengthStats
    passed: LengthStats | None = None
    failed: LengthStats | None = None
    ratio_pass_fail: float | None = None
    spread: float | None = None
    flagged: bool = False
    n_ungraded: int = 0
    n_truncated: int = 0
    unit: str = "characters"
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        ratio = "n/a" if self.ratio_pass_fail is None else f"{self.ratio_pass_fail:.2f}x"
        if self.flagged:
            head = (f"LENGTH BIAS: passing replies are {ratio} as long as failing ones "
                    f"(mean {self.passed.mean:.0f} vs {self.failed.mean:.0f} {self.unit})")  # type: ignore[union-attr]
        elif self.ratio_pass_fail is None:
            head = f"LENGTH: mean {self.overall.mean:.0f} {self.unit}; no pass/fail split (one outcome only)"
        else:
            head = f"OK: passing and failing replies are alike in length ({ratio})"
        o = self.overall
        lines = [head, f"  {o.n} rows: mean {o.mean:.0f}, sd {o.std:.0f}, p10 {o.p10:.0f}, median {o.median:.0f}, "
                       f"p90 {o.p90:.0f}, max {o.max:.0f} {self.unit}"
                 + (f"; p90/p10 {self.spread:.1f}" if self.spread is not None else "")]
        for name, stats in (("pass", self.passed), ("fail", self.failed)):
            if stats is not None:
                lines.append(f"  {name}: {stats.n} rows, mean {stats.mean:.0f}, median {stats.median:.0f}, "
                             f"p90 {stats.p90:.0f}")
        lines.extend(f"  warning: {text}" for text in self.warnings)
        if self.flagged:
            lines.append("  do: check the judge for length bias (judge_trust's length flags, hack_scan's `length`)")
        return "\n".join(lines)


def _stats(values: np.ndarray) -> LengthStats:
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return LengthStats(n=len(values), mean=float(values.mean()), std=float(values.std()), p10=float(p10),
                       median=float(median), p90=float(p90), max=float(values.max()))


def length_report(rows: Sequence[Mapping[str, Any]]) -> LengthReport:
    """Reply length overall and by outcome; rewards must lie in [0, 1] to split pass (>= 0.5) from fail."""
    rows = _rows(rows, "length_report")
    rewards = np.full(len(rows), np.nan)
    outside: list[int] = []
    for index, row in enumerate(rows):
        reward = reward_of(row, index)
        if reward is not None:
            if not 0.0 <= reward <= 1.0:
                outside.append(index)
            rewards[index] = reward
    if outside:
        first = outside[0]
        raise reward_range_error(first, rows[first].get("reward"), f"{len(outside)} rows: "
                                 f"{', '.join(map(str, outside[:5]))}{', ...' if len(outside) > 5 else ''}")
    return length_report_from(read_sizes(rows)[0], rewards, sum(map(_truncated, rows)))


def _truncated(row: Mapping[str, Any]) -> bool:
    return row.get("finish_reason") == "length" or row.get("truncated") is True


def length_report_from(lengths: np.ndarray, rewards: np.ndarray, truncated: int) -> LengthReport:
    """length_report from the rows' reply lengths (characters), rewards (NaN = ungraded, the rest in [0, 1]) and
    how many were cut at the length limit, for a caller that has read and checked them already."""
    graded = np.isfinite(rewards)
    passed = graded & (rewards >= PASS_THRESHOLD)
    failed = graded & (rewards < PASS_THRESHOLD)
    report = LengthReport(overall=_stats(lengths), n_ungraded=int((~graded).sum()), n_truncated=truncated)
    if passed.any():
        report.passed = _stats(lengths[passed])
    if failed.any():
        report.failed = _stats(lengths[failed])
    if report.passed is not None and report.failed is not None and report.failed.mean > 0:
        report.ratio_pass_fail = report.passed.mean / report.failed.mean
        report.flagged = report.ratio_pass_fail >= LENGTH_BIAS_RATIO
    if report.overall.p10 > 0:
        report.spread = report.overall.p90 / report.overall.p10
    if report.n_ungraded:
        report.warnings.append(f"{report.n_ungraded} rows have no reward: counted overall, not by outcome")
    if truncated:
        report.warnings.append(f"{truncated} rows were cut at the length limit (finish_reason length): their length "
                               "is the budget, not the reply's")
    return report
