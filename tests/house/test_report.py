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


def _examples() -> list[dict]:
    from pathlib import Path

    return wai.read_rows(Path(__file__).resolve().parents[2] / "examples" / "rollouts.jsonl")


def test_a_report_shown_as_a_cells_value_is_short_and_never_holds_the_rows(tmp_path) -> None:
    rows = _examples()  # flat and OpenAI rows of 60 tasks x 4
    marks = {row["scenario_id"] + " " + str(row.get("prompt", ""))[:40] for row in rows}
    kept = wai.optimize(rows, mode="sft")
    shown = {
        "optimize": kept, "optimize rl": wai.optimize(rows), "decontaminate": wai.decontaminate(rows, rows[:8]),
        "pairs": wai.build_preference_pairs(rows), "publish_gate": wai.publish_gate(rows, mode="rl"),
        "pass_at": wai.pass_at(rows), "export": wai.export_prompts(rows, tmp_path / "p.jsonl"),
        "hack_scan": wai.hack_scan(rows), "stage_report": wai.stage_report(rows),
        "curriculum": wai.curriculum(rows), "marker_summary": wai.marker_summary(wai.trace_markers(rows)),
    }
    for name, value in shown.items():
        text = repr(value)
        assert len(text) < 700, (name, len(text))
        assert not any(mark in text for mark in marks), name  # no row's ask in it
        assert "Hi, I" not in text and "'steps'" not in text, name
    assert repr(kept).startswith("KeptRows(rows=[") and f"rows=[{len(kept.rows)} rows]" in repr(kept)
    assert repr(kept.report).startswith(f"SFTSelectionReport({kept.report.headline()!r}, ")
    assert f"kept={len(kept.rows)}" in repr(kept.report) and "n=240" in repr(kept.report)
    gate = shown["publish_gate"]
    assert str(gate).startswith(gate.headline() + "\n")  # str() is the whole reading, as before


def test_a_notebook_shows_the_verdict_first_then_the_tables() -> None:
    rows = _examples()
    report = wai.optimize(rows)[1]
    markdown = report._repr_markdown_()
    lines = markdown.splitlines()
    assert lines[0] == f"**{report.headline().replace('|', chr(92) + '|')}**"
    assert "| kept | " + str(report.kept) + " |" in lines and "|---|---|" in lines
    assert "*dropped*" in lines and f"| duplicate | {report.dropped['duplicate']} |" in lines
    assert "<details><summary>the whole reading</summary>" in lines
    assert str(report) in markdown  # the reading, whole, after the tables
    assert lines.index("|---|---|") < lines.index("<details><summary>the whole reading</summary>")
    gate = wai.publish_gate(rows, mode="rl")
    gate_markdown = gate._repr_markdown_()
    assert gate_markdown.startswith("**publish_gate: ") and "| pass_at | pass_at: pass@1 " in gate_markdown
    export = wai.ExportReport(n=2, n_written=2)
    assert isinstance(export, Report) and export._repr_markdown_().startswith("**export ok: 2 ")
    monitor = wai.MonitorSummary(verdict="NO EVAL YET")
    assert isinstance(monitor, Report) and repr(monitor).startswith("MonitorSummary(")
