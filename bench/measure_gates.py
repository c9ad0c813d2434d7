"""Benchmark pass_at, compare_runs and publish_gate on generated rollout rows (bench/gen_rows.py).

    python bench/measure_gates.py                  # 1k, 10k, 100k rows
    python bench/measure_gates.py --sizes 1000000  # 1M rows (minutes, several GB)

Each figure is printed as wall seconds and as a ratio to a baseline measured in the same run on the same
rows: one plain Python pass reading each row's task key and reward (the floor of any gate that reads
rows), so figures from a loaded machine still compare. Peak memory is measured in a second pass under
tracemalloc (which slows the code, so its times are not used). Cost should grow about linearly: the
"per 1k rows" column should stay flat across sizes.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen_rows import make_rows
from whileai_train import PublishGateError
from whileai_train.gates.publish_gate import publish_gate
from whileai_train.measure.compare_runs import compare_runs
from whileai_train.measure.pass_at import pass_at
from whileai_train.rows.contract import task_key


def _baseline(rows: list[dict[str, Any]]) -> None:
    total = 0.0
    keys = set()
    for row in rows:
        keys.add(task_key(row))
        reward = row.get("reward")
        if reward is not None:
            total += reward


def _gate(rows: list[dict[str, Any]], **kwargs: Any) -> None:
    try:
        publish_gate(rows, **kwargs)
    except PublishGateError:
        pass


def _quiet(_: Any) -> None:
    return None


def _cases(rows: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[tuple[str, Callable[[], None]]]:
    return [
        ("baseline (one pass)", lambda: _baseline(rows)),
        ("pass_at", lambda: _quiet(pass_at(rows))),
        ("compare_runs", lambda: _quiet(compare_runs(rows, after))),
        ("publish_gate scan=False", lambda: _gate(rows, scan=False)),
        ("publish_gate (with scan)", lambda: _gate(rows, endorsed=["marker:resolved"])),
    ]


def _best_of(fn: Callable[[], None], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _peak_mb(fn: Callable[[], None]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs per figure")
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args()
    print(f"{'rows':>9} {'gate':<26} {'seconds':>8} {'x baseline':>10} {'s per 1k rows':>13} {'peak MB':>8}")
    for size in args.sizes:
        rows = make_rows(size, k=8, hack="phrase", seed=0)
        after = make_rows(size, k=8, hack=None, seed=1)
        cases = _cases(rows, after)
        base = None
        for name, fn in cases:
            repeats = args.repeats if size <= 100_000 else 1
            seconds = _best_of(fn, repeats)
            base = base or seconds
            peak = "" if args.no_memory or size > 100_000 else f"{_peak_mb(fn):8.0f}"
            print(f"{size:>9} {name:<26} {seconds:8.3f} {seconds / base:10.1f} {seconds / size * 1000:13.4f} {peak:>8}",
                  flush=True)


if __name__ == "__main__":
    main()
