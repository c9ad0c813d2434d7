"""Preference pairs and GRPO prompts: shapes, divergence, counts, refusals (no trainer here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import refund_rollouts
from whileai_train.errors import ConfigError, ExportRefusedError, PrivilegedLeakError
from whileai_train.exporters.defaults import STAMP_COLUMNS


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _side(ids: str, refund_to: str, reply: str, result: str = "ok") -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "refund A1"},
        {"role": "assistant", "content": "", "tool_calls": [_call(f"{ids}1", "lookup", order_id="A1")]},
        {"role": "tool", "tool_call_id": f"{ids}1", "content": "paid"},
        {"role": "assistant", "content": "", "tool_calls": [_call(f"{ids}2", "refund", order_id=refund_to)]},
        {"role": "tool", "tool_call_id": f"{ids}2", "content": result},
        {"role": "assistant", "content": reply},
    ]


def test_divergence_ignores_tool_call_ids():
    pair = {"chosen": {"messages": _side("a", "A1", "done")}, "rejected": {"messages": _side("zz", "B7", "sorry")}}
    (row,), report = _rows([pair])
    assert len(row["prompt"]) == 3  # user, lookup call, its result: the ids differ there, the turns do not
    assert row["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"order_id": "A1"}
    assert row["rejected"][0]["tool_calls"][0]["function"]["arguments"] == {"order_id": "B7"}
    assert row["chosen"] != row["rejected"]
    assert report.trl_turns_cut == 1 and report.n_written == 1


def _rows(items: Any, **kwargs: Any) -> Any:
    from whileai_train.exporters.preference import preference_rows

    return preference_rows(items, **kwargs)


def test_sides_that_differ_only_in_ids_are_no_pair():
    pair = {"chosen": _side("a", "A1", "done"), "rejected": _side("b", "A1", "done")}
    out, report = _rows([pair])
    assert out == [] and report.dropped == {"no_divergence": 1}


def test_divergence_at_a_tool_result_is_dropped_not_trained():
    pair = {"chosen": _side("a", "A1", "done", result="ok"), "rejected": _side("a", "A1", "done", result="error")}
    out, report = _rows([pair])
    assert out == [] and report.dropped == {"diverges_outside_agent_turn": 1}


def test_one_turn_pairs_keep_later_turns_out_and_count_them():
    short = {"chosen": _side("a", "A1", "done")[:4], "rejected": _side("a", "B2", "x")[:4]}
    out, report = _rows([short])
    assert report.trl_turns_cut == 0 and len(out[0]["chosen"]) == len(out[0]["rejected"]) == 1
    long = {"chosen": _side("a", "A1", "done"), "rejected": _side("a", "B2", "x")}
    out, report = _rows([long, short])
    assert report.trl_turns_cut == 1
    for row in out:  # the sides hold one assistant turn: no tool result, no user turn is scored
        assert [m["role"] for m in row["chosen"]] == [m["role"] for m in row["rejected"]] == ["assistant"]


def test_pairs_from_graded_rows_pass_vs_fail_within_a_task():
    rows = list(refund_rollouts(32, tasks=4, rollouts_per_task=8, seed=3))
    for row in rows:
        row.pop("privileged")
        row["steps"] = [s for s in row["steps"] if "user" not in s]  # one path shape, so sides diverge at refund
    rows.append({"prompt": "ungraded", "final_text": "x", "task_id": "u"})
    rows.append({"prompt": "p", "final_text": "x", "task_id": "solo", "reward": 1.0})
    out, report = _rows(rows)
    by_task: dict[str, list[dict]] = {}
    for row in rows[:32]:
        by_task.setdefault(row["task_id"], []).append(row)
    expected = sum(min(sum(r["reward"] >= 0.5 for r in group), sum(r["reward"] < 0.5 for r in group))
                   for group in by_task.values())
    assert report.n_written == len(out) == expected > 0
    assert report.dropped["ungraded"] == 1 and report.dropped["no_mixed_task"] >= 1
    for row in out:
        assert "refund" == row["chosen"][0]["tool_calls"][0]["function"]["name"]
        assert row["task"].startswith("refund-")


def test_reward_of_the_wrong_type_names_the_row(work):
    rows = list(refund_rollouts(4))
    rows[3]["reward"] = "pass"
    with pytest.raises(wai.RowError) as caught:
        wai.export_preference(rows, work / "p.jsonl")
    assert caught.value.index == 3 and caught.value.field == "reward"
    assert list(work.iterdir()) == []


def test_preference_leak_is_refused_and_validate_false_writes(work):
    chosen = _side("a", "A1", "done, the fraud flag is SECRET-FLAG-99")
    pair = {"chosen": {"messages": chosen, "privileged": {"flag": "SECRET-FLAG-99"}},
            "rejected": {"messages": _side("a", "B2", "sorry")}}
    pair["chosen"]["messages"][3]["tool_calls"][0]["function"]["arguments"]["note"] = "SECRET-FLAG-99"
    with pytest.raises(PrivilegedLeakError) as caught:
        wai.export_preference([pair], work / "p.jsonl")
    assert caught.value.rows == [0] and list(work.iterdir()) == []
    report = wai.export_preference([pair], work / "p.jsonl", validate=False)
    assert report.privileged_leaks == [0] and (work / "p.jsonl").exists()


def test_openai_preference_shape_has_json_string_arguments(work):
    pair = {"chosen": _side("a", "A1", "done"), "rejected": _side("a", "B2", "x")}
    wai.export_preference([pair], work / "o.jsonl", format="openai")
    (row,) = [json.loads(line) for line in (work / "o.jsonl").read_text().splitlines()]
    side_stamps = [key for key in STAMP_COLUMNS if key not in ("scenario_id", "task_id", "calibration")]
    assert set(row) == {"input", "preferred_output", "non_preferred_output", "scenario_id", "task_id", "calibration",
                        *(f"{side}_{key}" for side in ("chosen", "rejected") for key in side_stamps)}
    arguments = row["preferred_output"][0]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"order_id": "A1"}


def test_no_pair_at_all_is_refused_without_a_file(work):
    with pytest.raises(ExportRefusedError):
        wai.export_preference([{"prompt": "p", "final_text": "x", "reward": 1.0}], work / "p.jsonl")
    assert list(work.iterdir()) == []


# --- GRPO prompts --------------------------------------------------------------------------------------------


def _prompt_rows(items: Any, **kwargs: Any) -> Any:
    from whileai_train.exporters.prompts import prompt_rows

    return prompt_rows(items, **kwargs)


def test_prompts_stop_before_the_first_agent_turn_and_carry_columns(work):
    rows = list(refund_rollouts(8, tasks=2, rollouts_per_task=4))
    rows[0]["completions"] = ["a stray key"]  # never carried: GRPO passes `completions` itself
    report = wai.export_prompts(rows, work / "p.jsonl", system_prompt="be brief")
    out = [json.loads(line) for line in (work / "p.jsonl").read_text().splitlines()]
    assert report.n_written == 2 and report.dropped == {"duplicate_prompt": 6}
    assert report.columns_left_out["completions"].startswith("GRPOTrainer passes a reward function this name")
    for row in out:  # the rows' own columns (no invented nulls); reward and rollout_index are the rollouts'
        assert set(row) == {"prompt", "task", "calibration", "k", "passes", "fails", "task_id", "privileged"}
        assert (row["k"], row["passes"] + row["fails"], row["calibration"]) == (4, 4, None)
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["privileged"]["fraud_note"].startswith("internal risk code")


@pytest.mark.parametrize("bad", [["completions"], ["trainer_state"], ["prompts"], "task_id", ["log_metric"]])
def test_reserved_or_string_columns_are_config_errors(bad):
    with pytest.raises(ConfigError):
        _prompt_rows(list(refund_rollouts(2)), columns=bad)


def test_prompt_columns_have_one_shape_with_nulls_for_missing_keys():
    rows = [{"prompt": "a", "task_id": "t1"}, {"prompt": "b", "scenario_id": "s2", "weight": 2}]
    out, _report = _prompt_rows(rows, columns=["task_id", "scenario_id", "weight"])
    assert [set(r) for r in out] == [{"prompt", "task", "calibration", "k", "passes", "fails", "task_id",
                                      "scenario_id", "weight"}] * 2
    assert out[0]["weight"] is None and out[1]["task"] == "s2"


def test_to_dataset_keeps_each_rows_arguments_exactly(work):
    rows = [{"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "", "tool_calls": [
        _call("c", "refund", order_id="A1")]}, {"role": "assistant", "content": "ok"}]},
            {"messages": [{"role": "user", "content": "v"}, {"role": "assistant", "content": "", "tool_calls": [
                _call("d", "refund", amount=3, note=None)]}, {"role": "assistant", "content": "ok"}]}]
    out, _ = wai.training_rows(rows, format="trl")
    dataset = wai.to_dataset(out)
    assert dataset[0]["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"order_id": "A1"}
    assert dataset[1]["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"amount": 3, "note": None}
    # what from_list does without explicit features (the mistake this guards against)
    from datasets import Dataset

    merged = Dataset.from_list([{"a": {"order_id": "A1"}}, {"a": {"amount": 3}}])
    assert merged[0]["a"] == {"order_id": "A1", "amount": None}
    report = wai.export_dataset(rows, work / "x.jsonl", format="trl")
    assert wai.to_dataset(report)[0]["messages"] == dataset[0]["messages"]


def test_prompts_carry_the_users_columns_and_say_what_was_left_out(work):
    examples = Path(__file__).resolve().parents[2] / "examples" / "rollouts.jsonl"
    rows = wai.read_rows(examples)  # flat and OpenAI rows with the desk's own category / expected_action
    rows[1] = {**rows[1], "lineage": {"sampler": "a"}}  # differs between rollouts of one prompt
    report = wai.export_prompts(rows, work / "grpo.jsonl")
    out = [json.loads(line) for line in (work / "grpo.jsonl").read_text().splitlines()]
    assert len(out) == 60 and all(set(row) == {"prompt", "task", "calibration", "k", "passes", "fails",
                                               "scenario_id", "privileged", "category", "expected_action"}
                                  for row in out)
    by_task = {row["task"]: row for row in out}
    assert by_task["cancel-003"]["category"] == "cancel" and by_task["cancel-003"]["expected_action"] == "cancel_order"
    assert report.columns_carried == ["task", "calibration", "k", "passes", "fails", "scenario_id", "privileged",
                                      "category", "expected_action"]
    left = report.columns_left_out
    assert left["reward"] == left["rollout_index"] == "a property of one past rollout, not of the prompt"
    assert left["steps"].startswith("a past rollout's answer") and left["messages"] == "read into the prompt column"
    assert left["lineage"].startswith("differs between the rollouts of one prompt")
    assert "columns left out: lineage (differs between" in str(report)
    assert "columns carried: task, calibration, k, passes, fails, scenario_id" in str(report)

    chosen = wai.export_prompts(rows, work / "chosen.jsonl", columns=["category", "reference"])
    first = json.loads((work / "chosen.jsonl").read_text().splitlines()[0])
    assert "reference" not in first and first["category"] == "refund"  # no row has a reference: not invented
    assert chosen.columns_left_out["reference"] == "no row has it"
    assert chosen.columns_left_out["expected_action"] == "not in columns="


def test_a_refusal_for_pairs_that_differ_at_a_tool_result_says_so(tmp_path: Path) -> None:
    """Every task has a passing and a failing rollout: the fix is not "give each task both", it is the cause."""
    rows = [{"task_id": "t", "reward": 1.0, "messages": _side("a", "A1", "done", result="ok")},
            {"task_id": "t", "reward": 0.0, "messages": _side("a", "A1", "done", result="error")}]
    with pytest.raises(ExportRefusedError) as refused:
        wai.export_preference(rows, tmp_path / "pairs.jsonl")
    said = str(refused.value)
    assert "{'diverges_outside_agent_turn': 1}" in said
    assert "Fix: the pairs first differ at a tool result or a user turn, not at an agent turn" in said
    assert "at least one passing and one failing" not in said
    assert not (tmp_path / "pairs.jsonl").exists()
