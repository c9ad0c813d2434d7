"""pass_at: pass@1 with a 95% interval over tasks, and pass^k / pass@k with theirs, over the k-eligible groups.

A task is `task_key(row)` (the scenario, not the prompt string), so repeats and rephrasings count once.
pass@1 is the mean over tasks of each task's pass rate; its interval is the percentile bootstrap over tasks.
pass@k (some of k tries pass) uses the unbiased estimator of Chen et al. 2021, 1 - C(n-c,k)/C(n,k);
pass^k (all k tries pass, Yao et al. 2024, tau-bench) uses C(c,k)/C(n,k); both are averaged over the groups
with at least k graded repeats and bootstrapped over those groups.

A task whose rows a selector kept by their outcome (its calibration stamp carries `selected_by`, as
optimize writes it) is not k-eligible: optimize keeps only mixed groups, so pass^k and pass@k over them are
fixed by the selection (0 and 1 on whole groups), not measured. They read n/a, and the note says where the
graded measurement is (the stamp: pass_rate over n, the repeats the grader saw).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError, InputError
from whileai_train.measure.defaults import CONFIG_KEYS, CONFIG_SAMPLE_ROWS
from whileai_train.report import Report
from whileai_train.rows.contract import carried_stamp
from whileai_train.stats import DEFAULT_DRAWS, DEFAULT_SEED
from whileai_train.stats.bootstrap import bootstrap_mean_cis
from whileai_train.tables.calibration import selected_by
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.graded import Graded, graded_table, name_rows

__all__ = ["PassAtReport", "config_pair", "most_common_k", "pass_at", "pass_at_k_estimate", "pass_pow_k_estimate",
           "run_config"]


class PassAtReport(Report):
    """pass@1 over tasks with `ci95`; pass^k and pass@k with their own intervals; what produced the rows."""

    pass_at_1: float | None = None
    ci95: tuple[float, float] | None = None
    k: int | None = None
    pass_pow_k: float | None = None
    pass_pow_k_ci95: tuple[float, float] | None = None
    pass_at_k: float | None = None
    pass_at_k_ci95: tuple[float, float] | None = None
    n_tasks: int = 0
    n_rows: int = 0
    n_graded: int = 0
    n_k_eligible: int = 0
    n_selected_tasks: int = 0  # tasks whose stamps say a selector kept them by outcome (not k-eligible)
    selected_by: str | None = None  # that selector, as its stamps name it
    repeats_per_task: dict[int, int] = Field(default_factory=dict)  # graded repeats -> number of tasks
    mean_reward: float | None = None
    pass_threshold: float = PASS_THRESHOLD
    config: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        def interval(ci: tuple[float, float] | None) -> str:
            return f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""

        if self.pass_at_1 is None:
            head = f"pass_at: NOT MEASURED ({self.n_rows} rows, none graded)"
        else:
            head = (f"pass_at: pass@1 {self.pass_at_1:.3f}{interval(self.ci95)} over {self.n_tasks} tasks "
                    f"({self.n_graded} graded rows, 95% bootstrap over tasks)")
        lines = [head]
        if self.k is not None:
            if self.pass_pow_k is None and self.n_selected_tasks:
                lines.append(f"  pass^{self.k} and pass@{self.k}: n/a (a selection: {self.selected_by} kept these "
                             f"{self.n_selected_tasks} tasks by their outcome, so the numbers would be fixed by it; "
                             "print pass_at on the graded rows before optimize)")
            elif self.pass_pow_k is None:
                lines.append(f"  pass^{self.k} and pass@{self.k}: n/a (no task has {self.k} graded repeats)")
            else:
                lines.append(f"  pass^{self.k} {self.pass_pow_k:.3f}{interval(self.pass_pow_k_ci95)}   "
                             f"pass@{self.k} {self.pass_at_k:.3f}{interval(self.pass_at_k_ci95)}   "
                             f"over {self.n_k_eligible} tasks with >= {self.k} repeats")
        if self.config:
            lines.append("  produced with: " + ", ".join(f"{k}={v!r}" for k, v in self.config.items()))
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------- estimators


def _per_pair(n: np.ndarray, c: np.ndarray, k: int, one: Any) -> np.ndarray:
    n, c = np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64)
    if len(n) == 0:
        return np.zeros(0)
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    values = np.array([one(int(nn), int(cc)) for nn, cc in pairs], dtype=float)
    return values[np.asarray(inverse).reshape(-1)]


def pass_at_k_estimate(n: Sequence[int] | np.ndarray, c: Sequence[int] | np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k per group of n tries with c passes: 1 - C(n-c, k) / C(n, k) (Chen et al. 2021).

    Computed as a product, 1 - prod_{j<k} (n-c-j)/(n-j), which stays finite for large n.
    """
    def one(nn: int, cc: int) -> float:
        if nn < k:
            return math.nan
        if nn - cc < k:
            return 1.0
        return 1.0 - math.prod((nn - cc - j) / (nn - j) for j in range(k))

    return _per_pair(np.asarray(n), np.asarray(c), k, one)


def pass_pow_k_estimate(n: Sequence[int] | np.ndarray, c: Sequence[int] | np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass^k per group (all of k tries pass): C(c, k) / C(n, k) (Yao et al. 2024, tau-bench)."""
    def one(nn: int, cc: int) -> float:
        if nn < k:
            return math.nan
        if cc < k:
            return 0.0
        return math.prod((cc - j) / (nn - j) for j in range(k))

    return _per_pair(np.asarray(n), np.asarray(c), k, one)


# ------------------------------------------------------------------------------------------------ config

_CONTAINERS = ("config", "sampling", "lineage", "judge_meta")
# row key -> (report key, priority): the earlier a name in CONFIG_KEYS, the more it is trusted
_NAME_TO_KEY = {name: (key, rank) for key, names in CONFIG_KEYS.items() for rank, name in enumerate(names)}
_LOOKED_AT = frozenset(_NAME_TO_KEY) | frozenset(_CONTAINERS)


def _row_config(row: Mapping[str, Any]) -> dict[str, Any]:
    """report key -> value for one row; top-level keys win over those inside a container."""
    found: dict[str, tuple[int, Any]] = {}
    hits = row.keys() & _LOOKED_AT
    if not hits:
        return {}
    for level, source in enumerate([row] + [row[c] for c in _CONTAINERS if c in hits and isinstance(row[c], Mapping)]):
        names = hits if level == 0 else source.keys() & _NAME_TO_KEY.keys()
        for name in names:
            if name in _CONTAINERS and level == 0:
                continue
            value = source[name]
            if value is None:
                continue
            key, rank = _NAME_TO_KEY[name]
            priority = level * 100 + rank
            if key not in found or priority < found[key][0]:
                found[key] = (priority, value)
    return {key: value for key, (_, value) in found.items()}


def _hashable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def run_config(rows: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """What the rows were produced with (temperature, reply budget, policy and judge versions) and warnings.

    Above CONFIG_SAMPLE_ROWS rows an even stride of them is read (mixed runs come in blocks, which a
    stride still sees). A setting with one value reads as that value; one with several reads as the sorted list of them, with a
    warning, because a pass rate over mixed settings describes none of them.
    """
    seen: dict[str, Counter[Any]] = {key: Counter() for key in CONFIG_KEYS}
    step = max(1, math.ceil(len(rows) / CONFIG_SAMPLE_ROWS))
    sample = rows if step == 1 else rows[::step]
    for row in sample:
        for key, value in _row_config(row).items():
            seen[key][_hashable(value)] += 1
    config: dict[str, Any] = {}
    warnings: list[str] = []
    for key, counts in seen.items():
        if not counts:
            continue
        values = sorted(counts, key=lambda v: (type(v).__name__, v))
        if len(values) == 1:
            config[key] = values[0]
        else:
            config[key] = values
            shown = ", ".join(f"{v!r} ({counts[v]} rows)" for v in values[:5])
            of = f" (every {step}th row read)" if step > 1 else ""
            warnings.append(f"rows were produced with {len(values)} different {key} values: {shown}{of}; "
                            f"a pass rate over mixed settings describes none of them, so split the rows by {key}")
    return config, warnings


# --------------------------------------------------------------------------------------------- the report


def config_pair(before_rows: Sequence[Mapping[str, Any]], after_rows: Sequence[Mapping[str, Any]], noun: str
                ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Each side's run_config and the warnings: each side's own, then one per setting the two `noun` ("runs",
    "sides") were produced with differently."""
    config_b, warnings_b = run_config(before_rows)
    config_a, warnings_a = run_config(after_rows)
    warnings = [f"before: {w}" for w in warnings_b] + [f"after: {w}" for w in warnings_a]
    for key in sorted(config_b.keys() | config_a.keys()):
        value_b, value_a = config_b.get(key), config_a.get(key)
        if value_b is not None and value_a is not None and value_b != value_a:
            warnings.append(f"the {noun} were produced with different {key} ({value_b!r} before, {value_a!r} "
                            "after): the delta mixes that change with the one you meant to measure")
    return config_b, config_a, warnings


def _selected_tasks(table: Graded) -> tuple[np.ndarray, str | None]:
    """Per task: whether its carried stamps say a selector kept it by outcome; the first selector named."""
    selected = np.zeros(table.n_tasks, dtype=bool)
    first: str | None = None
    for i in np.flatnonzero(table.carries).tolist():
        by = selected_by(table.rows[i])
        if by is not None:
            selected[table.task_of_row[i]] = True
            first = first or by
    return selected, first


def _stamp_k(table: Graded) -> int | None:
    """The most common `n` of carried calibration stamps (the repeats the grader saw), or None."""
    counts: Counter[int] = Counter()
    for i in np.flatnonzero(table.carries).tolist():
        stamp = carried_stamp(table.rows[i])
        n = stamp.get("n") if isinstance(stamp, Mapping) else getattr(stamp, "n", None)
        if type(n) is int and n >= 1:
            counts[n] += 1
    return most_common_k(counts)


def most_common_k(counts: Counter[int]) -> int | None:
    """The most common k (ties: the smaller), or None with no stamp."""
    return max(counts, key=lambda v: (counts[v], -v)) if counts else None


def pass_at(rows: Any, *, k: int | None = None, pass_threshold: float = PASS_THRESHOLD,
            draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> PassAtReport:
    """pass@1 (mean over tasks of each task's pass rate) with `ci95`, and pass^k / pass@k with theirs.

    `rows`: a list of dicts, a JSONL path or a datasets.Dataset. A row passes when its reward is at least
    `pass_threshold`. `k` defaults to the `n` of carried calibration stamps (the repeats the grader saw),
    else the most common number of graded repeats per task; groups with fewer graded repeats than k are
    not k-eligible, and with none eligible pass^k and pass@k read n/a. Ungraded rows are skipped with a
    warning naming them; no graded row at all raises InputError, a reward outside [0, 1] RowError.
    Intervals: `stats.bootstrap_mean_ci` over per-task values in sorted task_key order, seeded.
    """
    table = graded_table(rows, pass_threshold=pass_threshold, what="pass_at")
    rows = table.rows
    return pass_at_from_table(table, rows, k=k, draws=draws, seed=seed, pass_threshold=pass_threshold,
                              stamp_k=_stamp_k(table) if k is None else None)


def pass_at_from_table(table: Graded, rows: Sequence[Mapping[str, Any]], *, k: int | None, draws: int,
                       seed: int, pass_threshold: float = PASS_THRESHOLD,
                       stamp_k: int | None = None) -> PassAtReport:
    """pass_at over an already-read table (publish_gate reads rows once and shares the table)."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ConfigError(f"pass_at: k={k!r}; k is the number of tries, an integer >= 1. Fix: pass k=8 or leave "
                          "it unset to use the repeats the rows were graded with")
    config, config_warnings = run_config(rows)
    report = PassAtReport(n_rows=table.n_rows, n_graded=int(table.graded.sum()), pass_threshold=pass_threshold,
                          config=config, warnings=config_warnings)
    ungraded = table.ungraded_rows()
    if len(ungraded) == table.n_rows:
        raise InputError(f"pass_at: none of the {table.n_rows} rows has a reward ({name_rows(ungraded)}). "
                         "Fix: grade the rows first (reward 0..1 on each row)")
    if len(ungraded):
        report.warnings.append(f"{len(ungraded)} ungraded rows skipped ({name_rows(ungraded)}); "
                               "grade them or drop them")
    tasks = table.graded_tasks
    n, c = table.n_graded[tasks], table.n_passed[tasks]
    rates = c / n
    report.n_tasks = len(tasks)
    report.pass_at_1 = float(rates.mean())
    report.mean_reward = float(np.nanmean(table.rewards))
    report.repeats_per_task = {int(size): int(count) for size, count in sorted(Counter(n.tolist()).items())}
    if len(tasks) == 1:
        report.notes.append("one task: no interval (an interval over tasks needs two or more); evaluate more tasks")
    if k is None:
        if stamp_k is not None:
            k = stamp_k
            report.notes.append(f"k={k} from the carried calibration stamps (the repeats the grader saw)")
        else:
            k = max(report.repeats_per_task, key=lambda v: (report.repeats_per_task[v], -v))
        if k < 2:
            report.notes.append("most tasks have one graded rollout: pass^k and pass@k need repeats of each task "
                                "(or pass k=)")
            report.ci95 = bootstrap_mean_cis([rates], draws=draws, seed=seed)[0]
            return report
    report.k = k
    selected, report.selected_by = _selected_tasks(table)
    selected = selected[tasks]
    report.n_selected_tasks = int(selected.sum())
    eligible = (n >= k) & ~selected
    report.n_k_eligible = int(eligible.sum())
    if report.n_k_eligible < len(tasks):
        report.ci95 = bootstrap_mean_cis([rates], draws=draws, seed=seed)[0]
    if report.n_selected_tasks:
        report.notes.append(
            f"{report.n_selected_tasks} tasks left out of pass^{k} / pass@{k}: their calibration stamps say "
            f"{report.selected_by} kept them by outcome; each stamp keeps the graded per-task measurement "
            "(pass_rate over n, the repeats the grader saw)")
    if report.n_k_eligible == 0 and report.n_selected_tasks:
        return report
    if report.n_k_eligible == 0:
        report.notes.append(f"pass^{k} and pass@{k} n/a: no task has {k} graded repeats here (largest group "
                            f"{int(n.max())}); a pruned selection shrinks groups, so print pass_at before optimize")
        return report
    pow_k = pass_pow_k_estimate(n[eligible], c[eligible], k)
    at_k = pass_at_k_estimate(n[eligible], c[eligible], k)
    report.pass_pow_k, report.pass_at_k = float(pow_k.mean()), float(at_k.mean())
    if report.n_k_eligible == len(tasks):  # one set of draws for all three (same tasks, same intervals)
        report.ci95, report.pass_pow_k_ci95, report.pass_at_k_ci95 = bootstrap_mean_cis(
            [rates, pow_k, at_k], draws=draws, seed=seed)
    else:
        report.pass_pow_k_ci95, report.pass_at_k_ci95 = bootstrap_mean_cis([pow_k, at_k], draws=draws, seed=seed)
    left_out = len(tasks) - report.n_k_eligible - report.n_selected_tasks
    if left_out:
        report.notes.append(f"{left_out} of {len(tasks)} tasks have fewer than {k} graded repeats and are not in "
                            f"pass^{k} / pass@{k}")
    return report
