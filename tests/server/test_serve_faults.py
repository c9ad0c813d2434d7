"""Faults on the way in: four processes streaming to one `serve` at once, and a client killed mid-batch
that sends the batch again. Every point is stored exactly once."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.serve_helpers import ServeProcess, call

from whileai_train.runs.store import LocalStore

_WRITER = r"""
import json, sys, urllib.request
url, run_id, writer, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for start in range(0, total, 500):
    points = [{"seq": writer * total + i, "step": i, "loss": 1.0 / (i + 1), "writer": writer}
              for i in range(start, min(total, start + 500))]
    body = json.dumps({"points": points}).encode()
    for attempt in range(5):
        try:
            req = urllib.request.Request(f"{url}/runs/{run_id}/log", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=60) as r:
                assert r.status == 200
            break
        except OSError:
            if attempt == 4:
                raise
"""


def test_four_processes_streaming_at_once_store_every_point_once(isolated_home: Path) -> None:
    total = 5000
    with ServeProcess(isolated_home / ".whileai") as server:
        run_ids = [call(server.url + "/runs", "POST", {"name": f"box {w}"})[1]["runId"] for w in range(4)]
        shared = call(server.url + "/runs", "POST", {"name": "shared"})[1]["runId"]
        # each box streams to its own run and, at the same time, to one shared run
        writers = [subprocess.Popen([sys.executable, "-c", _WRITER, server.url, run_id, str(w), str(total)])
                   for w, run_id in enumerate(run_ids)]
        writers += [subprocess.Popen([sys.executable, "-c", _WRITER, server.url, shared, str(w), str(total)])
                    for w in range(4)]
        assert [w.wait(timeout=300) for w in writers] == [0] * 8
    store = LocalStore(isolated_home / ".whileai" / "runs.db")
    for w, run_id in enumerate(run_ids):
        seqs = [p["seq"] for p in store.points(run_id)]
        assert seqs == list(range(w * total, (w + 1) * total))
    shared_points = store.points(shared)
    assert len(shared_points) == 4 * total
    assert sorted(p["seq"] for p in shared_points) == list(range(4 * total))
    assert {(p["writer"], p["step"]) for p in shared_points} == {(w, i) for w in range(4) for i in range(total)}


def test_a_client_killed_mid_batch_then_resending_duplicates_nothing(isolated_home: Path) -> None:
    with ServeProcess(isolated_home / ".whileai") as server:
        run_id = call(server.url + "/runs", "POST", {"name": "killed"})[1]["runId"]
        points = [{"seq": i, "step": i, "loss": 0.5} for i in range(500)]
        body = json.dumps({"points": points}).encode()
        head = (f"POST /runs/{run_id}/log HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        # a client process killed half-way through sending the batch
        sender = subprocess.Popen([sys.executable, "-c", (
            "import socket, sys, time\n"
            f"s = socket.create_connection(('127.0.0.1', {server.port}))\n"
            "data = sys.stdin.buffer.read()\n"
            "s.sendall(data[: len(data) // 2])\n"
            "print('half', flush=True)\n"
            "time.sleep(60)\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert sender.stdin is not None and sender.stdout is not None
        sender.stdin.write(head + body)
        sender.stdin.close()
        assert sender.stdout.readline().strip() == b"half"
        sender.send_signal(signal.SIGKILL)
        sender.wait(timeout=10)
        sender.stdout.close()
        time.sleep(0.2)
        assert call(f"{server.url}/runs/{run_id}")[1]["points_count"] == 0  # half a body stores nothing
        # it sends the whole batch again (after a restart), then once more as a retry
        for expected_new in (500, 0):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            connection.request("POST", f"/runs/{run_id}/log", body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            assert response.status == 200
            assert json.loads(response.read()) == {"accepted": 500, "new": expected_new}
            connection.close()
        stored = LocalStore(isolated_home / ".whileai" / "runs.db").points(run_id)
        assert [p["seq"] for p in stored] == list(range(500))
