"""The three doors that took rows of their own now read them as take_rows does: monitor(holdout=),
evaluate(model, tasks) and delta_report(tasks=) each take a JSONL path, a JSON-array path, a datasets.Dataset and a
list alike, and refuse a bad row by its row, its field and the fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.errors import RowError

TASKS = [{"prompt": "1 + 1 =", "answer": "2", "scenario_id": "t0"},
         {"prompt": "2 + 2 =", "answer": "4", "scenario_id": "t1"},
         {"prompt": [{"role": "user", "content": "3 + 3 ="}], "answer": "6", "scenario_id": "t2"}]
# A ShareGPT row whose speaker is no role: take_rows refuses it naming row 1 and the field.
BAD_ROW = {"conversations": [{"from": "alien", "value": "hi"}], "answer": "0"}


def _sources(rows: list[dict[str, Any]], folder: Path) -> dict[str, Any]:
    """The same rows as a JSONL path, a JSON-array path, a datasets.Dataset and a list."""
    import datasets

    jsonl, array = folder / "rows.jsonl", folder / "rows.json"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    array.write_text(json.dumps(rows), encoding="utf-8")
    return {"jsonl": str(jsonl), "json": array, "dataset": datasets.Dataset.from_list(rows), "list": rows}


def _same_shape(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows a Dataset can hold (one prompt type per column): the text prompts only."""
    return [task for task in tasks if isinstance(task["prompt"], str)]


def _refusals(folder: Path) -> dict[str, Any]:
    """A bad row in each source: a JSONL line that is not JSON, and a row take_rows cannot read in a list."""
    broken = folder / "broken.jsonl"
    broken.write_text(json.dumps(TASKS[0]) + "\n{not json\n", encoding="utf-8")
    return {"jsonl": (str(broken), 1, None), "list": ([TASKS[0], BAD_ROW], 1, "conversations[0].from")}


def _assert_refused(call: Callable[[Any], Any], folder: Path) -> None:
    for name, (source, row, field) in _refusals(folder).items():
        with pytest.raises(RowError) as info:
            call(source)
        assert info.value.index == row, (name, str(info.value))
        assert info.value.field == field, (name, str(info.value))
        assert "Fix:" in str(info.value), name


def test_monitor_holdout_reads_every_source_alike_and_refuses_a_bad_row(tmp_path: Path) -> None:
    rows = _same_shape(TASKS)
    read = {name: wai.monitor(holdout=source).holdout for name, source in _sources(rows, tmp_path).items()}
    assert all(holdout == rows for holdout in read.values()), read
    _assert_refused(lambda source: wai.monitor(holdout=source), tmp_path)
    # a conversation is a holdout ask too: what it says before the agent's first reply
    chat = wai.monitor(holdout=[{"messages": [{"role": "user", "content": "hi"},
                                              {"role": "assistant", "content": "yo"}]}]).holdout
    assert chat[0]["prompt"] == [{"role": "user", "content": "hi"}]
    with pytest.raises(RowError) as info:
        wai.monitor(holdout=[{"prompt": "a"}, {"question": "x"}])
    assert info.value.index == 1 and info.value.field == "prompt" and "Fix:" in str(info.value)


def test_delta_report_tasks_reads_every_source_alike_and_refuses_a_bad_row(tmp_path: Path) -> None:
    before = [{"scenario_id": f"t{i}", "prompt": f"ask {i}", "reward": float(j)} for i in range(10) for j in (0, 1)]
    after = ([{"scenario_id": f"t{i}", "prompt": f"ask {i}", "reward": 1.0} for i in range(6) for _ in (0, 1)]
             + [{"scenario_id": f"u{i}", "prompt": f"other {i}", "reward": 1.0} for i in range(10) for _ in (0, 1)])
    pinned = [{"scenario_id": f"t{i}", "prompt": f"ask {i}"} for i in range(6)]
    for name, source in _sources(pinned, tmp_path).items():
        report = wai.delta_report(before, after, tasks=source)
        assert report.n_paired_tasks == 6 and report.paired_share == 1.0, (name, str(report))
    _assert_refused(lambda source: wai.delta_report(before, after, tasks=source), tmp_path)


@pytest.mark.trainer
def test_evaluate_reads_every_task_source_alike_and_refuses_a_bad_row(tmp_path: Path) -> None:
    from whileai_train.demos.grpo_monitor import exact_answer
    from whileai_train.demos.tiny import tiny_model_and_tokenizer

    model, tokenizer = tiny_model_and_tokenizer()
    rows = _same_shape(TASKS)

    def evaluate(source: Any) -> list[dict[str, Any]]:
        return wai.evaluate(model, source, exact_answer, tokenizer=tokenizer, k=1, runs=1, max_completion_length=2,
                            engine="transformers", progress=False)

    asked = {name: [(row["scenario_id"], row["prompt"]) for row in evaluate(source)]
             for name, source in _sources(rows, tmp_path).items()}
    assert all(pairs == [(row["scenario_id"], row["prompt"]) for row in rows] for pairs in asked.values()), asked
    _assert_refused(evaluate, tmp_path)
