"""Stage lineage: which stage of the pipeline each row fed, and the one mistake to catch across them.

The pipeline is a sequence of stages: SFT, reward modelling, RL, mid-training,
and the eval that judges the result. ``stamp_stage(rows, "sft")`` records the stage on row["lineage"] (``stage``
the latest, ``stages`` every stage the row fed, in order); ``stage_report`` counts rows and tasks per stage and
flags any task (``task_key``: a situation, not a string) used both in eval and in a training stage. Rows passed as
``eval_rows=`` are eval rows, stamped or not; a row of ``rows`` with no stage is on neither side, so the report
does not call a set clean while some of it is unstamped (it says how many, and how to stamp them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from whileai_train.errors import ConfigError, RowError
from whileai_train.markers.defaults import EXAMPLES, STAGES
from whileai_train.report import Report
from whileai_train.rows.contract import task_key
from whileai_train.rows.files import refuse_non_rows
from whileai_train.rows.intake import take_rows

__all__ = ["STAGES", "StageReport", "stage_of", "stage_report", "stamp_stage"]

_TRAINING = tuple(stage for stage in STAGES if stage != "eval")


def _check_stage(stage: Any) -> str:
    if stage not in STAGES:
        raise ConfigError(f"stage {stage!r} is not a stage of the pipeline. Fix: use one of {', '.join(STAGES)}")
    return str(stage)


def _lineage(row: Any, index: int | None) -> dict[str, Any]:
    if row.__class__ is not dict and not isinstance(row, Mapping):
        raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
    lineage = row.get("lineage")
    if lineage is None:
        return {}
    if lineage.__class__ is dict:
        return lineage.copy()  # type: ignore[no-any-return]
    if not isinstance(lineage, Mapping):
        raise RowError(index, "lineage", f"lineage is {type(lineage).__name__}, not an object",
                       "write lineage as an object, e.g. {\"stage\": \"sft\"}")
    return dict(lineage)


def _stages(lineage: Mapping[str, Any]) -> tuple[str, ...]:
    stages = lineage.get("stages")
    if isinstance(stages, (list, tuple)):
        return tuple(s if s.__class__ is str else str(s) for s in stages)
    stage = lineage.get("stage")
    return (str(stage),) if stage is not None else ()


def stamp_stage(rows: Sequence[Mapping[str, Any]], stage: str) -> list[dict[str, Any]]:
    """New rows whose lineage records that they fed `stage` (one of STAGES): lineage["stage"] the latest,
    lineage["stages"] every stage in order (a tuple: a record, not a list to grow; JSON writes it as a list). The
    input rows are not changed."""
    rows = take_rows(rows, "stamp_stage")
    name = _check_stage(stage)
    out: list[dict[str, Any]] = []
    append = out.append
    # rows share one tuple per stage sequence (a tuple is a record: sharing it is safe), so stamping makes one new
    # container a row, the row itself, and leaves the garbage collector less to walk
    after: dict[tuple[str, ...], tuple[str, ...]] = {}
    for index, row in enumerate(rows):
        lineage = _lineage(row, index)
        stages = _stages(lineage)
        stamped = after.get(stages)
        if stamped is None:
            stamped = after[stages] = stages if name in stages else (*stages, name)
        lineage["stage"] = name
        lineage["stages"] = stamped
        append({**row, "lineage": lineage})
    return out


def stage_of(row: Mapping[str, Any]) -> str | None:
    """The stage a row last fed (row["lineage"]["stage"]), None when it was never stamped."""
    stage = _lineage(row, None).get("stage")
    return None if stage is None else str(stage)


class StageReport(Report):
    """Rows and tasks per stage, and the tasks used both in eval and in a training stage."""

    n_rows: int = 0
    n_eval_rows: int = 0  # rows passed as eval_rows= (read as eval, stamped or not; also in n_rows)
    n_unstamped: int = 0
    rows_per_stage: dict[str, int] = Field(default_factory=dict)
    tasks_per_stage: dict[str, int] = Field(default_factory=dict)
    leaked_tasks: list[str] = Field(default_factory=list)  # in eval and in a training stage
    leaked_by_stage: dict[str, int] = Field(default_factory=dict)  # training stage -> eval tasks it also used
    unknown_stages: dict[str, int] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every row is on a side, there is an eval side, and no eval task was trained on."""
        return not self.leaked_tasks and not self.n_unstamped and "eval" in self.rows_per_stage

    @property
    def verdict(self) -> str:
        if self.leaked_tasks:
            where = ", ".join(f"{stage} {n}" for stage, n in self.leaked_by_stage.items())
            return (f"stages: EVAL LEAK: {len(self.leaked_tasks)} tasks used both in eval and in training ({where}); "
                    "the eval reads them as unseen")
        counted = ", ".join(f"{stage} {n}" for stage, n in self.rows_per_stage.items()) or "none stamped"
        if self.n_unstamped:
            return (f"stages: NOT CHECKED: {self.n_unstamped} of the {self.n_rows - self.n_eval_rows} rows passed as "
                    "rows carry no stage, so they are on neither side of the leak check (stamped: "
                    f"{counted})")
        if "eval" not in self.rows_per_stage:
            return (f"stages: NO EVAL SIDE: none of the {self.n_rows} rows is eval, so no leak could be checked "
                    f"({counted})")
        return f"stages: OK, no eval task was trained on ({self.n_rows} rows: {counted})"

    def __str__(self) -> str:
        lines = [self.verdict]
        for stage in self.rows_per_stage:
            lines.append(f"  {stage:<5} {self.rows_per_stage[stage]:>8} rows  {self.tasks_per_stage[stage]:>7} tasks")
        if self.n_unstamped:
            lines.append(f"  {self.n_unstamped} rows carry no stage. Fix: stamp the training rows "
                         "(wai.stamp_stage(rows, 'rl')) and pass the eval rows as eval rows: "
                         "wai.stage_report(train_rows, eval_rows=eval_rows)")
        elif "eval" not in self.rows_per_stage:
            lines.append("  Fix: pass the eval rows, wai.stage_report(train_rows, eval_rows=eval_rows), or stamp "
                         "them wai.stamp_stage(eval_rows, 'eval')")
        if self.unknown_stages:
            lines.append("  stages not in STAGES: " + ", ".join(f"{s} ({n})" for s, n in self.unknown_stages.items()))
        if self.leaked_tasks:
            lines.append("  leaked tasks: " + ", ".join(self.leaked_tasks[:EXAMPLES])
                         + (" ..." if len(self.leaked_tasks) > EXAMPLES else ""))
            lines.append("  what to do: drop these tasks from training (or from the eval) and measure again")
        return "\n".join(lines)


def stage_report(rows: Sequence[Mapping[str, Any]], eval_rows: Sequence[Mapping[str, Any]] | None = None
                 ) -> StageReport:
    """Rows and tasks per stage; flags every task used both in eval and in a training stage.

    `eval_rows`: the evaluation's rows, read as eval whether or not they carry a stamp. A row of `rows` with no
    stage is counted in n_unstamped and the verdict is NOT CHECKED rather than OK."""
    rows = take_rows(rows, "stage_report")
    rows_per: dict[str, int] = {}
    tasks_per: dict[str, set[str]] = {}
    unstamped = 0
    unknown: dict[str, int] = {}
    evals: list[Mapping[str, Any]] = []
    if eval_rows is not None:
        refuse_non_rows(eval_rows, "stage_report (eval_rows)")
        evals = list(eval_rows)
        for index, row in enumerate(evals):
            _lineage(row, index)  # a row that is not an object is named
            rows_per["eval"] = rows_per.get("eval", 0) + 1
            tasks_per.setdefault("eval", set()).add(task_key(row))
    n_rows = 0
    for index, row in enumerate(rows):
        n_rows += 1
        stages = _stages(_lineage(row, index))
        if not stages:
            unstamped += 1
            continue
        key = task_key(row)
        for stage in stages:
            if stage not in STAGES:
                unknown[stage] = unknown.get(stage, 0) + 1
                continue
            rows_per[stage] = rows_per.get(stage, 0) + 1
            tasks_per.setdefault(stage, set()).add(key)
    eval_tasks = tasks_per.get("eval", set())
    leaked: set[str] = set()
    by_stage: dict[str, int] = {}
    for stage in _TRAINING:
        shared = eval_tasks & tasks_per.get(stage, set())
        if shared:
            by_stage[stage] = len(shared)
            leaked |= shared
    order = [s for s in STAGES if s in rows_per]
    return StageReport(n_rows=n_rows + len(evals), n_eval_rows=len(evals), n_unstamped=unstamped,
                       rows_per_stage={s: rows_per[s] for s in order},
                       tasks_per_stage={s: len(tasks_per[s]) for s in order}, leaked_tasks=sorted(leaked),
                       leaked_by_stage=by_stage, unknown_stages=unknown)
