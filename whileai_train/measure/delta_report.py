"""delta_report: did training move what it was meant to move, by more than the eval's own noise, and did it
break anything it must not break?

compare_runs' statistics on pass@1 and on every marker both sides carry, paired by task_key: per metric the
delta (after - before, mean over paired tasks of each task's value), its 95% bootstrap interval over tasks and
a sign-flip p-value (stats.paired_comparisons: one set of draws for all metrics over one task set). The verdict
word of a metric:

    interval covers 0                      no_change_detected
    interval excludes 0, no re-run noise   moved_unreplicated / regressed_unreplicated  (a change seen once)
    ... and |delta| <= the re-run band     within_eval_noise
    ... and |delta| >  the re-run band     moved / regressed

The re-run band is q * run_std * sqrt(1/r_before + 1/r_after): run_std from eval_variance (or run_std=), r the
number of evaluations on each side (lineage.eval_run stamps; 1 without), q the t quantile at the run_std's
degrees of freedom (run_std_runs - 1, or r_before + r_after - 2 from stamped repeats), 1.96 for a bare run_std=.
The headline (format_delta_report's first word): NOT COMPARABLE when the arms cannot be compared, FAIL when the
target or a must_not_regress name regressed, PASS for moved / moved_unreplicated, else NO DIFFERENCE.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from whileai_train.errors import ConfigError, InputError
from whileai_train.measure.defaults import (
    CEILING_PASS_RATE,
    LOW_PAIRED_SHARE,
    MIN_PAIRED_TASKS,
    MIN_ROOM_TASKS,
    TARGET,
)
from whileai_train.measure.delta_reading import (
    DROPS,
    GAINS,
    DeltaReport,
    MetricDelta,
    interval_text,
    verdict_word,
)
from whileai_train.measure.eval_variance import EvalVarianceReport
from whileai_train.measure.pass_at import config_pair, most_common_k
from whileai_train.measure.sides import PASS_AT_1, GroupBy, Side, read_side
from whileai_train.progress import progress_call
from whileai_train.rows.contract import task_key
from whileai_train.rows.intake import take_rows
from whileai_train.stats import DEFAULT_CONFIDENCE, DEFAULT_DRAWS, DEFAULT_SEED, normal_quantile, t_quantile
from whileai_train.stats.bootstrap import bootstrap_mean_cis
from whileai_train.stats.paired import SIGN_FLIP_DRAWS
from whileai_train.stats.paired_columns import sign_flip_p_values
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.graded import name_rows
from whileai_train.tables.marker_column import task_means

__all__ = ["delta_report"]

_SETTLE = ("evaluate each model three times on the same tasks, each row stamped lineage.eval_run 0, 1, 2 "
           "(wai.evaluate(model, tasks, reward_funcs, runs=3) does it; delta_report reads the re-run spread off "
           "the repeats), or pass "
           "run_std=wai.eval_variance(run_1, run_2, run_3)")


# --------------------------------------------------------------------------------------------- arguments


def _names(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, Iterable):
        raise ConfigError(f"{what}={value!r}: pass marker names, e.g. {what}=[\"honest_claims\"]")
    names = list(value)  # read once: a generator is used up by the check below
    if any(not isinstance(v, str) or not v for v in names):
        raise ConfigError(f"{what}={value!r}: pass marker names, e.g. {what}=[\"honest_claims\"]")
    return list(dict.fromkeys(names))


def _task_set(tasks: Any) -> set[str]:
    """The task keys tasks= names: rows (read by rows.take_rows: a list, a JSONL / JSON-array path, a Dataset, a
    Run's rows), or task keys as strings beside them."""
    if callable(getattr(tasks, "rows", None)):
        tasks = tasks.rows()
    if isinstance(tasks, (list, tuple, set, frozenset, Iterator)):
        listed = list(tasks)
        keys: set[str] = set()
        for item in listed:
            if isinstance(item, str):
                keys.add(item)
            elif not isinstance(item, Mapping):
                raise ConfigError(f"tasks= holds {type(item).__name__}; pass the baseline's rows, its JSONL path, "
                                  "or task keys")
        rows = [item for item in listed if not isinstance(item, str)]
        if rows:
            keys.update(task_key(row) for row in take_rows(rows, "delta_report(tasks=)"))
    else:
        keys = {task_key(row) for row in take_rows(tasks, "delta_report(tasks=)")}
    if not keys:
        raise ConfigError("tasks= names no task; pass the baseline's rows (or their task keys)")
    return keys


def _noise_args(run_std: Any, run_std_runs: Any, target: str) -> tuple[dict[str, float], int | None, str]:
    """(run_std per metric, the n_runs it came from, source) from what the caller passed."""
    if run_std is None:
        if run_std_runs is not None:
            raise ConfigError("run_std_runs= without run_std=: pass the re-run standard deviation too "
                              "(run_std=wai.eval_variance(run_1, run_2, run_3))")
        return {}, None, "none"
    if isinstance(run_std, EvalVarianceReport):
        return dict(run_std.run_std_by_metric), run_std.n_runs, "eval_variance"
    if run_std_runs is not None and (isinstance(run_std_runs, bool) or not isinstance(run_std_runs, int)
                                     or run_std_runs < 2):
        raise ConfigError(f"run_std_runs={run_std_runs!r}: the number of evaluations run_std came from, an "
                          "integer >= 2 (three or more is the floor eval_variance asks for)")
    stds = dict(run_std) if isinstance(run_std, Mapping) else {target: run_std}
    for name, value in stds.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or math.isinf(value):
            raise ConfigError(f"run_std={value!r} for {name}: a standard deviation, a finite number >= 0. "
                              "Fix: pass wai.eval_variance(run_1, run_2, run_3) or its run_std")
    return {name: float(v) for name, v in stds.items()}, run_std_runs, "run_std"


# --------------------------------------------------------------------------------------------- pairing


def _shared_tasks(b: Side, a: Side) -> tuple[list[str], np.ndarray, np.ndarray, int]:
    """Tasks with a counted graded row on both sides: keys, their numbers in b and in a, and the union size."""
    b_tasks, a_tasks = np.flatnonzero(_graded_per_task(b)), np.flatnonzero(_graded_per_task(a))
    a_number = {a.table.tasks[t]: t for t in a_tasks.tolist()}
    keys, in_b, in_a = [], [], []
    for t in b_tasks.tolist():
        other = a_number.get(b.table.tasks[t])
        if other is not None:
            keys.append(b.table.tasks[t])
            in_b.append(t)
            in_a.append(other)
    union = len(b_tasks) + len(a_tasks) - len(keys)
    return keys, np.array(in_b, dtype=np.int64), np.array(in_a, dtype=np.int64), union


def _graded_per_task(side: Side) -> np.ndarray:
    """How many counted graded rows each task of the side has."""
    return np.bincount(side.table.task_of_row[side.keep & side.table.graded], minlength=side.n_tasks)


def _n_graded_tasks(side: Side) -> int:
    return int(np.count_nonzero(_graded_per_task(side)))


def _no_shared_task(b: Side, a: Side) -> str:
    """Why two sides with no graded task in common cannot be compared, naming where each starts."""
    def first(side: Side) -> str:
        graded = np.flatnonzero(side.keep & side.table.graded)
        if not len(graded):
            return f"no graded row left among its {side.table.n_rows} rows"
        row = int(graded[0])
        return f"first task {side.table.tasks[side.table.task_of_row[row]]!r} at row {row}"

    return (f"the before and after rows share no graded task (field scenario_id, else the task_key of the prompt): "
            f"before: {first(b)}; after: {first(a)}. Fix: evaluate the after model on the baseline's tasks "
            "(wai.evaluate(model, base_tasks, ...)), or restrict both sides to them with tasks=")


def _balance(side: Side, numbers: np.ndarray, keep_counts: np.ndarray, rng: np.random.Generator) -> int:
    """Trim each paired task of `side` to `keep_counts` graded rows drawn at random; returns rows dropped."""
    position = np.full(side.n_tasks, -1, dtype=np.int64)
    position[numbers] = np.arange(len(numbers))
    row_position = position[side.table.task_of_row]
    in_paired = row_position >= 0
    side.keep &= ~(in_paired & ~side.table.graded)  # ungraded rows of paired tasks are not rollouts both have
    rows = np.flatnonzero(side.keep & in_paired)
    order = np.lexsort((rng.random(len(rows)), row_position[rows]))
    rows = rows[order]
    task_of = row_position[rows]
    rank = np.arange(len(rows)) - np.searchsorted(task_of, task_of, side="left")
    drop = rows[rank >= keep_counts[task_of]]
    side.keep[drop] = False
    return len(drop)


def _graded_counts(side: Side, numbers: np.ndarray) -> np.ndarray:
    return _graded_per_task(side)[numbers]


def _k(counts: np.ndarray) -> int | None:
    values, times = np.unique(counts, return_counts=True)
    return most_common_k({int(v): int(c) for v, c in zip(values, times)})  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------- metrics


def _paired_columns(b: Side, a: Side, name: str, in_b: np.ndarray, in_a: np.ndarray,
                    rows_b: np.ndarray | None = None, rows_a: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-task values of `name` on both sides over the shared tasks, and the mask of tasks where both have one."""
    values_b, values_a = b.values(name), a.values(name)
    if rows_b is not None:
        values_b = np.where(rows_b, values_b, np.nan)
    if rows_a is not None:
        values_a = np.where(rows_a, values_a, np.nan)
    means_b, _ = task_means(b.table.task_of_row, values_b, b.n_tasks)
    means_a, _ = task_means(a.table.task_of_row, values_a, a.n_tasks)
    column_b, column_a = means_b[in_b], means_a[in_a]
    both = ~np.isnan(column_b) & ~np.isnan(column_a)
    return column_b, column_a, both


def _run_means(side: Side, name: str, numbers: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Per eval run: the mean over the paired tasks that run graded of each task's value of `name` (over the rows
    `rows` marks, when given: one group of by=)."""
    assert side.eval_run is not None
    n_runs, n_tasks = len(side.run_labels), len(numbers)
    position = np.full(side.n_tasks, -1, dtype=np.int64)
    position[numbers] = np.arange(n_tasks)
    row_position = position[side.table.task_of_row]
    values = side.values(name)
    if rows is not None:
        values = np.where(rows, values, np.nan)
    use = (row_position >= 0) & (side.eval_run >= 0) & ~np.isnan(values)
    cell = side.eval_run[use] * n_tasks + row_position[use]
    means, counts = task_means(cell, values[use], n_runs * n_tasks)
    means = means.reshape(n_runs, n_tasks)
    with np.errstate(invalid="ignore"):
        per_run = np.nanmean(np.where(counts.reshape(n_runs, n_tasks) > 0, means, np.nan), axis=1)
    return per_run[~np.isnan(per_run)]


def _pooled_std(b: Side, a: Side, name: str, in_b: np.ndarray, in_a: np.ndarray, rows_b: np.ndarray | None = None,
                rows_a: np.ndarray | None = None) -> tuple[float, int] | None:
    """Pooled within-side standard deviation of per-run values and its degrees of freedom, from the stamps."""
    runs_b, runs_a = _run_means(b, name, in_b, rows_b), _run_means(a, name, in_a, rows_a)
    df = len(runs_b) + len(runs_a) - 2
    if df < 1:
        return None
    squares = float(((runs_b - runs_b.mean()) ** 2).sum() + ((runs_a - runs_a.mean()) ** 2).sum())
    return math.sqrt(squares / df), df


PairedColumns = tuple[np.ndarray, np.ndarray, np.ndarray]  # before per task, after per task, both carry it


def _compare(columns: dict[str, PairedColumns], groups: dict[str, PairedColumns], target: str, *, draws: int,
             seed: int, sign_draws: int
             ) -> tuple[dict[str, MetricDelta], dict[str, MetricDelta], tuple[Any, Any]]:
    """Every metric and every group's target over its paired tasks: one bootstrap per task set (metrics on the
    same tasks share draws; the target's two sides ride along for each side's interval) and one sign-flip pass
    for all of them. Returns metrics, groups and (before_ci95, after_ci95) of the target."""
    def metric(name: str, column: PairedColumns) -> MetricDelta:
        b, a, both = column
        if not both.any():
            return MetricDelta(name=name)
        return MetricDelta(name=name, before=float(b[both].mean()), after=float(a[both].mean()),
                           delta=float((a[both] - b[both]).mean()), n_paired_tasks=int(both.sum()))

    metrics = {name: metric(name, column) for name, column in columns.items()}
    by_group = {label: metric(label, column) for label, column in groups.items()}
    side_intervals: tuple[Any, Any] = (None, None)
    task_sets: dict[bytes, list[str]] = {}
    for name, (_, _, both) in columns.items():
        task_sets.setdefault(np.packbits(both).tobytes(), []).append(name)
    for names in task_sets.values():
        both = columns[names[0]][2]
        if not both.any():
            continue
        stack = [columns[name][1][both] - columns[name][0][both] for name in names]
        if target in names:
            stack += [columns[target][0][both], columns[target][1][both]]
        intervals = bootstrap_mean_cis(stack, draws=draws, seed=seed)
        for name, interval in zip(names, intervals):
            metrics[name].ci95 = interval
        if target in names:
            side_intervals = (intervals[-2], intervals[-1])
    for label, (b, a, both) in groups.items():
        if both.any():
            by_group[label].ci95 = bootstrap_mean_cis([a[both] - b[both]], draws=draws, seed=seed)[0]
    differences = [np.where(both, a - b, np.nan) for b, a, both in [*columns.values(), *groups.values()]]
    p_values = sign_flip_p_values(differences, draws=sign_draws, seed=seed)
    for result, p in zip([*metrics.values(), *by_group.values()], p_values):
        result.p_value = p
    return metrics, by_group, side_intervals


# --------------------------------------------------------------------------------------------- the report


def _by_name(by: GroupBy) -> str | None:
    if by is None:
        return None
    if isinstance(by, str):
        return by
    return getattr(by, "__name__", None) or repr(by)


@progress_call("delta_report")
def delta_report(before: Any, after: Any, *, target: str = TARGET, must_not_regress: Iterable[str] = (),
                 run_std: float | Mapping[str, float] | EvalVarianceReport | None = None,
                 run_std_runs: int | None = None, by: str | Callable[[Mapping[str, Any]], Any] | None = None,
                 tasks: Any = None, balance_rollouts: bool = False, seed: int = DEFAULT_SEED,
                 pass_threshold: float = PASS_THRESHOLD, draws: int = DEFAULT_DRAWS,
                 sign_draws: int = SIGN_FLIP_DRAWS, progress: bool | None = None) -> DeltaReport:
    """Compare `after` against `before` (row lists, JSONL paths or datasets) on pass@1 and every shared marker.

    target: the metric the training was meant to move (the headline); must_not_regress: names whose
    significant drop fails the report (a name neither side carries is a ConfigError). run_std (a number, a
    {metric: std} mapping or an eval_variance report) with run_std_runs (the evaluations it came from) sets the
    re-run band; rows stamped lineage.eval_run on both sides give it from the repeats. by: a row key, a marker
    or a callable; adds `groups` and `groups_down`. tasks: restrict both sides to these tasks (the baseline's
    rows, its path, or task keys). balance_rollouts: trim each paired task to the rows both sides have (drawn by
    `seed`). draws / sign_draws: bootstrap draws and Monte-Carlo sign flips (above 16 tasks). progress: progress
    bars over the row passes (None: when someone watches and the rows are many; False: never).
    """
    if not isinstance(target, str) or not target:
        raise ConfigError(f"target={target!r}: name the metric training was meant to move (\"pass@1\" or a marker)")
    guards = _names(must_not_regress, "must_not_regress")
    stds, std_runs, source = _noise_args(run_std, run_std_runs, target)
    b = read_side(before, what="delta_report before_rows", pass_threshold=pass_threshold, by=by)
    a = read_side(after, what="delta_report after_rows", pass_threshold=pass_threshold, by=by)
    report = DeltaReport(target=target, must_not_regress=guards, by=_by_name(by))
    for side, word in ((b, "before"), (a, "after")):
        ungraded = side.table.ungraded_rows()
        if len(ungraded) == side.table.n_rows:
            raise InputError(f"delta_report: none of the {side.table.n_rows} {word} rows has a reward "
                             f"({name_rows(ungraded)}, field 'reward'). Fix: grade the {word} rows first")
        if len(ungraded):
            report.warnings.append(f"{len(ungraded)} ungraded {word} rows skipped ({name_rows(ungraded)})")
    carried_b, carried_a = b.names() | {PASS_AT_1}, a.names() | {PASS_AT_1}
    for name, role in [(target, "target")] + [(g, "must_not_regress") for g in guards]:
        if name not in carried_b | carried_a:
            shown = ", ".join(sorted((carried_b | carried_a) - {PASS_AT_1})) or "none"
            raise ConfigError(f"delta_report: {role} {name!r} is on neither side's rows (markers carried: {shown}). "
                              f"Fix: stamp {name!r} on both sides' row['markers'], or name one they carry")
        if name not in carried_b or name not in carried_a:
            side_word = "before" if name not in carried_b else "after"
            report.not_comparable[role] = (f"{name!r} is not on the {side_word} rows, so it cannot be compared; "
                                           f"stamp it on both sides")
    shared_names = sorted((carried_b & carried_a) - {PASS_AT_1})
    one_sided = sorted(carried_b ^ carried_a)
    if one_sided:
        report.notes.append(f"on one side only, not compared: {', '.join(one_sided)}")
    if tasks is not None:
        wanted = _task_set(tasks)
        for side in (b, a):
            side.keep &= np.array([key in wanted for key in side.table.tasks], dtype=bool)[side.table.task_of_row]
        report.notes.append(f"restricted to the {len(wanted)} tasks of tasks=")
    keys, in_b, in_a, union = _shared_tasks(b, a)
    report.n_before_tasks, report.n_after_tasks = _n_graded_tasks(b), _n_graded_tasks(a)
    if not keys:  # nothing pairs: a verdict of its own (NOT COMPARABLE), not unusable input
        report.not_comparable["situations"] = _no_shared_task(b, a)
        report.headline_verdict = "NOT COMPARABLE"
        _config(report, b, a)
        return report
    report.paired_share = len(keys) / union
    if report.paired_share < LOW_PAIRED_SHARE:
        report.not_comparable["situations"] = (
            f"only {len(keys)} of {union} tasks paired (paired_share {report.paired_share:.2f}): the two arms drew "
            "different situation sets, so the delta over the few that pair is between two evals. Fix: evaluate the "
            "after model on the baseline's tasks (wai.evaluate), or pin both sides to them with tasks=, or compare "
            "per tier with wai.dataset_report on each side")
    if len(keys) < MIN_PAIRED_TASKS:
        report.not_comparable["too_few_tasks"] = (f"{len(keys)} paired tasks, under the {MIN_PAIRED_TASKS} a paired "
                                                  "comparison needs; evaluate both arms on more of the same tasks")
    counts_b, counts_a = _graded_counts(b, in_b), _graded_counts(a, in_a)
    if balance_rollouts:
        rng = np.random.default_rng(seed)
        keep_counts = np.minimum(counts_b, counts_a)
        report.balanced = {"before_rows_dropped": _balance(b, in_b, keep_counts, rng),
                           "after_rows_dropped": _balance(a, in_a, keep_counts, rng),
                           "tasks_trimmed": int(np.count_nonzero(counts_b != counts_a))}
        counts_b, counts_a = _graded_counts(b, in_b), _graded_counts(a, in_a)
    report.k_before, report.k_after = _k(counts_b), _k(counts_a)
    if report.k_before != report.k_after:
        report.warnings.append(
            f"unequal rollouts per task: before at k={report.k_before}, after at k={report.k_after} (most common per "
            "paired task). Rows lost at random only widen the interval; rows lost for a reason (timeouts on the hard "
            "tasks) bias the delta, which only re-running the short arm on its short tasks fixes; "
            "balance_rollouts=True gives both one k")
    names = [PASS_AT_1] + shared_names
    columns = {name: _paired_columns(b, a, name, in_b, in_a) for name in names}
    group_columns = _group_columns(report, b, a, in_b, in_a) if by is not None else {}
    report.metrics, report.groups, (report.before_ci95, report.after_ci95) = _compare(
        columns, group_columns, target, draws=draws, seed=seed, sign_draws=sign_draws)
    _apply_noise(report, b, a, stds, std_runs, source, in_b, in_a)
    replicated = report.eval_runs_before > 1 and report.eval_runs_after > 1
    for metric in report.metrics.values():
        metric.verdict = verdict_word(metric.ci95, metric.delta, metric.band, replicated)
    _headline(report, columns)
    if by is not None:
        _groups_down(report, b, a, in_b, in_a)
    _config(report, b, a)
    return report


def _apply_noise(report: DeltaReport, b: Side, a: Side, stds: dict[str, float], std_runs: int | None, source: str,
                 in_b: np.ndarray, in_a: np.ndarray) -> None:
    """Set each metric's run_std and re-run band from the caller's run_std or the lineage.eval_run repeats."""
    report.eval_runs_before = len(b.run_labels) if b.eval_run is not None else 1
    report.eval_runs_after = len(a.run_labels) if a.eval_run is not None else 1
    scale = math.sqrt(1.0 / report.eval_runs_before + 1.0 / report.eval_runs_after)
    tail = 0.5 + DEFAULT_CONFIDENCE / 2
    if source != "none":
        report.run_std_source = source  # type: ignore[assignment]
        report.run_std_runs = std_runs
        if std_runs is None:
            quantile = normal_quantile(tail)
            report.warnings.append(
                f"run_std= without run_std_runs=: the re-run band reads the floor as exact ({quantile:.2f}); a floor "
                "from three re-runs is an estimate, and that band lets about one pure-noise delta in five through. "
                "Fix: pass run_std_runs= (the number of evaluations run_std came from)")
        else:
            quantile = t_quantile(tail, std_runs - 1)
        report.band_quantile = quantile
        unknown = sorted(set(stds) - set(report.metrics))
        if unknown:
            report.notes.append(f"run_std given for metrics not compared here: {', '.join(unknown)}")
        for name, std in stds.items():
            if name in report.metrics:
                metric = report.metrics[name]
                metric.run_std, metric.band = std, quantile * std * scale
        if report.target in stds:
            report.run_std = stds[report.target]
        elif report.target in report.metrics:
            report.notes.append(f"run_std= has no value for the target {report.target!r}: its verdict is unreplicated")
        return
    if b.eval_run is None or a.eval_run is None:
        if (b.eval_run is None) != (a.eval_run is None):
            report.notes.append("only one side is stamped lineage.eval_run: the re-run spread needs both; "
                                f"{_SETTLE}")
        return
    report.run_std_source = "eval_run"
    for name, metric in report.metrics.items():
        pooled = _pooled_std(b, a, name, in_b, in_a)
        if pooled is None:
            continue
        std, df = pooled
        quantile = t_quantile(tail, df)
        metric.run_std, metric.band = std, quantile * std * scale
        if name == report.target:
            report.run_std, report.run_std_runs, report.band_quantile = std, df + 1, quantile
    if report.run_std is None:
        report.notes.append("lineage.eval_run gives one evaluation per side: no re-run spread; " + _SETTLE)


def _headline(report: DeltaReport, columns: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """The headline verdict, the target's numbers, the failed guards, the other drops, the ceiling."""
    for metric in report.metrics.values():
        if metric.band is not None and metric.delta is not None:
            metric.within_noise = abs(metric.delta) <= metric.band
    target = report.metrics.get(report.target)
    if target is not None:
        report.verdict = target.verdict
        report.before, report.after, report.delta = target.before, target.after, target.delta
        report.target_ci95, report.p_value, report.n_paired_tasks = target.ci95, target.p_value, target.n_paired_tasks
    report.failed = [name for name in [report.target, *report.must_not_regress]
                     if name in report.metrics and report.metrics[name].verdict in DROPS]
    report.dropped = [name for name, metric in report.metrics.items()
                      if metric.verdict in DROPS and name not in report.failed]
    for name in report.dropped:
        metric = report.metrics[name]
        report.warnings.append(f"{name} dropped {metric.delta:+.3f}{interval_text(metric.ci95)} "
                               "(not in must_not_regress, so it does not fail the report)")
    if report.not_comparable:
        report.headline_verdict = "NOT COMPARABLE"
    elif report.failed:
        report.headline_verdict = "FAIL"
    elif report.verdict in GAINS:
        report.headline_verdict = "PASS"
    else:
        report.headline_verdict = "NO DIFFERENCE"
    if report.verdict == "moved_unreplicated":
        report.warnings.append(f"{report.target} moved in one evaluation per side, which could be noise: {_SETTLE}")
    before_pass = columns[PASS_AT_1][0][columns[PASS_AT_1][2]]
    room = int(np.count_nonzero(before_pass < 1.0))
    if len(before_pass) and (float(before_pass.mean()) >= CEILING_PASS_RATE or room < MIN_ROOM_TASKS):
        report.ceiling = True
        report.warnings.append(
            f"ceiling: the before run passes {float(before_pass.mean()):.3f} of its paired tasks and {room} have room "
            f"to improve (ceiling at {CEILING_PASS_RATE} or under {MIN_ROOM_TASKS} tasks with room), so there is little "
            "gain this eval could show; use harder situations before training again")


def _group_columns(report: DeltaReport, b: Side, a: Side, in_b: np.ndarray,
                   in_a: np.ndarray) -> dict[str, PairedColumns]:
    """The target's per-task values within each group of rows both sides have, over the paired tasks."""
    assert b.group_of_row is not None and a.group_of_row is not None
    if report.target not in (b.names() | {PASS_AT_1}) or report.target not in (a.names() | {PASS_AT_1}):
        return {}
    a_number = {label: g for g, label in enumerate(a.groups)}
    columns = {}
    for g, label in sorted(enumerate(b.groups), key=lambda item: item[1]):
        other = a_number.get(label)
        if other is not None:
            columns[label] = _paired_columns(b, a, report.target, in_b, in_a, b.group_of_row == g,
                                             a.group_of_row == other)
    only = sorted(set(b.groups) ^ set(a.groups))
    if only:
        report.notes.append(f"groups on one side only, not compared: {', '.join(only)}")
    return columns


def _groups_down(report: DeltaReport, b: Side, a: Side, in_b: np.ndarray, in_a: np.ndarray) -> None:
    """Each group's verdict word, read off the same repeats as the headline (its own re-run band from the
    lineage.eval_run stamps of its rows; no band when the noise came from run_std=, which is not per group), and
    groups_down: every group whose target dropped significantly."""
    replicated = report.eval_runs_before > 1 and report.eval_runs_after > 1
    scale = math.sqrt(1.0 / report.eval_runs_before + 1.0 / report.eval_runs_after)
    number_b = {label: g for g, label in enumerate(b.groups)}
    number_a = {label: g for g, label in enumerate(a.groups)}
    for label, metric in report.groups.items():
        if report.run_std_source == "eval_run" and b.group_of_row is not None and a.group_of_row is not None:
            pooled = _pooled_std(b, a, report.target, in_b, in_a, b.group_of_row == number_b[label],
                                 a.group_of_row == number_a[label])
            if pooled is not None:
                std, df = pooled
                metric.run_std, metric.band = std, t_quantile(0.5 + DEFAULT_CONFIDENCE / 2, df) * std * scale
        metric.verdict = verdict_word(metric.ci95, metric.delta, metric.band, replicated)
    report.groups_down = [label for label, metric in report.groups.items()
                          if metric.verdict in DROPS and metric.n_paired_tasks >= MIN_PAIRED_TASKS]
    if report.groups_down and report.delta is not None and report.delta > 0:
        report.warnings.append(f"{report.target} rose overall while it dropped significantly in "
                               f"{len(report.groups_down)} group(s) of {report.by}: {', '.join(report.groups_down)}; "
                               "the headline hides them")


def _config(report: DeltaReport, b: Side, a: Side) -> None:
    config_b, config_a, warnings = config_pair(b.table.rows, a.table.rows, "sides")
    report.config = {"before": config_b, "after": config_a}
    report.warnings += warnings
