"""The conformance corpus: rows as other tools write them (tests/formats/), through every public row function.

* openai_chat.jsonl: OpenAI chat completions (string and text-part content, `content: null` beside tool_calls whose
  arguments are JSON text, `refusal: null`, tool turns naming their tool_call_id, JSON-text and plain-text results);
* hf_trl.jsonl: a HF/TRL conversational data set (every content a parts list whose keys the data set null-filled,
  an empty parts list beside tool calls, object and JSON-text arguments, tool turns naming only the tool, a `tools`
  column as a list or as JSON text);
* anthropic.jsonl: Anthropic messages (a top-level `system` as text or blocks, text blocks, tool_use blocks with
  `input`, tool_result blocks riding in a user turn with string or block content and `is_error`);
* platform.jsonl: the platform schema (`messages` and `steps` both, `lineage`, a Calibration whose `student` is the
  policy object and whose `pass_rate_ci95` is a list, `seeded`, `faults`, `judge_meta`, keys of its own).

No function raises on these well-formed rows; every exported message is the source's text character for character
(text parts joined), never a stringified parts list; a row holding a non-text part is refused by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.errors import RowError
from whileai_train.rows.contract import calibration_of, prompt_text

FORMATS = Path(__file__).parents[1] / "formats"
FILES = sorted(path.name for path in FORMATS.glob("*.jsonl"))


def _rows(name: str) -> list[dict[str, Any]]:
    return wai.read_rows(FORMATS / name)


def _text(content: Any) -> str:
    """A source message's text, read here without the library: a string, or its text parts joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text") or "" for part in content if part.get("type") == "text")


def _source_texts(row: dict[str, Any]) -> set[str]:
    """Every text the source row's conversation holds (system, user, assistant and tool turns; results in blocks)."""
    texts = {_text(row.get("system"))} if "system" in row else set()
    for message in row["messages"]:
        content = message.get("content")
        texts.add(_text(content))
        for part in content if isinstance(content, list) else ():
            if part.get("type") == "tool_result":
                texts.add(_text(part.get("content")))
    return texts - {""}


def _stringified(text: str) -> bool:
    return '"type"' in text and '"text"' in text or text.lstrip().startswith("[{")


def test_the_corpus_has_the_four_shapes() -> None:
    assert FILES == ["anthropic.jsonl", "hf_trl.jsonl", "openai_chat.jsonl", "platform.jsonl"]
    for name in FILES:
        rows = _rows(name)
        assert len(rows) == 8 and len({wai.task_key(row) for row in rows}) == 2


def _every_row_function(rows: list[dict[str, Any]], tmp: Path) -> dict[str, Callable[[], Any]]:
    judge = lambda row: 1.0 if "refund" in wai.task_key(row) else 0.0
    stamped = wai.trace_markers(wai.mark_grounding(wai.style_markers(rows)))
    keyed = all("scenario_id" in row and "rollout_index" in row for row in rows)
    gold = wai.attach_labels(rows, {f"{row['scenario_id']}#{row['rollout_index']}": int(row["reward"])
                                    for row in rows}, kind="program") if keyed else rows
    return {
        "hack_scan": lambda: wai.hack_scan(rows),
        "hack_scan endorsed": lambda: wai.hack_scan(rows, endorsed=["tool:"], failure=["no_availability"]),
        "publish_gate": lambda: wai.publish_gate(rows, mode="rl", endorsed=["tool:"]),
        "optimize rl": lambda: wai.optimize(rows, mode="rl", endorsed=["tool:"], band=(0.0, 1.0)),
        "optimize sft": lambda: wai.optimize(rows, mode="sft", min_reward=1.0),
        "select_for_rl": lambda: wai.select_for_rl(rows),
        "select_for_sft": lambda: wai.select_for_sft(rows),
        "build_preference_pairs": lambda: wai.build_preference_pairs(rows),
        "curriculum": lambda: wai.curriculum(rows),
        "decontaminate": lambda: wai.decontaminate(rows, rows[:2]),
        "near_duplicate_prompts": lambda: wai.near_duplicate_prompts(rows),
        "dedupe_groups": lambda: wai.dedupe_groups(rows),
        "length_report": lambda: wai.length_report(rows),
        "reward_correlations": lambda: wai.reward_correlations(rows),
        "judge_trust": lambda: wai.judge_trust(gold, judge),
        "judge_probes": lambda: wai.judge_probes(rows, judge, sample=8),
        "pass_at": lambda: wai.pass_at(rows),
        "compare_runs": lambda: wai.compare_runs(rows, rows),
        "delta_report": lambda: wai.delta_report(stamped, stamped),
        "eval_variance": lambda: wai.eval_variance(rows, rows, rows),
        "marker_summary": lambda: wai.marker_summary(stamped),
        "trace_flag_report": lambda: wai.trace_flag_report(rows),
        "grounding_report": lambda: wai.grounding_report(rows),
        "ungrounded_arguments": lambda: [wai.ungrounded_arguments(row) for row in rows],
        "style_report": lambda: wai.style_report(rows),
        "refusal_report": lambda: wai.refusal_report(rows),
        "stage_report": lambda: wai.stage_report(wai.stamp_stage(rows, "rl")),
        "calibration_of": lambda: [wai.calibration_of(row) for row in rows],
        "training_rows": lambda: [wai.training_rows(rows, format=f, mask_mode=m, unroll=u, check="warn")
                                  for f in ("openai", "trl")
                                  for m, u in (("assistant", False), ("final", False), ("assistant", True))],
        "export_preference": lambda: [wai.export_preference(rows, tmp / f"dpo-{f}.jsonl", format=f)
                                      for f in ("trl", "openai")],
        "export_prompts": lambda: wai.export_prompts(rows, tmp / "grpo.jsonl"),
        "to_dataset": lambda: wai.to_dataset(wai.training_rows(rows, format="trl", check="warn")),
    }


@pytest.mark.parametrize("name", FILES)
def test_no_public_row_function_raises_on_a_well_formed_row(name: str, tmp_path: Path) -> None:
    import warnings

    rows = _rows(name)
    failed = {}
    for what, call in _every_row_function(rows, tmp_path).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small sets warn (few tasks, low k); raising is what is checked here
            try:
                call()
            except wai.PublishGateError as exc:  # a refusal is a verdict on the rows, not a failure to read them
                failed[what] = f"refused: {exc}"
            except Exception as exc:  # noqa: BLE001  (every failure is listed, not only the first)
                failed[what] = f"{type(exc).__name__}: {exc}"
    assert failed == {}


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("form", ["openai", "trl"])
def test_exported_text_is_the_source_text_character_for_character(name: str, form: str) -> None:
    rows = _rows(name)
    exported, _ = wai.training_rows(rows, format=form, mask_mode="assistant", check="warn")
    assert len(exported) == len(rows)
    for row, out in zip(rows, exported, strict=True):
        texts = [message["content"] for message in out["messages"]]
        assert all(isinstance(text, str) and not _stringified(text) for text in texts), texts
        assert set(texts) - {""} == _source_texts(row)
        for message in out["messages"]:
            for call in message.get("tool_calls") or ():
                arguments = call["function"]["arguments"]
                assert isinstance(arguments, dict if form == "trl" else str)


@pytest.mark.parametrize("name", FILES)
def test_every_export_shape_holds_text_not_parts(name: str, tmp_path: Path) -> None:
    rows = _rows(name)
    written = []
    for form in ("openai", "trl"):
        for mode, unroll in (("final", False), ("assistant", True)):
            out, _ = wai.training_rows(rows, format=form, mask_mode=mode, unroll=unroll, check="warn")
            written += out
        path = tmp_path / f"dpo-{form}.jsonl"
        wai.export_preference(rows, path, format=form)
        written += [json.loads(line) for line in path.read_text().splitlines()]
    prompts = tmp_path / "grpo.jsonl"
    wai.export_prompts(rows, prompts)
    written += [json.loads(line) for line in prompts.read_text().splitlines()]
    found = 0
    for record in written:
        for key in ("messages", "prompt", "completion", "chosen", "rejected", "preferred_output",
                    "non_preferred_output", "input"):
            value = record.get(key)
            messages = value.get("messages") if isinstance(value, dict) else value
            for message in messages if isinstance(messages, list) else ():
                found += 1
                assert isinstance(message["content"], str) and not _stringified(message["content"]), message
    assert found > 100


def test_the_platform_stamp_reads_typed_with_its_policy_object() -> None:
    row = _rows("platform.jsonl")[0]
    stamp = calibration_of(row)
    assert stamp is not None and stamp.pass_rate_ci95 == (0.15, 0.85)
    assert isinstance(stamp.student, wai.Policy) and stamp.student.version == "sft-v2"
    assert calibration_of({"calibration": {**row["calibration"], "student": "sft-v2"}}).student == "sft-v2"  # type: ignore[union-attr]
    assert wai.Row.model_validate(row).calibration == stamp
    for other in ("openai_chat.jsonl", "hf_trl.jsonl", "anthropic.jsonl"):
        for source in _rows(other):
            wai.Row.model_validate(source)  # parts and blocks are content the row model accepts


@pytest.mark.parametrize("bad, field", [
    ({"n": 0}, "calibration.n"), ({"pass_rate": 1.5}, "calibration.pass_rate"),
    ({"student": 7}, "calibration.student"), ({"pass_rate_ci95": [0.1]}, "calibration.pass_rate_ci95"),
])
def test_a_bad_stamp_is_a_row_error_naming_row_and_field_everywhere(bad: dict[str, Any], field: str,
                                                                     tmp_path: Path) -> None:
    rows = _rows("platform.jsonl")
    rows[4] = {**rows[4], "calibration": {**rows[4]["calibration"], **bad}}  # the stamp its task is read by
    for call in (lambda: wai.curriculum(rows), lambda: wai.export_prompts(rows, tmp_path / "p.jsonl"),
                 lambda: calibration_of(rows[4], 4)):
        with pytest.raises(RowError) as info:
            call()
        assert info.value.index == 4 and info.value.field == field
    assert not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize("part", [
    {"type": "image_url", "image_url": {"url": "https://example.com/lid.png"}},
    {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
    {"type": "file", "file": {"file_id": "file-abc"}},
])
def test_a_non_text_part_is_refused_by_name_and_nothing_is_written(part: dict[str, Any], tmp_path: Path) -> None:
    rows = _rows("openai_chat.jsonl")
    message = rows[5]["messages"][1]
    rows[5]["messages"][1] = {**message, "content": [{"type": "text", "text": message["content"]}, part]}
    path = tmp_path / "sft.jsonl"
    with pytest.raises(RowError) as info:
        wai.export_dataset(rows, path, check="warn")
    assert info.value.index == 5 and info.value.field == "messages[1].content[1]"
    assert repr(part["type"]) in str(info.value) and "Fix:" in str(info.value)
    assert not path.exists()
    # the checks that only read text skip the part and read the rest
    assert wai.hack_scan(rows).n_rows == 8
    assert prompt_text(rows[5]) == message["content"]
