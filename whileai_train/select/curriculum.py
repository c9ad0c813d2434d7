"""curriculum(rows): order graded tasks easy to hard, bucket them into tiers, retire the solved ones.

A curriculum needs per-task difficulty: each task's pass rate over its k rollouts (easy to
hard, and retire the solved). A task whose rows carry a calibration stamp is read from the stamp (the
graded measurement, which survives optimize's pruning); otherwise it is measured on the rows given. Tasks
above `solved` are retired (an all-pass task is dead gradient), below `floor` not ready (no signal yet); the
rest are trainable, easiest first, split into `tiers` buckets of near-equal size for a staged schedule. The
defaults are the band's own edges, so curriculum and optimize(mode="rl") agree on which tasks are trainable.
"""

from __future__ import annotations

import statistics
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.errors import ConfigError
from whileai_train.report import Report
from whileai_train.rows.contract import calibration_of
from whileai_train.select.defaults import CURRICULUM_TIERS, LOW_K
from whileai_train.tables.band import check_band
from whileai_train.tables.calibration import task_stamps
from whileai_train.tables.defaults import BAND
from whileai_train.tables.graded import graded_table

__all__ = ["CurriculumReport", "TaskDifficulty", "curriculum"]


class TaskDifficulty(BaseModel):
    """One task's pass rate over `n` graded rollouts, and the tier it lands in (1 = easiest)."""

    task_id: str
    pass_rate: float
    n: int
    tier: int | None = None
    source: Literal["measured", "stamp"] = "measured"


class CurriculumReport(Report):
    """Trainable tasks (easy to hard, in tiers), retired and not-ready tasks, the in-band count."""

    solved: float = BAND[1]
    floor: float = BAND[0]
    band: tuple[float, float] = BAND
    tasks: int = 0
    trainable: list[TaskDifficulty] = Field(default_factory=list)
    tiers: list[list[str]] = Field(default_factory=list)
    tier_ranges: list[tuple[float, float]] = Field(default_factory=list)
    retired: list[str] = Field(default_factory=list)
    not_ready: list[str] = Field(default_factory=list)
    in_band: int = 0
    ungraded: int = 0
    from_stamps: int = 0
    rollouts_per_task: float = 0.0
    warnings: list[str] = Field(default_factory=list)

    @property
    def verdict(self) -> str:
        return f"{len(self.trainable)} trainable tasks" if self.trainable else "NOTHING TRAINABLE"

    def __str__(self) -> str:
        lines = [(f"curriculum: {self.verdict} in {len(self.tiers)} tiers; {len(self.retired)} retired (pass rate "
                  f"above {self.solved:g}), {len(self.not_ready)} not ready (below {self.floor:g}); of {self.tasks}")]
        lines.append(f"  in the {self.band[0]:g}-{self.band[1]:g} band: {self.in_band} trainable tasks; median "
                     f"{self.rollouts_per_task:g} rollouts per task; {self.from_stamps} read from calibration stamps")
        for number, (names, (hard, easy)) in enumerate(zip(self.tiers, self.tier_ranges), start=1):
            lines.append(f"  tier {number}: {len(names)} tasks, pass rate {easy:.2f} down to {hard:.2f}")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        if not self.trainable:
            lines.append("  next: sample harder tasks (all retired) or wait for the policy to improve (not ready)")
        return "\n".join(lines)


def curriculum(rows: Any, *, solved: float = BAND[1], floor: float = BAND[0],
               tiers: int = CURRICULUM_TIERS) -> CurriculumReport:
    """Split graded tasks into trainable (easy to hard, in `tiers`), retired (> solved), not ready (< floor)."""
    floor, solved = check_band((floor, solved), who="curriculum", edges=("floor", "solved"))
    if isinstance(tiers, bool) or not isinstance(tiers, int) or tiers < 1:
        raise ConfigError(f"tiers={tiers!r}. Fix: pass a positive whole number of stages")
    view = graded_table(rows, what="curriculum", order="first_seen", need_graded=True)
    measured = task_stamps(view)
    stamped: dict[int, Any] = {}
    for i in np.flatnonzero(view.carries).tolist():  # in row order: a task's first carried stamp is read
        task = int(view.task_of_row[i])
        if task not in stamped:
            stamped[task] = calibration_of(view.rows[i], i)

    report = CurriculumReport(solved=float(solved), floor=float(floor), tasks=view.n_tasks)
    difficulties: list[TaskDifficulty] = []
    for task, name in enumerate(view.tasks):
        stamp = stamped.get(task)
        if stamp is not None:
            difficulties.append(TaskDifficulty(task_id=name, pass_rate=stamp.pass_rate, n=stamp.n, source="stamp"))
        elif measured[task] is not None:
            difficulties.append(TaskDifficulty(task_id=name, pass_rate=measured[task]["pass_rate"],  # type: ignore[index]
                                               n=measured[task]["n"]))  # type: ignore[index]
        else:
            report.ungraded += 1
    report.from_stamps = sum(1 for item in difficulties if item.source == "stamp")
    if difficulties:
        report.rollouts_per_task = float(statistics.median(item.n for item in difficulties))

    trainable = [item for item in difficulties if floor <= item.pass_rate <= solved]
    trainable.sort(key=lambda item: -item.pass_rate)  # stable: ties keep the order tasks first appeared
    report.retired = [item.task_id for item in difficulties if item.pass_rate > solved]
    report.not_ready = [item.task_id for item in difficulties if item.pass_rate < floor]
    report.in_band = sum(1 for item in trainable if BAND[0] <= item.pass_rate <= BAND[1])
    chunks = np.array_split(np.arange(len(trainable)), min(tiers, len(trainable))) if trainable else []
    for number, chunk in enumerate(chunks, start=1):
        members = [trainable[i] for i in chunk.tolist()]
        for item in members:
            item.tier = number
        report.tiers.append([item.task_id for item in members])
        report.tier_ranges.append((members[-1].pass_rate, members[0].pass_rate))
    report.trainable = trainable

    if report.ungraded:
        report.warnings.append(f"{report.ungraded} tasks have no graded row and no calibration stamp: left out. "
                               "Fix: grade them with your grader (a `reward` per row, 0..1)")
    if difficulties and report.rollouts_per_task < LOW_K:
        report.warnings.append(f"low k: a median of {report.rollouts_per_task:g} rollouts per task (fewer than "
                               f"{LOW_K}), so a task near an edge can land on the wrong side of it. Sample {LOW_K} "
                               "or more rollouts per task")
    return report
