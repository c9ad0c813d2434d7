"""Each recipe runs on the tiny model, as its README says to run it, and prints what its README says it prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.trainer
ROOT = Path(__file__).resolve().parents[2]


def _run(recipe: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "recipes" / recipe / "run.py"), *args], capture_output=True,
                          text=True, timeout=600, check=False, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _readme(recipe: str) -> str:
    return (ROOT / "recipes" / recipe / "README.md").read_text(encoding="utf-8")


def test_sft_export_recipe_trains_agent_turns_only(tmp_path: Path) -> None:
    assert "python recipes/01-export/sft/run.py --mode unroll" in _readme("01-export/sft")
    out = _run("01-export/sft", "--out", str(tmp_path), "--steps", "1", "--mode", "unroll")
    assert "export ok:" in out and "trained spans of example 0 (unroll)" in out
    spans = out.split("trained spans of example 0 (unroll):")[1]
    assert "tool_response" not in spans and "<|im_start|>user" not in spans


def test_dpo_recipe_scores_the_diverging_turn_and_streams_a_done_run(tmp_path: Path) -> None:
    readme = _readme("03-train/dpo")
    out = _run("03-train/dpo", "--out", str(tmp_path), "--steps", "2")
    assert "11 preference rows from 64 input rows" in readme and "11 preference rows from 64 input rows" in out
    chosen = out.split("scored on the chosen side of pair 0: ")[1].splitlines()[0]
    rejected = out.split("scored on the rejected side of pair 0: ")[1].splitlines()[0]
    assert chosen in readme and rejected in readme  # the README shows the very spans it prints
    for scored in (chosen, rejected):
        assert scored.count("»") == 1 and "<tool_call>" in scored  # one agent turn, and nothing else
        assert "tool_response" not in scored and "Please refund" not in scored and "system" not in scored
    (run,) = LocalStore().list_runs()
    assert run["name"] == "recipe-dpo" and run["status"] == "done"
    assert f"run {run['id']}: done" in out
    logged = LocalStore().points(run["id"])
    assert [p["step"] for p in logged] == [1, 2]
    assert all("rewards/margins" in p and "rewards/accuracies" in p and "loss" in p for p in logged)


def test_grpo_recipe_stops_the_planted_hack() -> None:
    """What the recipe is for, on any CPU: the feature alarm names the planted word and the run stops before its
    end. Which other alarms join it, and at which eval, follow the float trajectory (kernels differ by CPU), so
    neither is asserted; the README says so."""
    readme = _readme("04-train/grpo")
    out = _run("04-train/grpo", "--steps", "10")
    verdict = next(line for line in out.splitlines() if line.startswith("REWARD HACKING SUSPECTED: "))
    assert verdict.endswith("; training stopped") and "feature at step " in verdict
    alarms = out.split("\nalarms:\n")[1].split("\nholdout evals took")[0].splitlines()
    assert any(line.startswith("  [feature] step ") and "reward tracks 'word:thanks' (rho +1.00), not an endorsed "
               "feature" in line for line in alarms)
    assert "REWARD HACKING SUSPECTED: " in readme and "may vary" in readme
    (run,) = LocalStore().list_runs()
    assert run["name"] == "recipe-grpo" and run["status"] == "stopped"
    assert f"run {run['id']}: stopped (1 process)" in out
    steps = [p["step"] for p in LocalStore().points(run["id"]) if "loss" in p]
    assert steps and max(steps) < 10  # stopped before its last step


def test_grpo_recipe_clean_ends_done_without_alarm() -> None:
    out = _run("04-train/grpo", "--clean")
    assert 'NO ALARM over 9 holdout evals' in _readme("04-train/grpo") and "NO ALARM over 9 holdout evals" in out
    (run,) = LocalStore().list_runs()
    assert run["name"] == "recipe-grpo-clean" and run["status"] == "done"


def test_every_recipe_path_the_readmes_name_exists() -> None:
    import re

    texts = [(ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [path.read_text(encoding="utf-8") for path in (ROOT / "recipes").rglob("README.md")]
    named = {match.rstrip("/.,`)") for text in texts for match in re.findall(r"recipes/[\w./-]+", text)}
    assert "recipes/05-modal/grpo/app.py" in named and "recipes/06-notebook/monitor.ipynb" in named
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert missing == []
    where = (ROOT / "README.md").read_text(encoding="utf-8").split("## Where you train")[1].split("\n## ")[0]
    for place in ("A GPU box", "A notebook", "Modal", "Several GPUs"):
        assert f"**{place}" in where
