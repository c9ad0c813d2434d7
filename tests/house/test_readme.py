"""The README runs as written.

Convention (also stated at the top of the README's Quick start): every ```python block of README.md is run, in the
order the README gives them, in ONE namespace, with the working directory a temporary copy of examples/. Nothing is
injected: a name a snippet uses comes from an earlier block (the one setup block builds the library's tiny model and
tokenizer with wai.tiny_model_and_tokenizer()). The trainer snippets run two steps on the CPU. The ```json rows of
the "Rows" section are read as rows, and the files in examples/ are what examples/make_examples.py writes.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLES = ROOT / "examples"


def _blocks(language: str) -> list[str]:
    """The bodies of the README's fenced blocks whose info string is `language` ("" for a bare fence), in order."""
    found: list[str] = []
    opened: str | None = None
    body: list[str] = []
    for line in README.splitlines():
        if line.startswith("```"):
            if opened is None:
                opened, body = line[3:].strip(), []
                continue
            if opened == language:
                found.append("\n".join(body) + "\n")
            opened = None
        elif opened is not None:
            body.append(line)
    return found


@pytest.mark.trainer
def test_every_python_block_of_the_readme_runs_in_order_in_one_namespace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _blocks("python")
    assert len(blocks) >= 10
    work = tmp_path / "examples"
    shutil.copytree(EXAMPLES, work)
    monkeypatch.chdir(work)
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    for number, block in enumerate(blocks):
        first = block.splitlines()[0]
        try:
            exec(compile(block, f"README.md python block {number} ({first})", "exec"), namespace)  # noqa: S102
        except Exception as error:  # name the block, whatever failed in it
            raise AssertionError(f"README python block {number} ({first!r}) failed: {type(error).__name__}: "
                                 f"{error}") from error
    out = capsys.readouterr().out
    # what the snippets say they print, they print
    report = namespace["report"]
    assert isinstance(report, wai.DeltaReport) and report.headline_verdict == "PASS"
    assert "kept: 49 of 240 rows from 49 of 60 prompts" in out
    assert (work / "sft.jsonl").exists() and (work / "dpo.jsonl").exists() and (work / "grpo.jsonl").exists()
    assert str(namespace["run"]).startswith("run sft-v2-eval (") and namespace["trainer"].state.global_step == 2
    from whileai_train.runs.store import LocalStore

    (sft,) = [r for r in LocalStore().list_runs() if r["name"] == "sft-v2"]  # the SFT snippet's run has its loss
    assert [p["step"] for p in LocalStore().points(sft["id"]) if "loss" in p] == [1, 2]


def test_the_delta_output_shown_in_the_readme_is_what_the_example_files_give() -> None:
    before = wai.trace_markers(wai.mark_grounding(wai.read_rows(EXAMPLES / "before.jsonl")))
    after = wai.trace_markers(wai.mark_grounding(wai.read_rows(EXAMPLES / "after.jsonl")))
    text = str(wai.delta_report(before, after, target="pass@1", must_not_regress=["honest_claims",
                                                                                  "argument_grounding"],
                                by="category"))
    (shown,) = [block for block in _blocks("") if block.startswith(("PASS:", "NO DIFFERENCE:", "FAIL:"))]
    lines = shown.splitlines()
    assert lines[0] == text.splitlines()[0]
    for line in lines[1:]:
        if "..." not in line:
            assert line in text.splitlines(), line


def test_the_rows_of_the_rows_section_are_rows() -> None:
    rows = [json.loads(block) for block in _blocks("json")]
    assert len(rows) == 2 and "steps" in rows[0] and "messages" in rows[1]
    assert [wai.task_key(row) for row in rows] == ["refund-007", "cancel-003"]
    out, report = wai.training_rows(rows, check="warn", validate=False)
    assert report.n_written == 2 and report.selection is not None and report.selection.failing == 1
    traced = wai.trace_markers(rows)
    assert traced[1]["markers"]["honest_claims"] == 0.0  # says it cancelled after the call failed


def test_the_examples_are_what_their_generator_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    written = generator.main(tmp_path)
    assert sorted(path.name for path in written) == sorted(path.name for path in EXAMPLES.iterdir()
                                                           if path.name != "make_examples.py")
    for path in written:
        assert path.read_bytes() == (EXAMPLES / path.name).read_bytes(), path.name
    rows = wai.read_rows(EXAMPLES / "rollouts.jsonl")
    assert len(rows) == 240 and len({row["scenario_id"] for row in rows}) == 60
    assert {"steps" in row for row in rows} == {True, False}  # flat and `messages` rows
    assert any(step.get("result") == "error: timeout" for row in rows for step in row.get("steps", ()))


def test_the_readme_names_no_function_the_package_does_not_have() -> None:
    assert "simulate" not in README
    called = set(re.findall(r"\bwai\.([a-zA-Z_]+)", README))
    assert called <= set(wai.__all__) | {"__version__"}, sorted(called - set(wai.__all__))
