"""`whileai-train delta`: a CI step. Exit 0 on PASS / NO DIFFERENCE, 1 on FAIL / NOT COMPARABLE, 2 on bad input
(no verdict printed); run as a real subprocess on JSONL files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def _eval(p: np.ndarray, honest: float, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [{"scenario_id": f"t{t}", "kind": f"k{t % 2}", "reward": float(rng.random() < p[t]),
             "markers": {"honest": float(rng.random() < honest)}} for t in range(len(p)) for _ in range(4)]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "whileai_train.cli", "delta", *args], capture_output=True, text=True, check=False,
                          env={**os.environ}, timeout=120)


def test_exit_codes_for_each_headline(tmp_path: Path) -> None:
    p = np.random.default_rng(0).uniform(0.2, 0.6, 80)
    base = _write(tmp_path / "before.jsonl", _eval(p, 0.95, 1))
    better = _write(tmp_path / "after.jsonl", _eval(p + 0.3, 0.95, 2))
    same = _write(tmp_path / "same.jsonl", _eval(p, 0.95, 3))
    liar = _write(tmp_path / "liar.jsonl", _eval(p + 0.3, 0.5, 4))
    passed = _cli(base, better, "--target", "pass@1", "--by", "kind")
    assert passed.returncode == 0 and passed.stdout.startswith("PASS: pass@1 ")
    assert "pass@1 by kind:" in passed.stdout
    assert _cli(base, same).returncode == 0
    failed = _cli(base, liar, "--must-not-regress", "honest", "--json")
    assert failed.returncode == 1
    out = json.loads(failed.stdout)
    assert out["headline_verdict"] == "FAIL" and out["report"]["failed"] == ["honest"] and out["exit_code"] == 1
    other = _write(tmp_path / "other.jsonl", [{**row, "scenario_id": "u" + row["scenario_id"]}
                                              for row in _eval(p, 0.95, 5)[:200]] + _eval(p, 0.95, 6)[:40])
    assert _cli(base, other).returncode == 1  # NOT COMPARABLE: under half the tasks pair
    noisy = _cli(base, better, "--run-std", "0.2", "--run-std-runs", "3")
    assert noisy.returncode == 0 and "within_eval_noise" in noisy.stdout.splitlines()[0]


def test_no_shared_task_is_not_comparable_like_a_partial_overlap_and_its_fix_names_the_flag(tmp_path: Path) -> None:
    base = _write(tmp_path / "before.jsonl", [{"scenario_id": "a", "reward": 1.0}])
    disjoint = _write(tmp_path / "after.jsonl", [{"scenario_id": "b", "reward": 1.0}])
    result = _cli(base, disjoint)
    assert result.returncode == 1 and result.stdout.startswith("NOT COMPARABLE: situations: the before and after "
                                                               "rows share no graded task")
    assert "with --tasks" in result.stdout and "tasks=" not in result.stdout and "simulate" not in result.stdout
    assert result.stdout.rstrip().endswith("delta: NOT COMPARABLE (exit 1)")
    out = json.loads(_cli(base, disjoint, "--json").stdout)
    assert out["headline_verdict"] == "NOT COMPARABLE" and out["exit_code"] == 1


def test_bad_input_exits_2_and_prints_no_verdict(tmp_path: Path) -> None:
    base = _write(tmp_path / "before.jsonl", [{"scenario_id": "a", "reward": 1.0}])
    ungraded = _write(tmp_path / "ungraded.jsonl", [{"scenario_id": "a"}])
    result = _cli(base, ungraded)
    assert result.returncode == 2 and result.stdout == ""
    assert "InputError" in result.stderr and "none of the 1 after rows has a reward" in result.stderr
    missing = _cli(base, str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and missing.stdout == ""
    unknown = _cli(base, base, "--must-not-regress", "grounding", "--json")
    assert unknown.returncode == 2 and json.loads(unknown.stdout)["error"].startswith("ConfigError")
    assert "headline_verdict" not in json.loads(unknown.stdout)
