"""eval_variance: the eval's own re-run standard deviation, from three or more evaluations of one model.

One evaluation is a draw, not a number: the same model on the same tasks lands somewhere else next time. Each
run's pass@1 (and each marker every run carries) is its mean over the tasks all runs share; run_std is the
sample standard deviation (ddof=1) of those per-run numbers, and n_runs is how many it came from, so
delta_report(run_std=report) can use the t quantile at n_runs - 1 degrees of freedom for its re-run band.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import Field

from whileai_train.errors import ConfigError, InputError
from whileai_train.measure.defaults import MIN_EVAL_RUNS
from whileai_train.measure.sides import PASS_AT_1, Side, read_side
from whileai_train.report import Report
from whileai_train.rows.intake import take_rows
from whileai_train.tables.defaults import PASS_THRESHOLD
from whileai_train.tables.marker_column import task_means

__all__ = ["EvalVarianceReport", "eval_variance"]


class EvalVarianceReport(Report):
    """run_std of pass@1 over n_runs evaluations of one model, and of every marker all runs carry."""

    run_std: float | None = None
    n_runs: int = 0
    n_tasks: int = 0  # tasks every run graded; each run's numbers are over these
    pass_at_1_by_run: list[float] = Field(default_factory=list)
    run_std_by_metric: dict[str, float] = Field(default_factory=dict)
    mean_by_metric: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        runs = ", ".join(f"{v:.3f}" for v in self.pass_at_1_by_run)
        head = (f"eval_variance: run_std {self.run_std:.4f} over {self.n_runs} runs (pass@1 {runs} on "
                f"{self.n_tasks} shared tasks); pass it as delta_report(run_std=this) or run_std={self.run_std:.4f}, "
                f"run_std_runs={self.n_runs}")
        lines = [head]
        for name, std in self.run_std_by_metric.items():
            if name != PASS_AT_1:
                lines.append(f"  {name}: mean {self.mean_by_metric[name]:.3f}, run_std {std:.4f}")
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


def _split_by_eval_run(source: Any) -> list[list[dict[str, Any]]]:
    rows = take_rows(source, "eval_variance", graded=True)
    runs: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        lineage = row.get("lineage") if isinstance(row, Mapping) else None
        stamp = lineage.get("eval_run") if isinstance(lineage, Mapping) else None
        runs.setdefault(str(stamp), []).append(row)
    return list(runs.values()) if "None" not in runs else [rows]


def eval_variance(*runs: Any, pass_threshold: float = PASS_THRESHOLD) -> EvalVarianceReport:
    """run_std from three or more evaluations of the same model on the same tasks (each a row list or path).

    One row list whose rows carry lineage.eval_run 0, 1, 2 (wai.evaluate(..., runs=3)) is split by that stamp.
    Fewer than three runs is a ConfigError: a standard deviation from two is too rough to floor a verdict on.
    """
    if len(runs) == 1:
        runs = tuple(_split_by_eval_run(runs[0]))
    if len(runs) < MIN_EVAL_RUNS:
        raise ConfigError(f"eval_variance: {len(runs)} evaluation(s) given; the re-run spread needs at least "
                          f"{MIN_EVAL_RUNS} of the same model on the same tasks. Fix: eval_variance(run_1, run_2, "
                          "run_3), or rows stamped lineage.eval_run 0, 1, 2 (wai.evaluate(..., runs=3))")
    sides: list[Side] = [read_side(rows, what=f"eval_variance run {i + 1}", pass_threshold=pass_threshold)
                         for i, rows in enumerate(runs)]
    report = EvalVarianceReport(n_runs=len(sides))
    graded_sets = [{side.table.tasks[t] for t in side.table.graded_tasks.tolist()} for side in sides]
    shared = sorted(set.intersection(*graded_sets))
    if not shared:
        raise InputError(f"eval_variance: the {len(sides)} runs share no graded task (by task_key). Fix: evaluate "
                         "the same model on the same tasks (wai.evaluate(model, tasks, reward_funcs, runs=3))")
    union = set.union(*graded_sets)
    if len(shared) < len(union):
        report.warnings.append(f"{len(union) - len(shared)} of {len(union)} tasks are not in every run and are left "
                               "out: each run's number is over the tasks all runs share")
    report.n_tasks = len(shared)
    names = [PASS_AT_1] + sorted(set.intersection(*(side.names() for side in sides)))
    for name in names:
        per_run = []
        for side in sides:
            position = {key: i for i, key in enumerate(side.table.tasks)}
            numbers = np.array([position[key] for key in shared], dtype=np.int64)
            means, _ = task_means(side.table.task_of_row, side.values(name), side.n_tasks)
            per_run.append(float(np.nanmean(means[numbers])) if np.isfinite(means[numbers]).any() else np.nan)
        values = np.array(per_run)
        if np.isnan(values).any():
            report.notes.append(f"{name}: not on the shared tasks of every run; no run_std for it")
            continue
        report.run_std_by_metric[name] = float(values.std(ddof=1))
        report.mean_by_metric[name] = float(values.mean())
        if name == PASS_AT_1:
            report.pass_at_1_by_run = [float(v) for v in values]
    report.run_std = report.run_std_by_metric[PASS_AT_1]
    if report.run_std == 0.0:
        report.warnings.append("the runs gave the same pass@1 every time: either the eval is deterministic "
                               "(temperature 0, one rollout) or these are copies of one run")
    return report
