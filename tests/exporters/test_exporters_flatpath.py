"""The one-walk path for flat rollouts (shape.flat_walk) gives what the general path gives.

The general path is conversation() + shape_row's loop + check_arguments + leaks.agent_said; the flat walk
does all four at once. These tests run both on varied rows (every step kind, odd values, caps, system
prompts, tools, leaks, bad input) and compare messages, counts, verdicts, written rows and errors.
"""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import REFUND_TOOLS, refund_rollouts
from whileai_train.exporters import shape
from whileai_train.exporters.leaks import agent_said, quotes_privileged


@pytest.fixture
def general(monkeypatch):
    """Run the block with the flat walk switched off (every row through the general path)."""
    def use_general() -> Any:
        monkeypatch.setattr(shape, "flat_walk", lambda *args, **kwargs: None)
    return use_general


def _varied_rows(n: int) -> list[dict[str, Any]]:
    rng = random.Random(11)
    values: list[Any] = ["A1", 5, 2.5, 1e-7, 1e17, True, None, [1, "x"], {"k": {"j": 1.5}}, (1, 2), "Straße ☃",
                         "internal  RISK code rc-0001", 2 ** 70]
    results: list[Any] = ["ok", {"order_id": "A1", "amount": 5}, [1, 2], None, 3.5, "x" * 40, "",
                          {"note": "Internal risk code RC-0001"}]
    rows = list(refund_rollouts(n))
    for i, row in enumerate(rows):
        steps: list[dict[str, Any]] = []
        for number in range(rng.randint(0, 5)):
            kind = rng.random()
            if kind < 0.55:
                step: dict[str, Any] = {"tool": rng.choice(["lookup", "refund", 7])}
                pick = rng.random()
                if pick < 0.6:
                    step["arguments"] = {f"a{k}": rng.choice(values) for k in range(rng.randint(0, 3))}
                elif pick < 0.7:
                    step["arguments"] = '{"order_id": "A1", "amount": 2.0e20}'
                elif pick < 0.75:
                    step["arguments"] = {1: "int key", "b": 1}
                elif pick < 0.8:
                    step["arguments"] = None
                elif pick < 0.85:
                    step["arguments"] = ""
                if rng.random() < 0.8:
                    step["result"] = rng.choice(results)
                if rng.random() < 0.2:
                    step["text"] = rng.choice(["thinking", "", 3, None])
                if rng.random() < 0.2:
                    step[rng.choice(["id", "call_id"])] = rng.choice(["c1", 9, "", 0])
            elif kind < 0.75:
                step = {"user": rng.choice(["please hurry", 4, ""])}
            else:
                step = {"text": rng.choice(["on it", "", 0, "said internal risk code RC-0001", ["a"]])}
            steps.append(step)
        row["steps"] = steps
        row["final_text"] = rng.choice([row["final_text"], None, "", "Internal Risk  Code RC-0001 it is"])
        if i % 5 == 1:  # steps that end with the agent's reply, and a final_text repeating it or not
            reply = rng.choice(["Refunded.", "on it", ""])
            steps.append({"text": reply})
            row["final_text"] = rng.choice([reply, reply, "Refund failed.", None])
        if rng.random() < 0.2:
            row["tools"] = rng.choice([REFUND_TOOLS, [], None])
        if rng.random() < 0.1:
            row["privileged"] = rng.choice([None, {"n": 123456}, ["internal risk code rc-0001"], {"a": "short"}])
        if i % 7 == 0:
            row["prompt"] = "You saw internal risk code RC-0001 already"
        if i % 13 == 5:  # bad input the general path names
            bad = rng.choice([("prompt", 5), ("final_text", 3), ("steps", "x"), ("steps", [{"nothing": 1}]),
                              ("steps", ["a step"]), ("steps", [{"tool": "t", "arguments": "{not json"}]),
                              ("steps", [{"tool": "t", "arguments": "[1]"}]),
                              ("steps", [{"tool": "t", "arguments": {"x": float("nan")}}]),
                              ("steps", [{"tool": "t", "arguments": {"x": {1, 2}}}]),
                              ("steps", [{"tool": "t", "arguments": {(1, 2): 1}}]),
                              ("steps", [MappingProxyType({"tool": "t", "arguments": {"a": 1}})]),
                              ("tools", "not json"), ("tools", 3)])
            row[bad[0]] = bad[1]
    return rows


_OPTIONS = [{}, {"max_tool_output_chars": 5}, {"system_prompt": "Be brief."}, {"tools": REFUND_TOOLS},
            {"max_tool_output_chars": 0, "system_prompt": "S", "tools": []}]


def _shape_all(rows: list[dict[str, Any]], options: dict[str, Any]) -> list[Any]:
    out = []
    for index, row in enumerate(rows):
        try:
            shaped = shape.shape_row(row, index, system_prompt=options.get("system_prompt"),
                                     max_tool_output_chars=options.get("max_tool_output_chars"),
                                     tools=options.get("tools"))
            verdict = shape.check_arguments(shaped)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            out.append((type(exc).__name__, str(exc)))
            continue
        said = shaped.said if shaped.said is not None else agent_said(shaped.messages)
        assert said == agent_said(shaped.messages)
        out.append((shaped.messages, shaped.agent, shaped.ask, shaped.capped, shaped.chars_cut,
                    shaped.outputs_capped, shaped.notes, shaped.tools, verdict, shaped.plain))
    return out


@pytest.mark.parametrize("options", _OPTIONS)
def test_flat_walk_shapes_as_the_general_path(options, general):
    rows = _varied_rows(400)
    walked = 0
    for index, row in enumerate(rows):
        try:
            walked += shape.flat_walk(row, index, None, None, None) is not None
        except Exception:  # noqa: BLE001,S112 - a refusal, compared with the general path's below
            continue
    assert walked > 300  # the flat walk takes the rows it can (the rest go the general way)
    fast = _shape_all(rows, options)
    general()
    assert _shape_all(rows, options) == fast
    assert any(isinstance(item, tuple) and len(item) == 2 for item in fast)  # some rows are refused


@pytest.mark.parametrize("options", [{}, {"mask_mode": "final"}, {"unroll": True}, {"max_tool_output_chars": 8},
                                     {"system_prompt": "Be brief.", "tools": REFUND_TOOLS}])
def test_flat_walk_exports_as_the_general_path(tmp_path, options, general):
    rows = [row for index, row in enumerate(_varied_rows(400)) if not isinstance(_shape_all([row], {})[0][0], str)]
    written = wai.export_dataset(rows, tmp_path / "fast.jsonl", format="trl", validate=False, check="warn", **options)
    general()
    again = wai.export_dataset(rows, tmp_path / "general.jsonl", format="trl", validate=False, check="warn",
                               **options)
    assert (tmp_path / "fast.jsonl").read_bytes() == (tmp_path / "general.jsonl").read_bytes()
    assert written.model_dump(exclude={"path"}) == again.model_dump(exclude={"path"})
    assert written.privileged_leaks and written.tool_call_roundtrip.invalid
    assert written.final_text_repeated and written.final_text_differs and written.selection.failing


def test_flat_walk_gives_the_general_path_in_every_exporter(tmp_path, general):
    """OpenAI SFT rows, preference pairs and GRPO prompts: the same rows and reports from both walks."""
    from whileai_train.exporters.preference import preference_rows
    from whileai_train.exporters.prompts import prompt_rows

    rows = [row for index, row in enumerate(_varied_rows(400)) if not isinstance(_shape_all([row], {})[0][0], str)]

    def everything() -> list[Any]:
        results = []
        for options in ({}, {"unroll": True}, {"mask_mode": "final", "max_tool_output_chars": 8}):
            out, report = wai.training_rows(rows, validate=False, check="warn", **options)
            results.append((out, report.model_dump()))
        out, report = preference_rows(rows, validate=False)
        results.append((out, report.model_dump()))
        out, report = prompt_rows(rows, system_prompt="S")
        results.append((out, report.model_dump()))
        return results

    fast = everything()
    general()
    assert everything() == fast
    assert fast[0][1]["final_text_repeated"] and fast[0][1]["final_text_differs"]
    assert fast[3][1]["selection"]["tasks_used"]


def test_leak_screen_reads_what_the_full_scan_reads():
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": "The CODE is\tRC-0001 and ΣΑΣ", "tool_calls": []}]
    for secret_text, expected in [("code is rc-0001", ["code is rc-0001"]), ("is   RC-0001 AND σας", ["is rc-0001 and σασ"]),
                                  ("code rc-0001", []), ("nothing here at all", [])]:
        assert quotes_privileged(messages, {"gold": secret_text}) == expected


def test_casefold_keeps_whitespace_apart():
    """The leak screen relies on it: casefold maps whitespace to itself and nothing else to whitespace."""
    for code in range(0x110000):
        char = chr(code)
        folded = char.casefold()
        if char.isspace():
            assert folded == char, hex(code)
        else:
            assert not any(part.isspace() for part in folded), hex(code)


def test_refund_rollouts_are_the_rows_they_were():
    """The generator was made cheaper (texts built once per task, randrange for randint): same rows, same order.

    The digests are those of the generator before that change (commit a4e8f3c), on CPython 3.11's random.
    """
    import hashlib
    import json

    def digest(rows: Any) -> str:
        return hashlib.sha256("".join(json.dumps(row) + "\n" for row in rows).encode()).hexdigest()

    assert digest(refund_rollouts(500)) == "3c15d612ff50d55a9ecb364a2456b32675b2ba38b60974d69fc57da769b85beb"
    assert digest(refund_rollouts(300, seed=5, tasks=3, rollouts_per_task=7)) == (
        "61553798495613022b2875cbdf9c19f9e077f4eddaaf7624b883767473e6cbca")
    first, second = refund_rollouts(2)
    assert first["steps"] is not second["steps"] and first["privileged"] is not second["privileged"]  # fresh rows
