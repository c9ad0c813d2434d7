"""Benchmark delta_report at 10k and 100k rows per side (8 markers, by= over 8 kinds, k=4 rollouts per task).

    python bench/measure.py                        # 10k and 100k rows per side
    python bench/measure.py --sizes 100000 --repeats 5

Beside it, in the same run on the same rows, a baseline: the straightforward composition of the same
measurement, a plain-Python per-task loop (dicts of task -> rows per side, per-task means of pass@1 and each
marker, per group) followed by one stats.paired_comparison per metric and per group (its own bootstrap and
sign flips each). Both give the same deltas and intervals (checked here); the ratio (of CPU seconds, which a shared machine disturbs least) is what one shared read of
the rows, bincount arithmetic and shared draws buy. Target: delta_report <= 5 s at 100k rows per side.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from whileai_train.measure.delta_report import delta_report
from whileai_train.rows.contract import task_key
from whileai_train.stats import paired_comparison

TARGET_S_AT_100K = 5.0
MARKERS = [f"marker_{i}" for i in range(8)]
KINDS = [f"kind_{i}" for i in range(8)]
K = 4


def make_side(n_rows: int, shift: float, seed: int) -> list[dict[str, Any]]:
    """n_rows graded rows: n_rows / K tasks, K rollouts each, 8 markers in [0, 1], a kind per task."""
    rng = np.random.default_rng(seed)
    n_tasks = n_rows // K
    p = np.random.default_rng(0).uniform(0.1, 0.8, n_tasks)
    passed = rng.random((n_tasks, K)) < np.clip(p + shift, 0, 1)[:, None]
    marks = rng.random((n_tasks, K, len(MARKERS))) < 0.9
    rows = []
    for t in range(n_tasks):
        kind = KINDS[t % len(KINDS)]
        for j in range(K):
            rows.append({"scenario_id": f"task-{t}", "prompt": f"ask {t}", "kind": kind,
                         "reward": 1.0 if passed[t, j] else 0.0,
                         "markers": {name: float(marks[t, j, m]) for m, name in enumerate(MARKERS)}})
    return rows


def baseline(before: list[dict[str, Any]], after: list[dict[str, Any]], by: str, seed: int) -> dict[str, Any]:
    """The same comparison written as a per-task Python loop plus one paired_comparison per metric and group."""
    def per_task(rows: list[dict[str, Any]]) -> tuple[dict[str, dict[str, list[float]]], dict[tuple[str, str], list[float]]]:
        values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        groups: dict[tuple[str, str], list[float]] = defaultdict(list)
        for row in rows:
            key = task_key(row)
            reward = row.get("reward")
            if reward is None:
                continue
            passed = 1.0 if reward >= 0.5 else 0.0
            values[key]["pass@1"].append(passed)
            for name, value in (row.get("markers") or {}).items():
                values[key][name].append(float(value))
            groups[(str(row.get(by)), key)].append(passed)
        return values, groups

    b_values, b_groups = per_task(before)
    a_values, a_groups = per_task(after)
    shared = sorted(b_values.keys() & a_values.keys())
    out: dict[str, Any] = {}
    for name in ["pass@1", *MARKERS]:
        b = [sum(b_values[t][name]) / len(b_values[t][name]) for t in shared]
        a = [sum(a_values[t][name]) / len(a_values[t][name]) for t in shared]
        out[name] = paired_comparison(b, a, seed=seed)
    for kind in sorted({g for g, _ in b_groups}):
        tasks = sorted({t for g, t in b_groups if g == kind} & {t for g, t in a_groups if g == kind})
        b = [sum(b_groups[(kind, t)]) / len(b_groups[(kind, t)]) for t in tasks]
        a = [sum(a_groups[(kind, t)]) / len(a_groups[(kind, t)]) for t in tasks]
        out[f"group {kind}"] = paired_comparison(b, a, seed=seed)
    return out


def best_of(repeats: int, call: Any) -> tuple[float, float, Any]:
    """Best wall seconds, best CPU seconds of this process (the machine may be shared), the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        result = call()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="rows per side")
    parser.add_argument("--repeats", type=int, default=3, help="runs of delta_report per size (best is shown)")
    args = parser.parse_args()
    print(f"{'rows/side':>9} {'tasks':>7} {'delta_report s':>14} {'(cpu s)':>8} {'baseline s':>10} {'(cpu s)':>8} "
          f"{'speed-up':>8}  headline")
    for size in args.sizes:
        before, after = make_side(size, 0.0, 1), make_side(size, 0.03, 2)
        seconds, cpu, report = best_of(args.repeats, lambda b=before, a=after: delta_report(
            b, a, by="kind", must_not_regress=MARKERS[:2]))
        base_seconds, base_cpu, base = best_of(1, lambda b=before, a=after: baseline(b, a, "kind", 0))
        for name in ["pass@1", *MARKERS]:
            assert abs(report.metrics[name].delta - base[name].delta) < 1e-9, name
            assert np.allclose(report.metrics[name].ci95, base[name].ci95, rtol=0, atol=1e-9), name
        for kind, metric in report.groups.items():
            assert np.allclose(metric.ci95, base[f"group {kind}"].ci95, rtol=0, atol=1e-9), kind
        print(f"{size:>9} {report.n_paired_tasks:>7} {seconds:14.3f} {cpu:8.3f} {base_seconds:10.3f} {base_cpu:8.3f} "
              f"{base_cpu / cpu:7.1f}x"
              f"  {report.headline_verdict} ({report.verdict}, {len(report.metrics)} metrics, "
              f"{len(report.groups)} groups)")
        if size >= 100_000:
            verdict = "met" if seconds <= TARGET_S_AT_100K else "MISSED"
            print(f"          target <= {TARGET_S_AT_100K:.0f} s at 100k rows per side: {verdict} (best wall "
                  f"{seconds:.2f} s, CPU {cpu:.2f} s; on a shared machine wall exceeds CPU)")


if __name__ == "__main__":
    main()
