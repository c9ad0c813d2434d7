"""`whileai-train gate` run as a subprocess on files the test writes: exit codes, reports, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _rows(outcomes: dict[str, list[float]]) -> list[dict]:
    return [{"scenario_id": task, "prompt": f"Please cancel reservation {task} for the customer", "rollout_index": i,
             "steps": [{"tool": "cancel", "arguments": {"id": task}, "result": "ok"}] if reward else [],
             "final_text": f"Reservation {task} is cancelled." if reward else "I could not do that.",
             "reward": reward}
            for task, rewards in outcomes.items() for i, reward in enumerate(rewards)]


def _gate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai_train.cli", "gate", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ), check=False)


MIXED = {f"r{i}": [1.0, 0.0, 1.0, 0.0] for i in range(6)}


def test_unanimous_rl_set_is_refused_with_exit_1_and_json_says_why(tmp_path: Path) -> None:
    rows = _write(tmp_path / "rows.jsonl", _rows({"easy": [1.0] * 4, "hard": [0.0] * 4}))
    done = _gate(rows, "--mode", "rl", "--json")
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    assert out["exit_code"] == 1 and "no mixed group" in out["refused"]
    assert out["publish_gate"]["verdict"] == "REFUSED"
    assert "optimize" not in out  # no preview of a refused set


def test_fit_rl_set_exits_0_and_prints_the_reports(tmp_path: Path) -> None:
    rows = _write(tmp_path / "rows.jsonl", _rows(MIXED))
    done = _gate(rows, "--mode", "rl", "--no-scan")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("publish_gate: ")
    assert "pass@1 0.500" in done.stdout
    assert "optimize preview" in done.stdout and "optimize rl: " in done.stdout
    assert "12 of 24 rows, 6 of 6 asks" in done.stdout  # every ask at 0.5; the repeated trajectories go
    assert "gate: fit to train (exit 0)" in done.stdout


def test_contamination_against_eval_exits_1(tmp_path: Path) -> None:
    rows = _write(tmp_path / "rows.jsonl", _rows(MIXED))
    eval_rows = _write(tmp_path / "eval.jsonl", [{"scenario_id": "r3", "prompt": "something else entirely"}])
    done = _gate(rows, "--mode", "sft", "--eval", eval_rows, "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["refused"] is None
    assert out["decontaminate"]["n_contaminated"] == 4 and out["decontaminate"]["n_same_task"] == 4


def test_clean_against_eval_and_sft_exit_0(tmp_path: Path) -> None:
    rows = _write(tmp_path / "rows.jsonl", _rows(MIXED))
    eval_rows = _write(tmp_path / "eval.jsonl", [{"scenario_id": "other", "prompt": "book a table for two"}])
    done = _gate(rows, "--mode", "sft", "--eval", eval_rows, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["decontaminate"]["n_contaminated"] == 0 and "optimize" not in out


@pytest.mark.parametrize("case", ["missing_file", "strict_without_endorsed", "bad_reward"])
def test_unusable_input_exits_2_with_the_fix(tmp_path: Path, case: str) -> None:
    rows = _write(tmp_path / "rows.jsonl", _rows(MIXED))
    if case == "missing_file":
        done = _gate(tmp_path / "nope.jsonl", "--mode", "rl")
        expected = "no such file"
    elif case == "strict_without_endorsed":
        done = _gate(rows, "--mode", "rl", "--strict-hacks")
        expected = "endorsed"
    else:
        bad = _rows(MIXED)
        bad[2]["reward"] = 5
        done = _gate(_write(tmp_path / "bad.jsonl", bad), "--mode", "rl")
        expected = "row 2, field 'reward'"
    assert done.returncode == 2, done.stdout + done.stderr
    assert expected in done.stdout and "Fix" in done.stdout
