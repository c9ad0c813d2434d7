"""Bench: `whileai-train serve` and `whileai-train sync`, this tree against a baseline tree, in one run.

    git worktree add --detach /work/wt/base-server 31ab727      # the baseline (the code before the change)
    python bench/serve.py --baseline /work/wt/base-server [--requests 200] [--points 50000]

Each tree runs its own server (`python -m whileai_train.cli serve`, the tree on PYTHONPATH and as the working
folder, its own empty store) on loopback, under both event loops uvicorn may pick: asyncio's own (a machine
without uvloop, which `pip install whileai_train` does not bring) and uvloop. Against each server:

- latency: one small POST /runs/{id}/log (one point, as the client's progress and the page's polling are
  small) on one kept-alive connection, and on a fresh connection each time; `--requests` of each, taken in
  alternating blocks so a busy moment of the machine weighs on both; the median and the 90th percentile.
  The client is the same http.client (Nagle left on, as most clients leave it) against both trees, so what
  differs is the server's answer.
- sync: a spool of `--points` points written in the spool's documented format, then that tree's own
  `sync_spool` against that tree's server: wall seconds, and CPU seconds of the client and of the server.
  Run twice per tree, alternating trees.

Ratios are this tree / baseline: below 1 is faster. The machine may be shared: the CPU seconds say what
each side cost, the wall seconds what a person waits.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOOPS = {"asyncio": "import sys; sys.modules['uvloop'] = None", "uvloop": ""}

_SERVE = """{prelude}
import sys
from whileai_train.cli import main
sys.exit(main(['serve', '--port', '0']))
"""

_SYNC = """
import json, resource, sys, time
from whileai_train.runs.sync import sync_spool
began, cpu = time.perf_counter(), time.process_time()
result = sync_spool(url=sys.argv[1])
print(json.dumps({"wall": time.perf_counter() - began, "cpu": time.process_time() - cpu, "ok": result.ok,
                  "sent": result.sent_points, "text": str(result)}))
"""


class Server:
    def __init__(self, tree: Path, home: Path, loop: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree), "WHILEAI_HOME": str(home)}
        env.pop("WHILEAI_SERVER_KEY", None)
        self.process = subprocess.Popen([sys.executable, "-c", _SERVE.format(prelude=LOOPS[loop])], cwd=tree, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if found is None:
            self.process.kill()
            raise SystemExit(f"the server of {tree} did not start: {line!r}")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()


def _open_run(port: int) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", "/runs", body=json.dumps({"name": "bench"}), headers={"Content-Type": "application/json"})
    run_id = json.loads(connection.getresponse().read())["runId"]
    connection.close()
    return str(run_id)


def _posts(port: int, run_id: str, n: int, fresh: bool) -> list[float]:
    body = json.dumps({"points": [{"step": 1, "loss": 0.5}]})
    took = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(n):
        if fresh:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        began = time.perf_counter()
        connection.request("POST", f"/runs/{run_id}/log", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        took.append(time.perf_counter() - began)
        if response.status != 200:
            raise SystemExit(f"HTTP {response.status} from the server")
        if fresh:
            connection.close()
    connection.close()
    return took


def latency(tree: Path, loop: str, work: Path, requests: int) -> dict[str, float]:
    server = Server(tree, work / f"latency-{loop}-{tree.name}", loop)
    try:
        run_id = _open_run(server.port)
        _posts(server.port, run_id, 20, fresh=False)  # warm up
        kept: list[float] = []
        fresh: list[float] = []
        block = max(1, requests // 4)
        while len(kept) < requests:
            kept += _posts(server.port, run_id, block, fresh=False)
            fresh += _posts(server.port, run_id, block, fresh=True)
    finally:
        server.stop()

    def p90(xs: list[float]) -> float:
        return sorted(xs)[int(0.9 * len(xs))]

    return {"kept_p50": 1000 * statistics.median(kept), "kept_p90": 1000 * p90(kept),
            "fresh_p50": 1000 * statistics.median(fresh), "fresh_p90": 1000 * p90(fresh)}


def write_spool(home: Path, points: int) -> None:
    """A spool as a killed run leaves it (runs/spool.py's records): open, the points, finish; no live writer."""
    folder = home / "spool"
    folder.mkdir(parents=True)
    client_id = "c-bench" + os.urandom(6).hex()
    lines = [json.dumps({"t": "open", "client_id": client_id, "url": "", "meta": {"name": "bench sync"}})]
    for seq in range(points):
        point = {f"metric_{m}": 0.001 * (seq + m) for m in range(10)}
        point.update(step=seq, ts=1_700_000_000.0 + seq, seq=seq)
        lines.append(json.dumps({"t": "p", "p": point}, separators=(",", ":")))
    lines.append(json.dumps({"t": "finish", "status": "done", "summary": None, "error": None}))
    (folder / f"{client_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def sync_once(tree: Path, loop: str, work: Path, points: int, tag: str) -> dict[str, float]:
    server = Server(tree, work / f"sync-server-{loop}-{tree.name}-{tag}", loop)
    client_home = work / f"sync-client-{loop}-{tree.name}-{tag}"
    write_spool(client_home, points)
    try:
        cpu_before = server.cpu_s()
        env = {**os.environ, "PYTHONPATH": str(tree), "WHILEAI_HOME": str(client_home),
               "WHILEAI_API_KEY": "sk-bench-0123456789abcdef"}
        done = subprocess.run([sys.executable, "-c", _SYNC, server.url], cwd=tree, env=env, capture_output=True,
                              text=True, timeout=900)
        server_cpu = server.cpu_s() - cpu_before
    finally:
        server.stop()
    if done.returncode != 0:
        raise SystemExit(f"sync of {tree} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["ok"] or result["sent"] != points:
        raise SystemExit(f"sync of {tree} did not send {points} points: {result['text']}")
    return {"wall": result["wall"], "client_cpu": result["cpu"], "server_cpu": server_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=Path("/work/wt/base-server"),
                        help="a checkout of the code to compare against (git worktree add --detach PATH COMMIT)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--points", type=int, default=50_000)
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this tree": ROOT}
    if not (trees["baseline"] / "whileai_train").is_dir():
        raise SystemExit(f"no baseline at {trees['baseline']}: git worktree add --detach {trees['baseline']} COMMIT")
    with tempfile.TemporaryDirectory(prefix="whileai-bench-serve-") as tmp:
        work = Path(tmp)
        lat = {(name, loop): latency(tree, loop, work, args.requests) for loop in LOOPS for name, tree in trees.items()}
        syncs: dict[tuple[str, str], list[dict[str, float]]] = {key: [] for key in lat}
        for rep in range(2):
            for loop in LOOPS:
                for name, tree in (trees.items() if rep == 0 else reversed(trees.items())):
                    syncs[(name, loop)].append(sync_once(tree, loop, work, args.points, f"r{rep}"))
    print(f"baseline: {trees['baseline']}    this tree: {trees['this tree']}    (machine possibly shared)")
    print(f"\nlatency of a one-point POST /log, ms ({args.requests} requests each, alternating blocks)")
    print(f"{'loop':<9} {'tree':<10} {'kept-alive p50':>15} {'p90':>7} {'fresh conn p50':>15} {'p90':>7} {'kept/fresh':>11}")
    for loop in LOOPS:
        for name in trees:
            r = lat[(name, loop)]
            print(f"{loop:<9} {name:<10} {r['kept_p50']:>15.2f} {r['kept_p90']:>7.2f} {r['fresh_p50']:>15.2f} "
                  f"{r['fresh_p90']:>7.2f} {r['kept_p50'] / r['fresh_p50']:>11.2f}")
        new, old = lat[("this tree", loop)], lat[("baseline", loop)]
        print(f"{loop:<9} {'ratio':<10} {new['kept_p50'] / old['kept_p50']:>15.2f} {new['kept_p90'] / old['kept_p90']:>7.2f} "
              f"{new['fresh_p50'] / old['fresh_p50']:>15.2f} {new['fresh_p90'] / old['fresh_p90']:>7.2f}")
    print(f"\nwhileai-train sync of {args.points:,} points (median of 2 runs each)")
    print(f"{'loop':<9} {'tree':<10} {'wall s':>8} {'client CPU s':>13} {'server CPU s':>13}")
    med = {key: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for key, runs in syncs.items()}
    for loop in LOOPS:
        for name in trees:
            r = med[(name, loop)]
            print(f"{loop:<9} {name:<10} {r['wall']:>8.2f} {r['client_cpu']:>13.2f} {r['server_cpu']:>13.2f}")
        new, old = med[("this tree", loop)], med[("baseline", loop)]
        print(f"{loop:<9} {'ratio':<10} {new['wall'] / old['wall']:>8.2f} {new['client_cpu'] / old['client_cpu']:>13.2f} "
              f"{new['server_cpu'] / old['server_cpu']:>13.2f}")


if __name__ == "__main__":
    main()
