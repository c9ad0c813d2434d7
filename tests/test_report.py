"""Every public report reads like a dict of its fields (the product text's report["key"])."""

from __future__ import annotations

import pytest

import whileai_train as wai
from whileai_train.report import Report


def _rows():
    return [{"task_id": f"t{t}", "prompt": f"ask {t}", "final_text": "x" * (t + i), "reward": float((t + i) % 2)}
            for t in range(6) for i in range(4)]


def test_report_mapping_access_reads_fields_and_properties() -> None:
    class Example(Report):
        n: int = 3

        @property
        def double(self) -> int:
            return 2 * self.n

    report = Example()
    assert report["n"] == 3 and report["double"] == 6
    assert "n" in report and "double" in report and "missing" not in report and 3 not in report
    assert report.get("missing", "fallback") == "fallback"
    with pytest.raises(KeyError):
        report["missing"]


def test_check_reports_share_the_base() -> None:
    rows = _rows()
    reports = [wai.pass_at(rows), wai.curriculum(rows), wai.publish_gate(rows), wai.optimize(rows, mode="rl").report,
               wai.compare_runs(rows, rows), wai.decontaminate(rows, rows[:1]).report]
    for report in reports:
        assert isinstance(report, Report), type(report)
        first_field = next(iter(type(report).model_fields))
        assert report[first_field] == getattr(report, first_field)
        assert str(report).strip()
