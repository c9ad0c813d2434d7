"""Every export names a reward outside [0, 1] as optimize does (RowError: the row, the value, the rescale fix),
in Python and on the command line, whatever `check` says: 10.0 is not a pass rate, and a pass threshold read
against it would sort rows at random."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.cli import main
from whileai_train.demos.rollouts import refund_rollouts

SAID = "row 2, field 'reward': reward 10.0 is outside [0, 1]"


@pytest.fixture()
def rows() -> list[dict[str, Any]]:
    rows = list(refund_rollouts(8, tasks=4, seed=0))
    rows[2]["reward"] = 10.0
    return rows


def test_optimize_and_every_export_name_the_row_and_the_fix(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    with pytest.raises(wai.RowError, match="row 2, field 'reward': reward 10.0 is outside \\[0, 1\\]"):
        wai.optimize(rows, mode="rl")
    calls = {
        "export_dataset": lambda: wai.export_dataset(rows, tmp_path / "a.jsonl"),
        "export_dataset check=warn": lambda: wai.export_dataset(rows, tmp_path / "b.jsonl", check="warn"),
        "export_prompts": lambda: wai.export_prompts(rows, tmp_path / "c.jsonl"),
        "export_preference": lambda: wai.export_preference(rows, tmp_path / "d.jsonl"),
    }
    for name, call in calls.items():
        with pytest.raises(wai.RowError) as refused:
            call()
        assert str(refused.value).startswith(SAID), name
        assert "Fix: rescale rewards to 0..1" in str(refused.value), name
    assert not any((tmp_path / f"{x}.jsonl").exists() for x in "abcd")  # nothing written


@pytest.mark.parametrize("kind", ["prompts", "sft", "preference"])
def test_the_export_command_refuses_it_as_bad_input(rows: list[dict[str, Any]], tmp_path: Path, kind: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    args = ["export", str(source), str(tmp_path / "out.jsonl"), "--kind", kind]
    assert main([*args, "--check", "warn"] if kind == "sft" else args) == 2
    assert SAID in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()
