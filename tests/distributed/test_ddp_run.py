"""Under DDP (two real ranks: torchrun, gloo, CPU) exactly one run is opened and no point is duplicated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.http_server import FaultyServer, _free_port
from whileai_train.runs.store import LocalStore

pytestmark = [pytest.mark.distributed, pytest.mark.trainer]


def test_two_ranks_one_run(tmp_path: Path, tiny_dir: Path) -> None:
    server = FaultyServer(tmp_path / "server.db")
    try:
        root = Path(__file__).resolve().parents[2]
        env = {**os.environ, "WHILEAI_TEST_URL": server.url, "WHILEAI_TEST_KEY": server.api_key,
               "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
               str(_free_port()), str(Path(__file__).with_name("ddp_train.py")), str(tiny_dir), str(tmp_path / "out")]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=500)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        by = {}
        for sink in ("local", "http"):
            for rank in ("0", "1"):
                held = json.loads((tmp_path / "out" / sink / f"rank{rank}.json").read_text())
                by[(rank, held["name"])] = (held["run"], held["logged"], held["status"])
        assert by[("1", "ddp-local")] == (None, 0, None) and by[("1", "ddp-http")] == (None, 0, None)
        assert by[("0", "ddp-local")][2] == "done" and by[("0", "ddp-http")][2] == "done"

        store = LocalStore()
        (local,) = store.list_runs()
        assert local["name"] == "ddp-local" and local["status"] == "done" and local["id"] == by[("0", "ddp-local")][0]
        points = store.points(local["id"])
        assert [p["step"] for p in points] == [1, 2, 3] and len(points) == by[("0", "ddp-local")][1]

        (remote,) = server.runs()
        assert remote["name"] == "ddp-http" and remote["status"] == "done"
        seqs = [p["seq"] for p in server.points(remote["id"])]
        assert seqs == [0, 1, 2]
        posted = [b for (m, path, _o, _t), b in zip(server.requests, server.bodies) if path.endswith("/log")]
        sent = sum(len(json.loads(b)["points"]) for b in posted)
        assert sent == 3  # no rank sent a second copy, and nothing was re-sent
    finally:
        server.close()
