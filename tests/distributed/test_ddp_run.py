"""Under DDP (two real ranks: torchrun, gloo, CPU) exactly one run is opened and no point is duplicated."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.http_server import FaultyServer, _free_port
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
        lines = re.findall(r"RANK (\d) (ddp-\w+) run=(\S+) logged=(\d+) status=(\S+)", done.stdout)
        assert sorted((r, n) for r, n, *_ in lines) == [("0", "ddp-http"), ("0", "ddp-local"),
                                                       ("1", "ddp-http"), ("1", "ddp-local")]
        by = {(r, n): (rid, int(logged), status) for r, n, rid, logged, status in lines}
        assert by[("1", "ddp-local")] == ("None", 0, "None") and by[("1", "ddp-http")] == ("None", 0, "None")

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
        sent = sum(len(__import__("json").loads(b)["points"]) for b in posted)
        assert sent == 3  # no rank sent a second copy, and nothing was re-sent
    finally:
        server.close()
