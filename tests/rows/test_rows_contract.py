"""One contract for rows in and out: every function that keeps rows returns (rows, report) the same way, and every
function that takes rows refuses a report or that pair with a RowError saying what was passed and what to pass."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai


def _flat(task: int, index: int, passed: bool) -> dict[str, Any]:
    """A flat rollout row of the platform schema."""
    order = f"A{100 + task}"
    return {"scenario_id": f"refund-{task}", "rollout_index": index, "category": "refund",
            "prompt": f"Please refund order {order}, it arrived broken.",
            "steps": [{"tool": "lookup_order", "arguments": {"order_id": order}, "result": {"status": "delivered"}},
                      {"tool": "issue_refund", "arguments": {"order_id": order}, "result": {"ok": passed}}],
            "final_text": f"I refunded order {order}." if passed else "Sorry, that did not work.",
            "reward": 1.0 if passed else 0.0}


def _chat(task: int, index: int, passed: bool) -> dict[str, Any]:
    """An OpenAI chat row: tool calls with JSON-string arguments, then tool turns."""
    order = f"B{200 + task}"
    return {"scenario_id": f"cancel-{task}", "rollout_index": index, "category": "cancel", "reward": float(passed),
            "messages": [
                {"role": "user", "content": f"Cancel order {order} please."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                    "name": "cancel_order", "arguments": json.dumps({"order_id": order})}}]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"ok": passed})},
                {"role": "assistant", "content": "Cancelled." if passed else "I could not cancel it."}]}


@pytest.fixture()
def rows() -> list[dict[str, Any]]:
    return [maker(task, index, index % 2 == 0) for task in range(6) for index in range(4)
            for maker in (_flat, _chat)]


@pytest.fixture()
def eval_file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "eval.jsonl"
    evals = [{"scenario_id": "refund-0", "prompt": "Please refund order A100, it arrived broken."},
             {"scenario_id": "holdout-9", "prompt": "Where is my parcel B999?"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in evals))
    return path


def test_decontaminate_returns_the_clean_rows_and_its_report(rows: list[dict[str, Any]], eval_file: Path,
                                                             tmp_path: Path) -> None:
    clean, report = wai.decontaminate(rows, eval_file)
    assert isinstance(report, wai.DecontaminateReport)
    assert report.n_contaminated == 4 and not report.clean  # refund-0's four rollouts share the eval task
    assert len(clean) == len(rows) - 4 and all(row["scenario_id"] != "refund-0" for row in clean)
    result = wai.decontaminate(rows, eval_file)
    assert isinstance(result, wai.KeptRows) and result.rows == clean and result.report.n_contaminated == 4
    kept = wai.optimize(rows, mode="sft")
    assert isinstance(kept, wai.KeptRows)
    exported = wai.export_dataset(clean, tmp_path / "sft.jsonl", format="trl", check="warn")
    assert exported.n == len(clean)


def test_the_readme_line_that_kept_the_pair_is_refused_with_the_fix(rows: list[dict[str, Any]],
                                                                     eval_file: Path, tmp_path: Path) -> None:
    clean = wai.decontaminate(rows, eval_file)  # the pair, not the rows
    target = tmp_path / "sft.jsonl"
    with pytest.raises(wai.RowError) as refused:
        wai.export_dataset(clean, target, format="trl")
    message = str(refused.value)
    assert "export_dataset got a (rows, report) pair" in message and "DecontaminateReport" in message
    assert "rows, report = wai.decontaminate(...)" in message
    assert not target.exists()
    with pytest.raises(wai.RowError, match=r"optimize\(mode='rl'\) got a \(rows, report\) pair"):
        wai.optimize(clean)
    with pytest.raises(wai.RowError, match="export_dataset got a DecontaminateReport \\(a report\\), not rows"):
        wai.export_dataset(clean.report, target)
    assert not target.exists()


def _every_rows_taker(rows: list[dict[str, Any]], eval_file: Path) -> dict[str, Callable[[Any], Any]]:
    """Each public function that takes rows, called with `x` where the rows belong."""
    return {
        "attach_labels": lambda x: wai.attach_labels(x, {"refund-0#0": 1}),
        "build_preference_pairs": wai.build_preference_pairs,
        "compare_runs": lambda x: wai.compare_runs(x, rows),
        "compare_runs (after)": lambda x: wai.compare_runs(rows, x),
        "curriculum": wai.curriculum,
        "dataset_report": wai.dataset_report,
        "decontaminate": lambda x: wai.decontaminate(x, eval_file),
        "decontaminate (eval)": lambda x: wai.decontaminate(rows, x),
        "dedupe_groups": wai.dedupe_groups,
        "delta_report": lambda x: wai.delta_report(x, rows),
        "delta_report (after)": lambda x: wai.delta_report(rows, x),
        "eval_variance": wai.eval_variance,
        "export_dataset": lambda x: wai.export_dataset(x, "out.jsonl", format="trl", check="warn"),
        "export_preference": lambda x: wai.export_preference(x, "dpo.jsonl"),
        "export_prompts": lambda x: wai.export_prompts(x, "grpo.jsonl"),
        "grounding_report": wai.grounding_report,
        "group_signal": wai.group_signal,
        "hack_scan": wai.hack_scan,
        "holdout_size": lambda x: wai.holdout_size(0.1, before=x),
        "judge_probes": lambda x: wai.judge_probes(x, lambda row: 1.0),
        "judge_trust": wai.judge_trust,
        "leak_report": wai.leak_report,
        "length_report": wai.length_report,
        "mark_grounding": wai.mark_grounding,
        "marker_summary": wai.marker_summary,
        "metric_summary": lambda x: wai.metric_summary(x, "pass@1"),
        "monitor": lambda x: wai.monitor(holdout=x),
        "near_duplicate_prompts": wai.near_duplicate_prompts,
        "optimize": wai.optimize,
        "pass_at": wai.pass_at,
        "publish_gate": wai.publish_gate,
        "read_rows": wai.read_rows,
        "refusal_report": wai.refusal_report,
        "reward_correlations": wai.reward_correlations,
        "select_for_rl": wai.select_for_rl,
        "select_for_sft": wai.select_for_sft,
        "stage_report": wai.stage_report,
        "stamp_spec": lambda x: wai.stamp_spec(x, {"traits": [{"id": "concise", "principle": "be brief"}]}),
        "stamp_stage": lambda x: wai.stamp_stage(x, "rl"),
        "style_markers": wai.style_markers,
        "style_report": wai.style_report,
        "to_dataset": wai.to_dataset,
        "trace_flag_report": wai.trace_flag_report,
        "trace_markers": wai.trace_markers,
        "training_rows": lambda x: wai.training_rows(x, format="trl", check="warn"),
    }


def test_every_function_that_takes_rows_refuses_a_report_or_a_pair(rows: list[dict[str, Any]], eval_file: Path,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    pair = wai.optimize(rows, mode="sft")
    pairs = wai.build_preference_pairs(rows)
    for name, call in _every_rows_taker(rows, eval_file).items():
        for passed, what in ((pair, "(rows, report) pair"), (pairs, "(rows, report) pair"),
                             (pair.report, "SFTSelectionReport (a report)")):
            with pytest.raises(wai.RowError) as refused:
                call(passed)
            message = str(refused.value)
            assert what in message, (name, message)
            assert "Fix: " in message and "rows, report = wai." in message, (name, message)
    assert sorted(work.iterdir()) == []  # nothing half-written


def test_the_list_covers_every_public_function_whose_first_argument_is_rows(rows: list[dict[str, Any]],
                                                                             eval_file: Path) -> None:
    covered = {name.split(" ")[0] for name in _every_rows_taker(rows, eval_file)}
    takers = set()
    for name in wai.__all__:
        value = getattr(wai, name)
        if inspect.isfunction(value):
            first = next(iter(inspect.signature(value).parameters), "")
            if first in ("rows", "source", "before", "before_rows", "pairs_or_rows", "holdout", "runs"):
                takers.add(name)
    assert takers <= covered, sorted(takers - covered)


def test_a_tuple_of_rows_is_still_rows(rows: list[dict[str, Any]]) -> None:
    assert wai.pass_at(tuple(rows)).n_tasks == wai.pass_at(rows).n_tasks == 12
    assert len(wai.stamp_stage(tuple(rows), "sft")) == len(rows)
