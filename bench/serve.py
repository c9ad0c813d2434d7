"""Bench: `whileai-train serve` (FastAPI + uvicorn over the WAL store) against the earlier standard-library
server, in the same run on the same machine.

    python bench/serve.py [--requests 300] [--batches 25] [--metrics 10]

The baseline is the server as of commit 5e4860b (its api.py and store.py, taken from git history with
`git archive` into a temporary directory and run there), so the figures compare the two servers, not two
machines. Each server runs in its own process on loopback with its own empty store:

- latency: one client on one keep-alive connection posts `--requests` batches of 500 points (each with
  `--metrics` metrics and a seq, the client library's shape); p50 and p99 of the round trip.
- throughput: four client processes, each on its own run, post `--batches` batches of 500 points at once;
  points stored per second of wall time (every point is then counted in the store).

Ratios are new / baseline: latency below 1 is faster, throughput above 1 is faster.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINE_COMMIT = "5e4860b"

_BASELINE_SERVER = r"""
import sys
from http.server import ThreadingHTTPServer
from whileai_train.runs.store import LocalStore
from whileai_train.server.api import RunsAPI, make_handler
server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(RunsAPI(LocalStore(sys.argv[1]))))
server.daemon_threads = True
print(f"serving at http://127.0.0.1:{server.server_address[1]}/", flush=True)
server.serve_forever()
"""


def _start(kind: str, workdir: Path) -> tuple[subprocess.Popen[str], int, Path]:
    db = workdir / kind / "runs.db"
    db.parent.mkdir(parents=True)
    if kind == "baseline":
        old = workdir / "old-package"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE_COMMIT, "whileai_train"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(old)}
        command = [sys.executable, "-c", _BASELINE_SERVER, str(db)]
    else:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "WHILEAI_HOME": str(db.parent)}
        command = [sys.executable, "-m", "whileai_train.cli", "serve", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if match is None:
        process.kill()
        raise SystemExit(f"{kind} server did not start: {line!r}")
    return process, int(match.group(1)), db


def _batch(start_seq: int, metrics: int) -> bytes:
    points = []
    for i in range(500):
        point: dict[str, Any] = {f"metric_{m}": 0.001 * (i + m) for m in range(metrics)}
        point.update(step=start_seq + i, ts=1_700_000_000.0 + i, seq=start_seq + i)
        points.append(point)
    return json.dumps({"points": points, "progress": {"step": start_seq + 499, "total": 10**6}}).encode()


def _open(port: int, name: str) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", "/runs", body=json.dumps({"name": name}), headers={"Content-Type": "application/json"})
    run_id = json.loads(connection.getresponse().read())["runId"]
    connection.close()
    return str(run_id)


def _connect(port: int) -> http.client.HTTPConnection:
    """A keep-alive connection with Nagle off: a body sent after its headers is not held back for the
    server's delayed ACK, which would measure the TCP stack instead of the server."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.connect()
    assert connection.sock is not None
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def _post_batches(port: int, run_id: str, batches: list[bytes]) -> list[float]:
    connection = _connect(port)
    took = []
    for body in batches:
        began = time.perf_counter()
        connection.request("POST", f"/runs/{run_id}/log", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        took.append(time.perf_counter() - began)
        if response.status != 200:
            raise SystemExit(f"HTTP {response.status} from the server")
    connection.close()
    return took


def _writer(args: tuple[int, str, int, int]) -> int:
    port, run_id, batches, metrics = args
    _post_batches(port, run_id, [_batch(b * 500, metrics) for b in range(batches)])
    return batches * 500


def measure(kind: str, workdir: Path, requests: int, batches: int, metrics: int) -> dict[str, float]:
    process, port, db = _start(kind, workdir)
    try:
        run_id = _open(port, "latency")
        bodies = [_batch(i * 500, metrics) for i in range(requests)]
        _post_batches(port, run_id, bodies[:10])  # warm up (re-sends: de-duplicated, nothing new stored)
        took = sorted(_post_batches(port, run_id, bodies))
        run_ids = [_open(port, f"writer {w}") for w in range(4)]
        with multiprocessing.Pool(4) as pool:
            began = time.perf_counter()
            stored = sum(pool.map(_writer, [(port, rid, batches, metrics) for rid in run_ids]))
            wall = time.perf_counter() - began
    finally:
        process.terminate()
        process.wait(timeout=30)
    with sqlite3.connect(db) as conn:
        counted = conn.execute(f"SELECT COUNT(*) FROM points WHERE run_id IN ({','.join('?' * 4)})",
                               run_ids).fetchone()[0]
    if counted != stored:
        raise SystemExit(f"{kind}: {stored} points sent by the writers but {counted} stored")
    return {"p50_ms": 1000 * statistics.median(took), "p99_ms": 1000 * took[min(len(took) - 1, int(0.99 * len(took)))],
            "points_per_s": stored / wall, "body_kb": len(bodies[0]) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--batches", type=int, default=25)
    parser.add_argument("--metrics", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="whileai-bench-serve-") as tmp:
        results = {kind: measure(kind, Path(tmp), args.requests, args.batches, args.metrics)
                   for kind in ("baseline", "serve")}
    base, new = results["baseline"], results["serve"]
    print(f"500-point POST ({base['body_kb']:.0f} kB, {args.metrics} metrics), {args.requests} requests; "
          f"4 writers x {args.batches} batches")
    print(f"{'server':<34} {'p50 ms':>8} {'p99 ms':>8} {'points/s (4 writers)':>22}")
    for kind, label in (("baseline", f"stdlib http.server ({BASELINE_COMMIT})"), ("serve", "FastAPI + uvicorn (serve)")):
        r = results[kind]
        print(f"{label:<34} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} {r['points_per_s']:>22,.0f}")
    print(f"{'ratio new / baseline':<34} {new['p50_ms'] / base['p50_ms']:>8.2f} {new['p99_ms'] / base['p99_ms']:>8.2f} "
          f"{new['points_per_s'] / base['points_per_s']:>22.2f}")


if __name__ == "__main__":
    main()
