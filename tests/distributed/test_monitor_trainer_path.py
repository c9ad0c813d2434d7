"""The reward monitor attached to a tool-calling GRPOTrainer under DDP (torchrun, two ranks, gloo, CPU): the holdout
samples through the trainer's own path on both ranks, whose collectives need one share size on every rank (five
asks over two ranks: 3 and 2, padded), and both ranks hold the same curve."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.http_server import _free_port

# may build the session's warmed-up desk model (conftest.desk_dir): a generous deadline for a loaded machine
pytestmark = [pytest.mark.distributed, pytest.mark.trainer, pytest.mark.timeout(1800)]


def test_two_ranks_sample_the_holdout_through_the_trainer(tmp_path: Path, desk_dir: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
           str(_free_port()), str(Path(__file__).with_name("monitor_trainer_path_train.py")), str(desk_dir),
           str(tmp_path / "out")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    zero, one = (json.loads((tmp_path / "out" / f"monitor-rank{rank}.json").read_text()) for rank in (0, 1))
    assert zero["sampler"] == one["sampler"] == "trainer"
    assert zero["curve"] == one["curve"] and [step for step, *_ in zero["curve"]] == [0, 1, 2]
    assert all(n_asks == 5 and n_completions == 10 for _, n_asks, n_completions, _ in zero["curve"])  # no padding
    assert all(calls is not None and calls > 0 for *_, calls in zero["curve"])
    assert zero["status"] == "done" and one["run"] is None
    assert 0 < zero["share"] < 1
    assert not any("feature scan failed" in w for w in zero["warnings"])
