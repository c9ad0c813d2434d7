"""mark_grounding / ungrounded_arguments / grounding_report on rows built to a known truth."""

from __future__ import annotations

import json
from typing import Any

import pytest

import whileai_train as wai
from tests.helpers.marker_reference import hand_interval, per_task_means
from whileai_train.errors import ConfigError, RowError, ToolArgumentsError
from whileai_train.rows.contract import task_key


def refund_row(prompt: str, steps: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"prompt": prompt, "steps": steps, "final_text": "Done.", **extra}


def grounding(row: dict[str, Any], **kwargs: Any) -> float:
    (stamped,) = wai.mark_grounding([row], **kwargs)
    return float(stamped["markers"]["argument_grounding"])


def test_an_id_from_the_prompt_is_grounded_an_invented_one_is_not() -> None:
    given = refund_row("Refund order A123 please", [{"tool": "issue_refund", "arguments": {"order_id": "A123"},
                                                      "result": {"ok": True}}])
    invented = refund_row("Refund my blender please", [{"tool": "issue_refund", "arguments": {"order_id": "A999"},
                                                        "result": {"ok": True}}])
    assert grounding(given) == 1.0
    assert grounding(invented) == 0.0
    assert wai.ungrounded_arguments(invented) == [{"tool": "issue_refund", "key": "order_id", "value": "A999",
                                                   "call": "steps[0]"}]


def test_an_id_that_appeared_in_an_earlier_tool_result_is_grounded() -> None:
    found = refund_row("Refund my blender, my email is eli@example.com", [
        {"tool": "find_orders", "arguments": {"email": "eli@example.com"}, "result": {"orders": [{"id": "B77"}]}},
        {"tool": "issue_refund", "arguments": {"order_id": "B77"}, "result": {"ok": True}}])
    assert grounding(found) == 1.0
    # near miss the other way: the result came back only after the call that used it
    late = refund_row("Refund my blender", [
        {"tool": "issue_refund", "arguments": {"order_id": "B77"}, "result": {"ok": True}},
        {"tool": "find_orders", "arguments": {}, "result": {"orders": [{"id": "B77"}]}}])
    assert grounding(late) == 0.0


def test_user_and_system_turns_ground_but_the_agents_own_words_do_not() -> None:
    user_turn = refund_row("Refund please", [{"user": "it is order C5"},
                                             {"tool": "issue_refund", "arguments": {"order_id": "C5"}, "result": {}}])
    assert grounding(user_turn) == 1.0
    agent_said = refund_row("Refund please", [{"text": "I will use order C5"},
                                              {"tool": "issue_refund", "arguments": {"order_id": "C5"}, "result": {}}])
    assert grounding(agent_said) == 0.0
    messages = {"messages": [
        {"role": "system", "content": "Default warehouse: WH-9"},
        {"role": "user", "content": "Restock the kettle"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "type": "function", "function": {
            "name": "restock", "arguments": json.dumps({"warehouse": "WH-9", "item": {"name": "Kettle"}})}}]},
        {"role": "tool", "tool_call_id": "1", "content": "ok"}]}
    assert grounding(messages) == 1.0  # case-folded, nested arguments read too


def test_a_value_inside_a_longer_id_is_not_grounded() -> None:
    row = refund_row("Refund order A123, sku X-9", [{"tool": "issue_refund", "arguments": {"order_id": "A12"}}])
    assert grounding(row) == 0.0
    whole = refund_row("Refund order A123, sku X-9", [{"tool": "issue_refund", "arguments": {"order_id": "a123",
                                                                                         "sku": "X-9"}}])
    assert grounding(whole) == 1.0


def test_no_calls_is_grounded_numbers_are_not_checked() -> None:
    assert grounding(refund_row("Hello", [])) == 1.0
    assert grounding(refund_row("Refund A1", [{"tool": "issue_refund", "arguments": {"order_id": "A1", "amount": 42,
                                                                                      "full": True}}])) == 1.0


def test_a_row_with_only_prompt_and_final_text_made_no_call_and_is_grounded() -> None:
    """Rows with no calls count as grounded, and hack_scan takes such rows, so mark_grounding
    and grounding_report take them too."""
    rows = [{"prompt": "Refund order A1", "final_text": "Refunded order B7.", "reward": 1.0},
            {"prompt": "Where is my parcel?", "final_text": "On its way.", "reward": 0.0}]
    stamped = wai.mark_grounding(rows)
    assert [row["markers"] for row in stamped] == [{"argument_grounding": 1.0}] * 2 and "markers" not in rows[0]
    assert wai.ungrounded_arguments(rows[0]) == []
    report = wai.grounding_report(rows)
    assert report.n_rows == 2 and report.n_calls == 0 and report.n_ungrounded_rows == 0
    assert str(report).startswith("grounding: OK, every tool argument is grounded (0 calls over 2 rows)")
    wai.hack_scan(rows * 4)  # the gate takes the same rows
    with pytest.raises(RowError, match="steps is str"):  # a trajectory that is there but malformed still raises
        wai.mark_grounding([{"prompt": "x", "final_text": "y", "steps": "none"}])


def test_ignore_keys_and_allow() -> None:
    row = refund_row("Refund A1", [{"tool": "escalate", "arguments": {"order_id": "A1", "reason": "angry customer",
                                                                      "priority": "high"}, "result": {}}])
    assert grounding(row) == 0.0
    assert {item["key"] for item in wai.ungrounded_arguments(row)} == {"reason", "priority"}
    assert grounding(row, ignore_keys=["reason"], allow=["high", "low"]) == 1.0
    with pytest.raises(ConfigError, match="ignore_keys"):
        wai.mark_grounding([row], ignore_keys="reason")


def test_report_names_values_tools_and_rate() -> None:
    rows = []
    for i in range(40):
        invented = i % 4 == 0
        oid = f"Z{i}" if invented else f"A{i}"
        rows.append(refund_row(f"Refund order A{i}", [{"tool": "lookup_order", "arguments": {"order_id": f"A{i}"},
                                                       "result": {"ok": True}},
                                                      {"tool": "issue_refund", "arguments": {"order_id": oid},
                                                       "result": {"ok": True}}]))
    report = wai.grounding_report(rows)
    assert report.n_ungrounded_rows == 10 and report.rate == 0.25 and report.n_calls == 80
    assert report.by_tool == {"issue_refund": 10}
    assert report.examples[0] == {"row": 0, "tool": "issue_refund", "key": "order_id", "value": "Z0",
                                  "call": "steps[1]"}
    # every prompt differs, so each row is its own task: the interval is the bootstrap over 40 one-row tasks
    summary = report.argument_grounding
    assert summary is not None and summary.n_tasks == 40 and summary.n_bad == 10
    per_task = per_task_means([task_key(row) for row in rows], [0.0 if i % 4 == 0 else 1.0 for i in range(40)])
    assert summary.ci95 == pytest.approx(hand_interval(per_task), abs=1e-12)
    # the verdict's rate is the same reading turned round: 1 - the mean, 1 - the interval's ends
    assert report.rate_ci95 == pytest.approx((1 - summary.ci95[1], 1 - summary.ci95[0]), abs=1e-12)
    text = str(report)
    assert text.splitlines()[0].startswith("grounding: INVENTED VALUES in 10 of 40 rows")
    assert "not stamped here: 14 markers in other families" in text and "trace_markers(rows) stamps" in text
    assert report.model_dump()["by_tool"] == {"issue_refund": 10}
    clean = wai.grounding_report(rows[1:4])
    assert str(clean).startswith("grounding: OK") and clean.argument_grounding and clean.argument_grounding.degenerate


def test_stamping_keeps_input_and_bad_input_names_the_row() -> None:
    row = refund_row("Refund A1", [], markers={"resolved": 1.0})
    (stamped,) = wai.mark_grounding([row])
    assert row["markers"] == {"resolved": 1.0} and stamped["markers"] == {"resolved": 1.0, "argument_grounding": 1.0}
    with pytest.raises(ToolArgumentsError, match="row 1"):
        wai.mark_grounding([row, refund_row("x", [{"tool": "t", "arguments": "not json"}])])
    with pytest.raises(RowError, match="row 0.*neither `steps` nor `messages`"):
        wai.grounding_report([{"reply": "y", "reward": 1.0}])  # nothing of a trajectory at all
    with pytest.raises(RowError, match="markers"):
        wai.mark_grounding([refund_row("x", [], markers=[1.0])])
