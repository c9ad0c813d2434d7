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
    done = _gate(rows, "--mode", "sft", "--check", "warn", "--eval", eval_rows, "--json")  # failing rows on purpose
    assert done.returncode == 1, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["refused"] is None
    assert out["decontaminate"]["n_contaminated"] == 4 and out["decontaminate"]["n_same_task"] == 4


def test_clean_against_eval_and_sft_exit_0(tmp_path: Path) -> None:
    rows = _write(tmp_path / "rows.jsonl", _rows(MIXED))
    eval_rows = _write(tmp_path / "eval.jsonl", [{"scenario_id": "other", "prompt": "book a table for two"}])
    done = _gate(rows, "--mode", "sft", "--check", "warn", "--eval", eval_rows, "--json")  # failing rows on purpose
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


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _export(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai_train.cli", "export", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ), check=False)


def _failing_words(text: str) -> str:
    """The '<n> of <m> rows have a failing reward ... in <k> tasks: ...' part of a refusal, up to its first full stop."""
    start = text.index(" of ")
    start = text.rindex(" ", 0, start - 1) + 1 if " " in text[:start] else 0
    return text[start:text.index(". SFT imitates every row", start)]


def test_gate_sft_refuses_exactly_what_the_sft_export_refuses(tmp_path: Path) -> None:
    import whileai_train as wai

    rows = wai.read_rows(EXAMPLES / "rollouts.jsonl")  # flat and OpenAI `messages` rows, graded 0 / 0.5 / 1
    rows.append({"scenario_id": "no-reply", "prompt": "Is anyone there?", "reward": 0.0})  # no agent turn: not written
    source = _write(tmp_path / "rows.jsonl", rows)
    gate = _gate(source, "--mode", "sft", "--json")
    export = _export(source, tmp_path / "sft.jsonl")
    assert gate.returncode == 1 and export.returncode == 1, gate.stdout + export.stdout
    refused = json.loads(gate.stdout)["refused"]
    assert refused.startswith("publish_gate refused the rows: ")
    words = _failing_words(refused)
    failing = [row for row in rows[:-1] if row["reward"] < 0.5]
    tasks = {row["scenario_id"] for row in failing}
    assert failing and words.startswith(f"{len(failing)} of 240 rows have a failing reward (below 0.5), in "
                                        f"{len(tasks)} tasks: ")
    assert words == _failing_words(export.stdout + export.stderr)
    fix = refused[refused.index("Fix: "):]
    assert fix in export.stdout + export.stderr and "--check warn" in fix and "min_reward=0.5" in fix
    assert not (tmp_path / "sft.jsonl").exists()

    kept, report = wai.optimize(rows, mode="sft")  # the fix: the defaults are the export's pass threshold
    passing_tasks = {row["scenario_id"] for row in rows if row["reward"] >= 0.5}
    assert report.min_reward == 0.5 and report.kept == len(kept) == len(passing_tasks) < 60  # one per passing task
    passing = _write(tmp_path / "kept.jsonl", kept)
    assert _gate(passing, "--mode", "sft").returncode == 0
    assert _export(passing, tmp_path / "sft.jsonl").returncode == 0

    warned = _gate(source, "--mode", "sft", "--check", "warn")
    assert warned.returncode == 0 and f"{len(failing)} of 240 rows have a failing reward" in warned.stdout
    assert _export(source, tmp_path / "warned.jsonl", "--check", "warn").returncode == 0
