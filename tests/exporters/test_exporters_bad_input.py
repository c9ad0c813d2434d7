"""Bad input: a typed error naming the row and the field, and no file (not even a temp file) left behind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import refund_rollouts
from whileai_train.errors import InputError, RowError, ToolArgumentsError

EXPORTS = {
    "sft": lambda rows, path: wai.export_dataset(rows, path, format="trl"),
    "openai": lambda rows, path: wai.export_dataset(rows, path, format="openai"),
    "unroll": lambda rows, path: wai.export_dataset(rows, path, format="trl", unroll=True),
    "preference": lambda rows, path: wai.export_preference(rows, path),
    "prompts": lambda rows, path: wai.export_prompts(rows, path),
}


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _rows(n: int = 40) -> list[dict[str, Any]]:
    return list(refund_rollouts(n))


def _broken(kind: str) -> tuple[list[dict[str, Any]], int, str]:
    rows = _rows()
    if kind == "missing":
        del rows[17]["prompt"]
        return rows, 17, "prompt"
    if kind == "arguments":
        rows[23]["steps"][0]["arguments"] = "{order_id: A1"
        return rows, 23, "steps[0].arguments"
    if kind == "messages_arguments":
        rows[5] = {"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "[1, 2]"}}]}]}
        return rows, 5, "messages[1].tool_calls[0].function.arguments"
    if kind == "reward":
        rows[31]["reward"] = "high"
        return rows, 31, "reward"
    if kind == "role":
        rows[2] = {"messages": [{"role": "bot", "content": "x"}]}
        return rows, 2, "messages[0].role"
    raise AssertionError(kind)


# prompt rows do not read the reward, so the prompts exporter has no "reward" case
BAD_CASES = [(export, kind) for export in sorted(EXPORTS)
             for kind in ["missing", "arguments", "messages_arguments", "reward", "role"]
             if not (export == "prompts" and kind == "reward")]


@pytest.mark.parametrize(("export", "kind"), BAD_CASES)
def test_bad_row_is_a_typed_error_naming_row_and_field_and_writes_nothing(work, export, kind):
    rows, index, field = _broken(kind)
    with pytest.raises(RowError) as caught:
        EXPORTS[export](rows, work / "out.jsonl")
    assert (caught.value.index, caught.value.field) == (index, field)
    assert f"row {index}" in str(caught.value) and "Fix:" in str(caught.value)
    if "arguments" in kind:
        assert isinstance(caught.value, ToolArgumentsError)
    assert list(work.iterdir()) == []


def test_nan_arguments_are_a_tool_arguments_error(work):
    rows = _rows(3)
    rows[1]["steps"][0]["arguments"] = {"amount": float("nan")}
    with pytest.raises(ToolArgumentsError) as caught:
        wai.export_dataset(rows, work / "out.jsonl", format="trl")
    assert caught.value.index == 1 and "arguments" in caught.value.field
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("export", sorted(EXPORTS))
def test_empty_input_is_an_input_error(work, export):
    empty = work / "empty.jsonl"
    empty.write_text("")
    for source in ([], empty, iter(())):
        with pytest.raises(InputError):
            EXPORTS[export](source, work / "out.jsonl")
    assert sorted(p.name for p in work.iterdir()) == ["empty.jsonl"]


@pytest.mark.parametrize("export", sorted(EXPORTS))
def test_truncated_jsonl_is_named_and_nothing_is_written(work, export):
    source = work / "rows.jsonl"
    text = "".join(json.dumps(row) + "\n" for row in _rows(10))
    source.write_text(text[:-40])  # the last line is cut off
    with pytest.raises(RowError, match="truncated") as caught:
        EXPORTS[export](source, work / "out.jsonl")
    assert caught.value.index == 9
    assert sorted(p.name for p in work.iterdir()) == ["rows.jsonl"]


def test_an_error_deep_in_a_stream_leaves_no_partial_file(work):
    def stream():
        yield from refund_rollouts(5000)
        yield {"prompt": 7}

    with pytest.raises(RowError) as caught:
        wai.export_dataset(stream(), work / "out.jsonl", format="trl")
    assert caught.value.index == 5000 and caught.value.field == "prompt"
    assert list(work.iterdir()) == []


def test_an_existing_file_is_kept_when_the_new_export_is_refused(work):
    path = work / "out.jsonl"
    wai.export_dataset(_rows(3), path, format="trl", check="warn")
    before = path.read_text()
    rows = _rows(3)
    rows[2]["reward"] = [1]
    with pytest.raises(RowError):
        wai.export_dataset(rows, path, format="trl")
    assert path.read_text() == before and sorted(p.name for p in work.iterdir()) == ["out.jsonl"]
