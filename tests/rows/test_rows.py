"""The row contract: task_key, conversation normalisation, readers and their typed errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai_train.errors import InputError, RowError, ToolArgumentsError
from whileai_train.rows.contract import Calibration, Row, calibration_of, conversation, reward_of, task_key
from whileai_train.rows.files import read_rows


def flat_row(**over):
    row = {
        "prompt": "refund order A1", "scenario_id": "s1", "rollout_index": 0, "reward": 1.0,
        "steps": [{"tool": "refund", "arguments": {"order_id": "A1"}, "result": {"ok": True}}],
        "final_text": "Refunded.", "custom": {"kept": 1},
    }
    row.update(over)
    return row


def test_task_key_prefers_scenario_then_task_then_prompt() -> None:
    assert task_key({"scenario_id": "s", "task_id": "t", "prompt": "p"}) == "s"
    assert task_key({"task_id": "t", "prompt": "p"}) == "t"
    assert task_key({"prompt": "p"}) == "p"
    assert task_key({"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "ask"}]}) == "ask"


def test_flat_row_becomes_messages_with_dict_arguments() -> None:
    messages = conversation(flat_row())
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    call = messages[1]["tool_calls"][0]
    assert call["function"] == {"name": "refund", "arguments": {"order_id": "A1"}}
    assert messages[2]["tool_call_id"] == call["id"]
    assert json.loads(messages[2]["content"]) == {"ok": True}


def test_string_arguments_are_decoded_once_or_twice() -> None:
    once = conversation(flat_row(steps=[{"tool": "t", "arguments": '{"a": 1}', "result": "r"}]))
    twice = conversation(flat_row(steps=[{"tool": "t", "arguments": json.dumps('{"a": 1}'), "result": "r"}]))
    assert once[1]["tool_calls"][0]["function"]["arguments"] == {"a": 1}
    assert twice[1]["tool_calls"][0]["function"]["arguments"] == {"a": 1}


def test_non_json_arguments_name_row_and_field() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        conversation(flat_row(steps=[{"tool": "t", "arguments": "{order: A1", "result": "r"}]), index=7)
    assert info.value.index == 7
    assert info.value.field == "steps[0].arguments"
    assert "row 7" in str(info.value) and "Fix:" in str(info.value)


def test_reward_of_wrong_type_is_typed() -> None:
    with pytest.raises(RowError) as info:
        reward_of({"reward": "1"}, 3)
    assert info.value.field == "reward" and info.value.index == 3
    assert reward_of({"reward": 1}) == 1.0
    assert reward_of({}) is None


def test_row_model_keeps_unknown_keys() -> None:
    row = Row.model_validate(flat_row())
    assert row.model_dump()["custom"] == {"kept": 1}


def test_calibration_bounds_and_reader() -> None:
    stamp = {"task_id": "s1", "n": 8, "pass_rate": 0.5, "pass_rate_ci95": [0.2, 0.8]}
    assert calibration_of({"calibration": stamp}) == Calibration(**stamp)
    assert calibration_of({"extra": {"calibration": stamp}}).n == 8
    assert calibration_of({}) is None
    with pytest.raises(ValueError):
        Calibration(task_id="s", n=0, pass_rate=0.5)
    with pytest.raises(ValueError):
        Calibration(task_id="s", n=1, pass_rate=1.5)


def test_jsonl_reader_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(InputError, match="no rows"):
        read_rows(empty)
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps(flat_row()) + "\n" + '{"prompt": "x", "ste')
    with pytest.raises(RowError, match="truncated") as info:
        read_rows(cut)
    assert info.value.index == 1
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(flat_row(rollout_index=i)) for i in range(3)) + "\n")
    assert [r["rollout_index"] for r in read_rows(good)] == [0, 1, 2]


def test_reader_refuses_a_single_dict() -> None:
    with pytest.raises(InputError, match="one row"):
        read_rows(flat_row())


def test_reader_takes_a_dataset() -> None:
    from datasets import Dataset

    rows = read_rows(Dataset.from_list([{"prompt": "a", "reward": 1.0}, {"prompt": "b", "reward": 0.0}]))
    assert [r["prompt"] for r in rows] == ["a", "b"]


def test_reader_takes_trl_completion_logs(tmp_path: Path) -> None:
    import pandas as pd

    folder = tmp_path / "completions"
    folder.mkdir()
    pd.DataFrame({"step": [1, 1], "prompt": ["p1", "p2"], "completion": ["c1", "c2"],
                  "exact": [1.0, 0.0], "length": [0.5, 0.25], "advantage": [0.1, -0.1]}
                 ).to_parquet(folder / "completions_00001.parquet")
    # two reward functions: TRL's reward is their sum weighted by GRPOConfig.reward_weights, which the log does
    # not hold; a sum outside [0, 1] is refused with the weights named, never read as a reward of 1.5
    with pytest.raises(RowError, match="reward_weights"):
        read_rows(folder)
    rows = read_rows(folder, reward_weights=[0.5, 1.0])
    assert [r["final_text"] for r in rows] == ["c1", "c2"]
    assert rows[0]["reward"] == pytest.approx(0.5 * 1.0 + 1.0 * 0.5)
    assert rows[1]["rewards"] == {"exact": 0.0, "length": 0.25}
    assert read_rows(folder, reward_weights={"length": 2.0, "exact": 0.0})[1]["reward"] == pytest.approx(0.5)
    assert read_rows(folder, reward_columns=["exact"])[0]["reward"] == 1.0


def test_prompt_text_reads_the_ask_in_every_shape() -> None:
    from whileai_train.rows.contract import prompt_text

    assert prompt_text({"prompt": "refund A1"}) == "refund A1"
    assert prompt_text({"prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "ask"}]}) == "ask"
    assert prompt_text({"messages": [{"role": "user", "content": "from messages"}]}) == "from messages"
    assert prompt_text({"final_text": "no ask"}) == ""


def test_a_conversational_prompt_in_trl_logs_stays_messages_not_its_json(tmp_path: Path) -> None:
    import pandas as pd

    from whileai_train import training_rows
    from whileai_train.rows.contract import prompt_text

    folder = tmp_path / "completions"
    folder.mkdir()
    prompt = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Refund order A1?"}]
    pd.DataFrame({"step": [3], "prompt": [prompt], "completion": [[{"role": "assistant", "content": "Refunded."}]],
                  "exact": [1.0]}).to_parquet(folder / "completions_00003.parquet")
    (row,) = read_rows(folder)
    assert prompt_text(row) == "Refund order A1?" and row["final_text"] == "Refunded."
    (out,), _ = training_rows([row], format="trl", check="warn")
    assert [m["content"] for m in out["messages"]] == ["Be brief.", "Refund order A1?", "Refunded."]
