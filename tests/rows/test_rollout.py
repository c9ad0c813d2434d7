"""from_row / to_row: a row to and from the schema's Rollout, with the calibration stamp on
rollout.extra["calibration"] and written out again; every report reads the round-tripped row as the original."""

from __future__ import annotations

import json
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.rows.contract import conversation

STAMP = {"task_id": "refund-1", "student": "policy-3", "n": 8, "pass_rate": 0.375, "pass_rate_ci95": [0.14, 0.69]}


def _flat(index: int, reward: float, **extra: Any) -> dict[str, Any]:
    return {"scenario_id": "refund-1", "rollout_id": f"r{index}", "rollout_index": index, "prompt": "Refund order A1",
            "steps": [{"tool": "lookup", "arguments": {"order_id": "A1"}, "result": "order A1: 20 USD"}],
            "final_text": f"Refunded 20 USD (attempt {index}).", "reward": reward,
            "markers": {"argument_grounding": 1.0, "resolved": reward}, "lineage": {"source": "sim", "seed": 4},
            "policy_version": "policy-3", "gold_reward": reward, **extra}


def _messages(index: int, reward: float) -> dict[str, Any]:
    return {"task_id": "cancel-9", "rollout_index": index, "reward": reward, "finish_reason": "stop",
            "messages": [{"role": "system", "content": "You run the booking desk."},
                         {"role": "user", "content": "Cancel booking B9"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c1", "type": "function",
                              "function": {"name": "cancel", "arguments": '{"booking": "B9"}'}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "cancelled"},
                         {"role": "assistant", "content": f"Booking B9 is cancelled ({index})."}],
            "tools": [{"type": "function", "function": {"name": "cancel", "parameters": {"type": "object"}}}],
            "extra": {"calibration": {"task_id": "cancel-9", "n": 4, "pass_rate": 0.5}, "team": "desk"}}


def test_the_stamp_rides_on_extra_and_is_written_out_again() -> None:
    row = _flat(0, 1.0, calibration=STAMP)
    rollout = wai.from_row(row)
    assert isinstance(rollout, wai.Rollout)
    assert rollout.extra["calibration"] == STAMP  # the Calibration typed, then as JSON
    assert rollout.task_id == rollout.scenario_id == "refund-1" and rollout.rollout_id == "r0"
    assert rollout.reward == 1.0 and rollout.markers == {"argument_grounding": 1.0, "resolved": 1.0}
    assert rollout.extra["lineage"] == {"source": "sim", "seed": 4} and rollout.extra["gold_reward"] == 1.0
    assert [m.role for m in rollout.messages] == ["user", "assistant", "tool", "assistant"]
    back = wai.to_row(rollout)
    assert back["calibration"] == STAMP and wai.calibration_of(back) == wai.calibration_of(row)
    assert "calibration" not in row["lineage"] and row["calibration"] is STAMP  # the input is not changed


def test_a_stamp_under_the_rows_extra_is_read_and_written_at_calibration() -> None:
    row = _messages(0, 1.0)
    rollout = wai.from_row(row)
    assert rollout.extra == {"calibration": {"task_id": "cancel-9", "n": 4, "pass_rate": 0.5}, "team": "desk"}
    assert rollout.tools == row["tools"] and rollout.finish_reason == "stop" and rollout.task_id == "cancel-9"
    back = wai.to_row(rollout)
    assert back["calibration"] == {"task_id": "cancel-9", "n": 4, "pass_rate": 0.5} and back["team"] == "desk"
    assert wai.calibration_of(back) == wai.calibration_of(row)


@pytest.mark.parametrize("make", [_flat, _messages])
def test_every_report_reads_the_round_trip_as_the_original(make: Any) -> None:
    rows = [make(i, float(i % 3 == 0)) for i in range(6)]
    again = [wai.to_row(wai.from_row(row)) for row in rows]
    assert [wai.task_key(r) for r in again] == [wai.task_key(r) for r in rows]
    assert [conversation(r) for r in again] == [conversation(r) for r in rows]
    assert [wai.calibration_of(r) for r in again] == [wai.calibration_of(r) for r in rows]
    assert wai.pass_at(again).model_dump() == wai.pass_at(rows).model_dump()
    assert wai.marker_summary(again).model_dump() == wai.marker_summary(rows).model_dump()
    assert [r["markers"] for r in wai.mark_grounding(again)] == [r["markers"] for r in wai.mark_grounding(rows)]
    # the JSON of a Rollout reads back: to_row takes its model_dump too
    through_json = [wai.to_row(json.loads(wai.from_row(row).model_dump_json())) for row in rows]
    assert through_json == again


def test_a_flat_rows_system_prompt_is_the_first_turn() -> None:
    rollout = wai.from_row({**_flat(0, 1.0), "system_prompt": "Be brief."})
    assert rollout.messages[0].role == "system" and rollout.messages[0].content == "Be brief."
    assert "system_prompt" not in rollout.extra


def test_a_trl_completion_becomes_the_agents_turns() -> None:
    for completion in ("4", [{"role": "assistant", "content": "4"}]):
        row = {"prompt": [{"role": "user", "content": "2+2?"}], "completion": completion, "reward": 1.0}
        rollout = wai.from_row(row)
        assert [(m.role, m.content) for m in rollout.messages] == [("user", "2+2?"), ("assistant", "4")]
        assert "completion" not in rollout.extra
        back = wai.to_row(rollout)
        assert wai.task_key(back) == wai.task_key(row) == "2+2?" and back["reward"] == 1.0
        assert wai.pass_at([back]).pass_at_1 == 1.0
    evaluated = {**_flat(0, 1.0), "completion": "Refunded 20 USD (attempt 0)."}  # evaluate's rows: steps + completion
    assert wai.from_row(evaluated).extra["completion"] == evaluated["completion"]


def test_bad_rows_are_row_errors_naming_the_field() -> None:
    with pytest.raises(wai.RowError, match="calibration.n"):
        wai.from_row(_flat(0, 1.0, calibration={"task_id": "refund-1", "n": 0, "pass_rate": 0.5}), 3)
    with pytest.raises(wai.RowError, match="row 2, field 'reward'"):
        wai.from_row({**_flat(0, 1.0), "reward": "yes"}, 2)
    with pytest.raises(wai.RowError, match="markers"):
        wai.from_row({**_flat(0, 1.0), "markers": {"resolved": "high"}})
    with pytest.raises(wai.RowError, match="neither `messages` nor `prompt`"):
        wai.from_row({"reward": 1.0})
    with pytest.raises(wai.RowError, match="not a Rollout"):
        wai.to_row({"messages": []})
    with pytest.raises(wai.RowError, match="one row"):
        wai.from_row([_flat(0, 1.0)])  # type: ignore[arg-type]
