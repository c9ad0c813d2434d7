"""ExportOptions: the exporters' shared keywords as one value, checked when built, the same export either way."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import REFUND_TOOLS, refund_rollouts
from whileai_train.errors import ConfigError
from whileai_train.exporters.preference import preference_rows


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def _graded(n: int) -> list[dict[str, Any]]:
    """Rollouts of a few tasks, passing and failing by turns: SFT rows under check='warn', and DPO pairs."""
    return [dict(row, reward=float(index % 2), task_id=f"t{index // 4}")
            for index, row in enumerate(refund_rollouts(n))]


def test_every_field_has_help_and_each_exporter_defaults_its_keywords_to_the_fields() -> None:
    """One place for each default: a keyword of an exporter that is a field defaults to that field's default."""
    fields = {option.name: option for option in dataclasses.fields(wai.ExportOptions)}
    assert all(option.metadata.get("help") for option in fields.values())
    for exporter in (wai.export_dataset, wai.training_rows, wai.export_preference, preference_rows):
        parameters = inspect.signature(exporter).parameters
        shared = [name for name in parameters if name in fields]
        assert len(shared) >= 9, exporter.__name__
        for name in shared:
            assert parameters[name].default == fields[name].default, (exporter.__name__, name)
        assert parameters["options"].default is None
        assert parameters["options"].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(dataclasses.FrozenInstanceError):
        wai.ExportOptions().format = "openai"  # type: ignore[misc]


def test_options_write_what_the_same_keywords_write(work: Path) -> None:
    rows = _graded(8)
    asked: dict[str, Any] = {"format": "openai", "unroll": True, "max_tool_output_chars": 40,
                             "system_prompt": "You are the refund desk.", "tools": REFUND_TOOLS, "check": "warn"}
    by_keywords = wai.export_dataset(rows, work / "keywords.jsonl", **asked)
    by_options = wai.export_dataset(rows, work / "options.jsonl", options=wai.ExportOptions(**asked))
    assert (work / "keywords.jsonl").read_text() == (work / "options.jsonl").read_text()
    assert by_keywords.model_dump(exclude={"path"}) == by_options.model_dump(exclude={"path"})
    assert by_options.format == "openai" and by_options.unrolled and by_options.tool_output_truncated > 0
    out, report = wai.training_rows(rows, options=wai.ExportOptions(**asked))
    assert [json.loads(line) for line in (work / "options.jsonl").read_text().splitlines()] == json.loads(
        json.dumps(out))
    assert report.model_dump(exclude={"path"}) == by_options.model_dump(exclude={"path"})


def test_one_options_value_serves_the_sft_and_the_preference_export(work: Path) -> None:
    """The preference export reads the fields it shares; the SFT-only ones (unroll, check) are not its own."""
    rows = _graded(8)
    options = wai.ExportOptions(system_prompt="SYS-MARK", max_tool_output_chars=40, unroll=True, check="warn")
    sft = wai.export_dataset(rows, work / "sft.jsonl", options=options)
    dpo = wai.export_preference(rows, work / "dpo.jsonl", options=options)
    same = wai.export_preference(rows, work / "dpo-keywords.jsonl", system_prompt="SYS-MARK",
                                 max_tool_output_chars=40)
    assert sft.unrolled and sft.n_written > len(rows) and dpo.n_written > 0
    assert (work / "dpo.jsonl").read_text() == (work / "dpo-keywords.jsonl").read_text()
    assert dpo.model_dump(exclude={"path"}) == same.model_dump(exclude={"path"})
    assert "SYS-MARK" in (work / "dpo.jsonl").read_text()


def test_a_keyword_beside_options_overrides_it_where_it_differs_from_the_default(work: Path) -> None:
    rows = _graded(4)
    options = wai.ExportOptions(format="openai", check="warn", system_prompt="FIRST")
    _, report = wai.training_rows(rows, options=options, mask_mode="final")
    assert report.format == "openai" and report.mask_mode == "final"  # the keyword joined the options
    out, report = wai.training_rows(rows, options=options, format="trl", system_prompt="SECOND")
    assert report.format == "openai"  # format="trl" is the default: it leaves the options' value
    assert out[0]["messages"][0] == {"role": "system", "content": "SECOND"}
    assert options.system_prompt == "FIRST"  # frozen: the call's options are a new value


def test_a_mistake_raises_when_the_options_are_built_and_names_the_fix(work: Path) -> None:
    with pytest.raises(ConfigError, match="unroll=True trains every agent turn once"):
        wai.ExportOptions(unroll=True, mask_mode="final")
    with pytest.raises(ConfigError, match="max_tool_output_chars=-1"):
        wai.ExportOptions(max_tool_output_chars=-1)
    with pytest.raises(ConfigError, match="min_mixed_tasks="):
        wai.ExportOptions(min_mixed_tasks=-1)
    with pytest.raises(ConfigError, match="check='ignore'"):
        wai.export_dataset(_graded(2), work / "x.jsonl", options=wai.ExportOptions(), check="ignore")
    with pytest.raises(ConfigError, match="pass a wai.ExportOptions"):
        wai.export_dataset(_graded(2), work / "x.jsonl", options={"format": "trl"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="format='hf'"):  # before the rows are read: a path that is not there
        wai.export_preference(work / "missing.jsonl", work / "x.jsonl", format="hf")
    assert list(work.iterdir()) == []
