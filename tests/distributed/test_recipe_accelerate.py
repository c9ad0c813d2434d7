"""recipes/04-train/grpo under `accelerate launch` with its shipped config, as two CPU processes (gloo): one run,
the alarm lines and the report printed once (by the main process), both processes stopped on the same step."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.http_server import _free_port
from whileai_train.runs.store import LocalStore

pytestmark = [pytest.mark.distributed, pytest.mark.trainer]
ROOT = Path(__file__).resolve().parents[2]


def test_grpo_recipe_under_accelerate_launch_two_processes(tmp_path: Path) -> None:
    recipe = ROOT / "recipes" / "04-train" / "grpo"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(recipe / "accelerate.yaml"),
           "--num_processes", "2", "--mixed_precision", "no", "--main_process_port", str(_free_port()),
           str(recipe / "run.py"), "--steps", "10", "--out", str(tmp_path / "out")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=500, check=False)
    text = done.stdout + done.stderr
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "(2 processes)" in (recipe / "README.md").read_text(encoding="utf-8")
    (run,) = LocalStore().list_runs()
    assert run["name"] == "recipe-grpo" and run["status"] == "stopped"
    assert text.count(f"run {run['id']}: stopped (2 processes)") == 1  # the report: main process only
    # what holds on any CPU: the feature alarm names the planted word; which alarms join it, and at which eval,
    # follow the float trajectory (kernels differ by CPU), so the test reads the stop step instead of pinning it
    alarms = [line for line in text.splitlines() if line.startswith("!!! REWARD MONITOR ALARM [")]
    assert len(alarms) == len(set(alarms))  # one line per alarm, not one per rank
    (feature,) = [line for line in alarms if line.startswith("!!! REWARD MONITOR ALARM [feature] at step ")]
    assert "reward tracks 'word:thanks'" in feature
    stop = min(int(line.split(" at step ")[1].split(":")[0]) for line in alarms)
    assert text.count("REWARD HACKING SUSPECTED") == 1 and stop < 10
    steps = [p["step"] for p in LocalStore().points(run["id"]) if "loss" in p]
    assert steps == list(range(1, stop + 1))  # both processes stopped at the alarm's step; one point per step
