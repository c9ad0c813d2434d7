"""What every selector shares: the report base, the eval_sourced warning, the result pair.

Rows are read by `tables.graded.graded_table` (order="first_seen") and stamped by
`tables.calibration.task_stamps`, the same reader and stamp the gates use.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ConfigDict, Field

from whileai_train.report import Report
from whileai_train.tables.graded import name_rows

__all__ = ["SelectionReport", "eval_warning"]


def eval_warning(count: int, indices: Sequence[int], unit: str = "rows") -> str:
    """The eval_sourced warning: a held-out score used as reward makes the reported scorer the optimised one."""
    return (f"eval_sourced: {count} {unit} take their reward from evaluate() (lineage.source == 'eval'; input "
            f"{name_rows(indices)}): the scorer you report becomes the one you optimise against. Nothing was "
            "dropped; grade the training set with your training grader and keep evaluate for held-out rows")


class SelectionReport(Report):
    """Base of the selector reports: pydantic, readable as `report["key"]` as well as `report.key`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    eval_sourced: int = 0
    eval_sourced_rows: list[int] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

