"""The reward monitor under DDP (torchrun, two ranks, gloo, CPU): one run; both ranks see the same alarms
and stop on the same step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.http_server import _free_port
from whileai_train.runs.store import LocalStore

pytestmark = [pytest.mark.distributed, pytest.mark.trainer]


def test_two_ranks_one_run_same_alarms_same_stop(tmp_path: Path, tiny_dir: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
           str(_free_port()), str(Path(__file__).with_name("monitor_ddp_train.py")), str(tiny_dir),
           str(tmp_path / "out")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=500, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # each rank's report from its own file (stdout of two ranks interleaves mid-line)
    reports = [json.loads((tmp_path / "out" / f"monitor-rank{rank}.json").read_text()) for rank in (0, 1)]
    assert [r["rank"] for r in reports] == [0, 1]
    zero, one = reports
    assert zero["alarms"] and zero["alarms"] == one["alarms"]
    assert zero["stopped"] and one["stopped"] and zero["stop_reason"] == one["stop_reason"]
    assert zero["step"] == one["step"] < 6  # stopped early, on the same step
    assert zero["curve"] == one["curve"]
    # the readings reach each rank's trainer logs (monitor/...) at every eval, the same on both ranks
    assert zero["readings"] == one["readings"] and [s for s, _ in zero["readings"]] == [p[0] for p in zero["curve"]]
    assert all(n_asks == 6 and n_completions == 12 for _, n_asks, n_completions in zero["curve"])  # both shares
    assert one["run"] is None and zero["run"] is not None and zero["status"] == "stopped"
    (run,) = LocalStore().list_runs()
    assert run["id"] == zero["run"] and run["status"] == "stopped" and run["name"] == "ddp-monitor"


def test_two_ranks_stop_together_on_a_health_alarm(tmp_path: Path, tiny_dir: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
           str(_free_port()), str(Path(__file__).with_name("monitor_ddp_train.py")), str(tiny_dir),
           str(tmp_path / "out"), "truncation"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=500, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    zero, one = [json.loads((tmp_path / "out" / f"monitor-rank{rank}.json").read_text()) for rank in (0, 1)]
    assert ["truncation", zero["step"]] in zero["alarms"] and zero["alarms"] == one["alarms"]
    assert zero["stopped"] and one["stopped"] and zero["stop_reason"] == one["stop_reason"]
    assert zero["step"] == one["step"] < 8  # stopped early, on the same step, by rank 0's decision
