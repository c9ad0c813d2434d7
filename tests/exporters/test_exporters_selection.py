"""What the trainer will learn from (no trainer here): the final_text rule, stamps carried, the train-step check.

A flat rollout whose steps end with the agent's reply and whose final_text repeats it is one turn; a differing
final_text keeps both and is counted. Every SFT, DPO and GRPO row carries its row's stamps. SFT rows with a
failing reward are refused unless check="warn"; DPO and GRPO count mixed tasks against min_mixed_tasks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import marked_rollout, refund_rollouts
from whileai_train.errors import ConfigError, RowError, TrainingSelectionError
from whileai_train.exporters.defaults import MIN_MIXED_TASKS, STAMP_COLUMNS
from whileai_train.exporters.preference import preference_rows
from whileai_train.exporters.prompts import prompt_rows
from whileai_train.tables.defaults import PASS_THRESHOLD


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _ending_with(reply: str, final: str | None, task: int = 0) -> dict[str, Any]:
    """A marked rollout whose steps end with the agent's reply `reply`, and final_text `final`."""
    row = marked_rollout(task)
    row["steps"].append({"text": reply})
    row["final_text"] = final
    return row


def _agent_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "assistant" and not m.get("tool_calls")]


# --- the final_text rule ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["trl", "openai"])
def test_a_final_text_repeating_the_last_reply_is_one_turn(fmt):
    repeated = _ending_with("AGENT-3 refunded A100", "AGENT-3 refunded A100")
    out, report = wai.training_rows([repeated], format=fmt)
    assert _agent_texts(out[0]["messages"]) == ["AGENT-3 refunded A100"]
    assert (report.final_text_repeated, report.final_text_differs) == (1, 0) and report.ok
    assert "written once: 1 rows" in str(report)
    # the same rollout without the repeated step writes the same conversation
    assert out == wai.training_rows([marked_rollout(0)], format=fmt)[0]


def test_a_differing_final_text_keeps_both_turns_and_is_counted():
    differing = _ending_with("AGENT-3 refunded A100", "AGENT-4 refund failed")
    out, report = wai.training_rows([differing], format="trl")
    assert _agent_texts(out[0]["messages"]) == ["AGENT-3 refunded A100", "AGENT-4 refund failed"]
    assert (report.final_text_repeated, report.final_text_differs) == (0, 1) and not report.ok
    assert any("final_text differs" in warning for warning in report.warnings)


def test_the_rule_holds_in_every_mode():
    repeated = _ending_with("AGENT-3 done", "AGENT-3 done")
    unrolled, report = wai.training_rows([repeated], format="trl", unroll=True)
    # lookup, refund, the reply: three agent turns, three samples (not four)
    assert [sample["completion"][0]["content"] for sample in unrolled][-1] == "AGENT-3 done"
    assert len(unrolled) == 3 and report.trained_messages == 3
    final, _ = wai.training_rows([repeated], format="trl", mask_mode="final")
    assert final[0]["completion"][0]["content"] == "AGENT-3 done"
    assert "AGENT-3 done" not in json.dumps(final[0]["prompt"])  # the context does not hold it twice
    openai_unrolled, _ = wai.training_rows([repeated], unroll=True, format="openai")
    assert len(openai_unrolled) == 3


def test_the_rule_only_reads_a_reply_not_a_tool_call_or_a_user_turn():
    after_tool = marked_rollout(0)  # steps end on a tool result: final_text is the reply
    assert _agent_texts(wai.training_rows([after_tool], format="trl")[0][0]["messages"]) == ["AGENT-3 refunded A100"]
    after_user = _ending_with("AGENT-3 done", None)
    after_user["steps"].append({"user": "AGENT-3 done"})  # a user turn with the same words is not the reply
    after_user["final_text"] = "AGENT-3 done"
    out, report = wai.training_rows([after_user], format="trl")
    assert _agent_texts(out[0]["messages"]) == ["AGENT-3 done", "AGENT-3 done"]
    assert (report.final_text_repeated, report.final_text_differs) == (0, 0)


def test_preference_sides_follow_the_rule():
    chosen = dict(_ending_with("AGENT-3 refunded A100", "AGENT-3 refunded A100"), reward=1.0)
    rejected = dict(_ending_with("AGENT-3 refund failed", "AGENT-3 refund failed"), reward=0.0)
    out, report = preference_rows([chosen, rejected])
    assert [m["content"] for m in out[0]["chosen"]] == ["AGENT-3 refunded A100"]
    assert [m["content"] for m in out[0]["rejected"]] == ["AGENT-3 refund failed"]
    assert report.trl_turns_cut == 0  # no repeated reply left after the diverging turn
    assert report.final_text_repeated == 2


# --- stamps ------------------------------------------------------------------------------------------------------


_CALIBRATION = {"task_id": "marked-0", "student": "tiny", "n": 8, "pass_rate": 0.375, "pass_rate_ci95": [0.14, 0.69],
                "mean_kl": None}


def _stamped(task: int = 0, **extra: Any) -> dict[str, Any]:
    row = dict(marked_rollout(task), scenario_id=f"s{task}", rollout_index=3, model_version="m-7",
               finish_reason="stop", markers={"polite": 1.0, "late": None}, calibration=_CALIBRATION,
               team="refunds")
    row.update(extra)
    return row


@pytest.mark.parametrize("fmt", ["trl", "openai"])
@pytest.mark.parametrize("options", [{}, {"unroll": True}, {"mask_mode": "final"}])
def test_sft_rows_carry_every_stamp_and_their_cap_counts(fmt, options):
    out, report = wai.training_rows([_stamped(), marked_rollout(1)], format=fmt, max_tool_output_chars=10,
                                    **options)
    first = [row for row in out if row["scenario_id"] == "s0"]
    assert first and all(row["calibration"] == _CALIBRATION and row["markers"] == {"polite": 1.0, "late": None}
                         for row in first)
    assert all((row["rollout_index"], row["model_version"], row["finish_reason"], row["team"], row["reward"])
               == (3, "m-7", "stop", "refunds", 1.0) for row in first)
    assert all("privileged" not in row for row in out)
    # one column set for the whole export (the row without stamps gets nulls)
    assert len({tuple(row) for row in out}) == 1 and set(STAMP_COLUMNS) <= set(out[0])
    assert all(row["calibration"] is None and row["team"] is None for row in out if row["scenario_id"] is None)
    # the source row's cap counts on each of its rows, the same figures the report adds once per source row
    assert {(row["tool_output_truncated"], row["tool_output_chars_cut"]) for row in first} == {(2, 15)}
    assert (report.tool_output_truncated, report.tool_output_chars_cut) == (4, 30)
    uncapped, _ = wai.training_rows([_stamped()], format=fmt, **options)  # no cap, no cap columns
    assert all("tool_output_truncated" not in row and "tool_output_chars_cut" not in row for row in uncapped)


def test_to_dataset_keeps_the_stamps_types(work):
    precise = _stamped(1, rollout_index=0, reward=0.5, markers=None)
    precise["steps"][0]["arguments"]["amount"] = 0.123456789012345  # datasets' own Json writes 0.123456789
    report = wai.export_dataset([_stamped(), precise], work / "s.jsonl", format="trl")
    dataset = wai.to_dataset(report)
    assert dataset[1]["messages"][1]["tool_calls"][0]["function"]["arguments"]["amount"] == 0.123456789012345
    assert dataset.features["rollout_index"].dtype == "int64" and dataset.features["reward"].dtype == "float64"
    assert dataset.features["model_version"].dtype == "string"
    assert dataset[0]["calibration"] == _CALIBRATION and dataset[0]["markers"] == {"polite": 1.0, "late": None}
    assert dataset[1]["markers"] is None and dataset[1]["rollout_index"] == 0 and dataset[1]["reward"] == 0.5


def test_keys_trl_would_read_or_first_seen_later_are_not_carried_but_counted():
    rows = [_stamped(), dict(_stamped(1), completion="stray", extra_late="x")]
    out, report = wai.training_rows(rows, format="trl")
    assert all("completion" not in row and "extra_late" not in row for row in out)
    assert report.columns_not_carried == {"completion": 1, "extra_late": 1}
    assert any("not carried as columns" in warning for warning in report.warnings)


def test_a_stamp_json_cannot_write_is_a_row_error(work):
    with pytest.raises(RowError, match="markers") as caught:
        wai.export_dataset([_stamped(), _stamped(1, markers={"x": float("nan")})], work / "n.jsonl", format="trl")
    assert caught.value.index == 1 and caught.value.field == "markers"
    assert list(work.iterdir()) == []


def test_preference_pairs_carry_the_task_stamps_once_and_each_sides_own():
    chosen = _stamped(0, reward=1.0, rollout_index=0)
    rejected = _stamped(0, reward=0.0, rollout_index=1, final_text="AGENT-3 sorry")
    (row,), _report = preference_rows([chosen, rejected])
    assert (row["scenario_id"], row["calibration"]) == ("s0", _CALIBRATION)
    assert (row["chosen_reward"], row["rejected_reward"]) == (1.0, 0.0)
    assert (row["chosen_rollout_index"], row["rejected_rollout_index"]) == (0, 1)
    assert (row["chosen_team"], row["rejected_markers"]) == ("refunds", {"polite": 1.0, "late": None})
    assert "privileged" not in row and "chosen_privileged" not in row


def test_given_pairs_carry_the_pairs_own_stamps():
    pair = {"prompt": "refund A1", "chosen": "done", "rejected": "no", "task_id": "t1", "calibration": _CALIBRATION,
            "batch": 7}
    (row,), _report = preference_rows([pair])
    assert (row["task_id"], row["calibration"], row["chosen_batch"], row["rejected_batch"]) == (
        "t1", _CALIBRATION, 7, 7)


# --- the train-step check: SFT ------------------------------------------------------------------------------------


def test_failing_sft_rows_are_refused_naming_how_many_and_which_tasks(work):
    rows = list(refund_rollouts(24))
    failing = [index for index, row in enumerate(rows) if row["reward"] < PASS_THRESHOLD]
    tasks: dict[str, int] = {}
    for index in failing:
        tasks[rows[index]["task_id"]] = tasks.get(rows[index]["task_id"], 0) + 1
    path = work / "sft.jsonl"
    with pytest.raises(TrainingSelectionError) as caught:
        wai.export_dataset(rows, path, format="trl")
    error = caught.value
    assert error.rows == failing and error.tasks == tasks
    assert f"{len(failing)} of 24 rows have a failing reward" in str(error) and "check='warn'" in str(error)
    assert all(task in str(error) for task in tasks)
    assert error.selection.failing == len(failing) and error.selection.passing == 24 - len(failing)
    assert list(work.iterdir()) == []  # nothing written, no temp file
    with pytest.raises(TrainingSelectionError):
        wai.training_rows(rows, format="trl", unroll=True)

    report = wai.export_dataset(rows, path, format="trl", check="warn")
    assert path.exists() and report.n_written == 24 and not report.ok
    assert report.selection.model_dump() == {
        "method": "sft", "check": "warn", "threshold": PASS_THRESHOLD, "rows": 24, "passing": 24 - len(failing),
        "failing": len(failing), "ungraded": 0, "failing_tasks": dict(sorted(tasks.items(), key=lambda t: -t[1])),
        "tasks_failing": len(tasks), "tasks_given": 6, "tasks_used": 6, "min_mixed_tasks": None, "dropped": []}
    assert any("trained anyway (check='warn')" in warning for warning in report.warnings)
    assert f"{len(failing)} failing (reward < 0.5)" in str(report)


def test_passing_and_ungraded_rows_pass_the_check(work):
    passes = [row for row in refund_rollouts(16) if row["reward"] >= PASS_THRESHOLD]
    ungraded = [dict(row, reward=None) for row in refund_rollouts(5)]
    report = wai.export_dataset(passes + ungraded, work / "ok.jsonl", format="trl")
    assert report.ok and report.selection.failing == 0
    assert (report.selection.passing, report.selection.ungraded) == (len(passes), 5)
    assert "5 ungraded (demonstrations: they pass the check)" in str(report)


def test_the_threshold_decides_and_bad_check_values_are_config_errors(work):
    rows = [dict(marked_rollout(0), reward=0.6)]
    assert wai.training_rows(rows, format="trl")[1].selection.passing == 1
    with pytest.raises(TrainingSelectionError):
        wai.training_rows(rows, format="trl", threshold=0.7)
    for bad in ("ignore", None, True):
        with pytest.raises(ConfigError, match="check="):
            wai.export_dataset(rows, work / "x.jsonl", check=bad)
    for bad in ("0.5", None, float("nan"), True):
        with pytest.raises(ConfigError, match="threshold="):
            wai.export_dataset(rows, work / "x.jsonl", threshold=bad)
        with pytest.raises(ConfigError, match="threshold="):
            wai.export_prompts(rows, work / "x.jsonl", threshold=bad)
    for bad in (-1, 2.5, "32"):
        with pytest.raises(ConfigError, match="min_mixed_tasks="):
            wai.export_preference(rows, work / "x.jsonl", min_mixed_tasks=bad)
    assert list(work.iterdir()) == []


def test_a_row_dropped_for_no_agent_turn_is_not_counted_as_trained():
    rows = [dict(marked_rollout(0), reward=1.0), {"prompt": "only an ask", "reward": 0.0}]
    _out, report = wai.training_rows(rows, format="trl")
    assert report.selection.rows == 1 and report.selection.failing == 0


# --- the train-step check: DPO and GRPO ----------------------------------------------------------------------------


def _graded(task: str, rewards: list[float | None], **extra: Any) -> list[dict[str, Any]]:
    rows = []
    for index, reward in enumerate(rewards):
        passed = reward is not None and reward >= PASS_THRESHOLD
        rows.append({"prompt": f"refund order for {task}", "task_id": task, "rollout_index": index, "reward": reward,
                     "steps": [{"tool": "refund", "arguments": {"order": task if passed else "B9"}, "result": "ok"}],
                     "final_text": "done" if passed else "failed", **extra})
    return rows


def test_preference_counts_mixed_tasks_and_warns_under_min_mixed_tasks():
    rows = (_graded("mixed-1", [1.0, 0.0]) + _graded("mixed-2", [1.0, 0.0, 0.0]) + _graded("solved", [1.0, 1.0])
            + _graded("hopeless", [0.0]) + _graded("raw", [None, None]))
    out, report = preference_rows(rows)
    selection = report.selection
    assert len(out) == 2 and (selection.tasks_used, selection.tasks_given) == (2, 5)
    assert selection.min_mixed_tasks == MIN_MIXED_TASKS == 32
    assert {d.kind: d.tasks for d in selection.dropped} == {"all_pass": 1, "all_fail": 1, "ungraded": 1}
    assert all(d.reason for d in selection.dropped)
    warning = next(w for w in report.warnings if "min_mixed_tasks" in w)
    assert "2 mixed tasks used of 5 given" in warning and "all_pass 1 (every graded rollout passed" in warning
    _out, enough = preference_rows(rows, min_mixed_tasks=2)
    assert not any("min_mixed_tasks" in w for w in enough.warnings)


def test_a_mixed_task_whose_pairs_all_drop_is_not_counted_as_used():
    same = _graded("same", [1.0, 0.0])
    same[1]["steps"], same[1]["final_text"] = same[0]["steps"], same[0]["final_text"]  # no divergence
    out, report = preference_rows(same + _graded("other", [1.0, 0.0]))
    assert len(out) == 1 and report.selection.tasks_used == 1
    assert [(d.kind, d.tasks) for d in report.selection.dropped] == [("no_usable_pair", 1)]


def test_grpo_prompt_rows_carry_the_group_and_the_calibration():
    calibration = {"task_id": "mixed-1", "n": 8, "pass_rate": 0.25}
    rows = (_graded("mixed-1", [1.0, 0.0, 0.0], calibration=calibration, gold="A1")
            + _graded("solved", [1.0, 1.0]) + _graded("raw", [None])
            + _graded("calibrated", [None], calibration={"task_id": "calibrated", "n": 4, "pass_rate": 0.5}))
    out, report = prompt_rows(rows)
    by_task = {row["task"]: row for row in out}
    assert len(out) == 4  # every prompt is written, one per task (the repeats share a prompt)
    assert (by_task["mixed-1"]["k"], by_task["mixed-1"]["passes"], by_task["mixed-1"]["fails"]) == (8, 1, 2)
    assert by_task["mixed-1"]["calibration"] == {**calibration, "student": None, "pass_rate_ci95": None,
                                                 "mean_kl": None}
    assert by_task["mixed-1"]["gold"] == "A1" and by_task["solved"]["gold"] is None
    assert (by_task["solved"]["k"], by_task["solved"]["passes"], by_task["solved"]["fails"]) == (2, 2, 0)
    assert (by_task["raw"]["k"], by_task["raw"]["calibration"]) == (0, None)
    selection = report.selection
    assert (selection.method, selection.tasks_used, selection.tasks_given) == ("grpo", 2, 4)
    assert {d.kind: d.tasks for d in selection.dropped} == {"all_pass": 1, "ungraded": 1}
    assert (selection.passing, selection.failing, selection.ungraded) == (3, 2, 2)
    assert any("2 mixed tasks used of 4 given" in w for w in report.warnings)
    # the stamp, measured over every repeat, decides over the rows at hand (here one passing row of a hard task)
    hard = _graded("hard", [1.0], calibration={"task_id": "hard", "n": 16, "pass_rate": 0.0625})
    solved = _graded("solved", [1.0, 0.0], calibration={"task_id": "solved", "n": 16, "pass_rate": 1.0})
    _out, stamped = prompt_rows(hard + solved)
    assert (stamped.selection.tasks_used, [(d.kind, d.tasks) for d in stamped.selection.dropped]) == (
        1, [("all_pass", 1)])
    assert report.trainer_config["reward kwargs"][:5] == ["task", "calibration", "k", "passes", "fails"]


def test_grpo_group_columns_cannot_be_overwritten_and_a_bad_stamp_is_named():
    for clash in (["k"], ["passes"], ["fails"], ["task"]):
        with pytest.raises(ConfigError):
            prompt_rows(_graded("t", [1.0]), columns=clash)
    out, _ = prompt_rows(_graded("t", [1.0]), columns=["calibration", "gold"])
    assert list(out[0]).count("calibration") == 1
    with pytest.raises(RowError, match="calibration") as caught:
        prompt_rows(_graded("t", [1.0, 0.0], calibration={"task_id": "t", "n": 0, "pass_rate": 2.0}))
    assert caught.value.index == 0
