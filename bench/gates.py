"""Wall time and peak memory of the pre-train gates at 1k, 10k, 100k (and 1M) rows, as ratios.

    python bench/gates.py                      # 1k, 10k, 100k rows
    python bench/gates.py --million            # and 1M rows (minutes; memory at 1M is read from the RSS)
    python bench/gates.py --sizes 2000 --gates hack_scan near_duplicate_prompts
    python bench/gates.py --shapes messages    # only the messages shape (default: both)
    python bench/gates.py --ab /work/wt/base-5e4860b /work/wt/rows   # CPU seconds of each checkout, as ratios

Rows come from bench/gen_rows.py: tool-using rollouts, 8 per task, two phrasings per task, a planted phrase
hack, in two shapes (``--shapes``): flat (prompt, steps, final_text) and messages (the same rollouts as an
OpenAI-style logger writes them: tool calls with JSON-text arguments, tool turns holding the result's JSON text);
decontaminate gets eval rows with planted copies, near copies and same-task rows. Each figure is printed
as wall seconds (best of --repeats), as a ratio to two baselines measured in the same run on the same rows
(``group``: one Python pass reading each row's task key and reward, the floor of any gate that reads rows;
``json``: json.loads of the same rows as JSONL, the cost of merely reading them from disk), and per 1k rows.
Peak memory is traced in a separate pass (tracemalloc slows the code, so its times are not used); above
--memory-up-to rows (tracing 1M rows would take hours) it is the growth of the resident set of a forked child
that runs the gate once (peak RSS minus RSS at the fork, marked "rss": it also counts memory freed but not yet
returned to the system, so it reads a little higher than the traced figure). Then, per
gate, the growth of cost between sizes (x10 rows should cost about x10: linear) and, at 100k rows, the ratio to
the targets (hack_scan 3.5 s, decontaminate 4 s, publish_gate 5 s, optimize 2 s on the dev machine).

``--ab TREE [TREE ...]`` compares checkouts instead: each of hack_scan, publish_gate, optimize(mode="rl",
endorsed=) and decontaminate runs alone in a fresh process per checkout (PYTHONPATH=TREE, the package's public
names only, so an older layout works), on both shapes at 100k rows (``--sizes``), the checkouts alternating
within each of ``--rounds`` rounds (their order reversed every other round); it prints each checkout's best CPU
seconds and its ratio to the first checkout's.

Gates owned by others (optimize, decontaminate, publish_gate) are imported if their modules exist; a line
says so when one is missing. hack_scan and publish_gate read each row's trace flags from its trajectory; the
*_flags_carried cases time them on the same rows carrying row["trace_flags"] (stamped before timing), which
is the work they did before they read trace flags, so the two lines show what that reading costs.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parent.parent)
sys.path.insert(0, _ROOT)

from bench.gen_rows import SHAPES, as_messages, make_eval_rows, make_rows

if __name__ == "__main__" and "--child" in sys.argv:  # an --ab child: the package under test is PYTHONPATH's
    sys.path.remove(_ROOT)

# seconds at 100k rows on the dev machine: the targets the gates were built to (their "done when")
TARGETS = {"hack_scan": 3.5, "decontaminate": 4.0, "publish_gate": 5.0, "optimize_rl": 2.0}
ENDORSED = ["marker:resolved"]


def _baseline_group(rows: list[dict[str, Any]]) -> None:
    from whileai_train.rows.contract import task_key

    sums: dict[str, float] = {}
    for row in rows:
        key = task_key(row)
        reward = row.get("reward")
        if reward is not None:
            sums[key] = sums.get(key, 0.0) + reward


def _optional(module: str, name: str) -> Callable[..., Any] | None:
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _swallow(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run a gate; a refusal (an exception carrying a report) is a finished run, not a failure of the bench."""
    from whileai_train import PublishGateError

    try:
        fn(*args, **kwargs)
    except PublishGateError:
        pass


def _cases(rows: list[dict[str, Any]], eval_rows: list[dict[str, Any]], jsonl: list[str] | None,
           only: set[str] | None) -> tuple[list[tuple[str, Callable[[], None]]], list[str]]:
    from whileai_train.gates.hack_scan import hack_scan
    from whileai_train.gates.hygiene import (
        dedupe_groups,
        length_report,
        near_duplicate_prompts,
        reward_correlations,
    )

    # the rows with row["trace_flags"] as trace_markers stamps them (and no new markers): hack_scan then reads the
    # flags instead of each trajectory, the work it did before it read trace flags at all (made before timing)
    carried: list[dict[str, Any]] = []
    if only is None or any(name.endswith("_flags_carried") for name in only):
        from whileai_train.markers.trace_flags import trace_markers

        carried = [{**row, "trace_flags": stamped["trace_flags"]}
                   for row, stamped in zip(rows, trace_markers(rows), strict=True)]

    cases: list[tuple[str, Callable[[], None] | None]] = [
        ("hack_scan", lambda: _swallow(hack_scan, rows, endorsed=ENDORSED)),
        ("hack_scan_flags_carried", lambda: _swallow(hack_scan, carried, endorsed=ENDORSED)),
        ("reward_correlations", lambda: _swallow(reward_correlations, rows)),
        ("near_duplicate_prompts", lambda: _swallow(near_duplicate_prompts, rows)),
        ("dedupe_groups", lambda: _swallow(dedupe_groups, rows)),
        ("length_report", lambda: _swallow(length_report, rows)),
    ]
    missing = []
    optimize = _optional("whileai_train.select.optimize", "optimize")
    decontaminate = _optional("whileai_train.gates.decontaminate", "decontaminate")
    publish_gate = _optional("whileai_train.gates.publish_gate", "publish_gate")
    for name, fn, run in (
        ("optimize_rl", optimize, lambda: _swallow(optimize, rows, mode="rl")),  # type: ignore[arg-type]
        # with endorsed= optimize also runs a hack scan over the rows it keeps (no target of its own)
        ("optimize_rl_endorsed", optimize, lambda: _swallow(optimize, rows, mode="rl", endorsed=ENDORSED)),  # type: ignore[arg-type]
        ("decontaminate", decontaminate, lambda: _swallow(decontaminate, rows, eval_rows)),  # type: ignore[arg-type]
        ("publish_gate", publish_gate, lambda: _swallow(publish_gate, rows, mode="rl", endorsed=ENDORSED)),  # type: ignore[arg-type]
        ("publish_gate_flags_carried", publish_gate,
         lambda: _swallow(publish_gate, carried, mode="rl", endorsed=ENDORSED)),  # type: ignore[arg-type]
    ):
        if fn is None:
            missing.append(f"{name}: module not importable yet, skipped")
        else:
            cases.append((name, run))
    selected = [(name, fn) for name, fn in cases if fn is not None and (only is None or name in only)]
    base: list[tuple[str, Callable[[], None]]] = [("baseline: group", lambda: _baseline_group(rows))]
    if jsonl is not None:
        base.append(("baseline: json", lambda: [json.loads(line) for line in jsonl] and None))
    return base + selected, missing  # type: ignore[return-value]


def _best_of(fn: Callable[[], None], repeats: int) -> tuple[float, float]:
    """Best wall seconds and best CPU seconds of this process (all its threads) over `repeats` runs."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeats):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    return best, best_cpu


def _status_kb(field: str) -> int:
    """A field of /proc/self/status in kB (VmRSS: resident now, VmHWM: the most resident so far)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _peak_rss_mb(fn: Callable[[], None]) -> float | None:
    """Peak resident-set growth of a forked child running `fn` once (None where fork or /proc is missing)."""
    if not hasattr(os, "fork") or not Path("/proc/self/status").exists():
        return None
    gc.collect()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the rows are already in memory (shared until written), only fn's growth is new
        code = 1
        try:
            os.close(read_end)
            start = _status_kb("VmRSS")
            fn()
            os.write(write_end, str(_status_kb("VmHWM") - start).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    return int(text) / 1e3 if status == 0 and text else None


def _peak_mb(fn: Callable[[], None]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6


def _rows_of(size: int, shape: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The bench's rows at `size` in `shape`, and the eval rows planted against them (the same in both shapes)."""
    rows = make_rows(size, k=8, hack="phrase", seed=0)
    n_plant = max(2, min(200, size // 500))
    eval_rows, _ = make_eval_rows(rows, n_copies=n_plant, n_near=n_plant, n_same_task=n_plant,
                                  n_fresh=max(20, size // 50), seed=1)
    return (rows if shape == "flat" else [as_messages(row) for row in rows]), eval_rows


# --ab: the gates the one-pass reader is held to, each by its public name (an older checkout has another layout)
AB_GATES = ("hack_scan", "publish_gate", "optimize_rl_endorsed", "decontaminate")


def _ab_child(gate: str, shape: str, size: int) -> None:
    """Run one gate once on fresh rows with the package PYTHONPATH gives; print its CPU seconds as JSON."""
    import scipy.sparse  # noqa: F401  (imported before the clock: every checkout's scan loads it)

    import whileai_train as wai

    rows, eval_rows = _rows_of(size, shape)
    # each function looked up (its modules imported) before the clock starts
    hack_scan, publish_gate, optimize, decontaminate = wai.hack_scan, wai.publish_gate, wai.optimize, wai.decontaminate
    runs: dict[str, Callable[[], Any]] = {
        "hack_scan": lambda: hack_scan(rows, endorsed=ENDORSED),
        "publish_gate": lambda: publish_gate(rows, mode="rl", endorsed=ENDORSED),
        "optimize_rl_endorsed": lambda: optimize(rows, mode="rl", endorsed=ENDORSED),
        "decontaminate": lambda: decontaminate(rows, eval_rows),
    }
    run = runs[gate]
    gc.collect()
    start = time.process_time()
    try:
        run()
    except wai.PublishGateError:
        pass
    cpu = time.process_time() - start
    print(json.dumps({"cpu": cpu, "package": str(Path(wai.__file__).resolve().parent.parent)}))


def _ab(trees: list[str], shapes: list[str], gates: list[str], size: int, rounds: int) -> None:
    """Each gate alone in a fresh process per checkout, alternating, `rounds` rounds; best CPU s and ratios."""
    roots = [str(Path(tree).resolve()) for tree in trees]
    best: dict[tuple[str, str, str], float] = {}
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start. {size} rows, {rounds} "
          f"rounds, each gate alone in a fresh process per checkout (CPU seconds of the gate call only)")
    for round_number in range(rounds):
        for gate in gates:
            for shape in shapes:
                for root in roots if round_number % 2 == 0 else roots[::-1]:
                    done = subprocess.run(
                        [sys.executable, str(Path(__file__).resolve()), "--child", gate, shape, str(size)],
                        env={**os.environ, "PYTHONPATH": root}, capture_output=True, text=True, timeout=3600,
                        check=False)
                    if done.returncode != 0:
                        raise SystemExit(f"{gate} ({shape}) in {root} failed:\n{done.stderr[-3000:]}")
                    result = json.loads(done.stdout.strip().splitlines()[-1])
                    if result["package"] != root:
                        raise SystemExit(f"{root}: the child imported the package from {result['package']}")
                    key = (gate, shape, root)
                    best[key] = min(best.get(key, float("inf")), result["cpu"])
                    print(f"  round {round_number + 1} {gate:<22} {shape:<9} {result['cpu']:7.2f} s  {root}",
                          flush=True)
    print(f"\nbest CPU seconds of {rounds} rounds, and the ratio to {roots[0]}:")
    for gate in gates:
        for shape in shapes:
            first = best[(gate, shape, roots[0])]
            cells = "  ".join(f"{best[(gate, shape, root)]:7.2f} s x{best[(gate, shape, root)] / first:5.2f}"
                              for root in roots)
            print(f"  {gate:<22} {shape:<9} {cells}")
    print("  columns: " + "  |  ".join(roots))


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        _ab_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="also 1M rows (time only)")
    parser.add_argument("--repeats", type=int, default=2, help="best of this many runs per figure (1 at 1M)")
    parser.add_argument("--gates", nargs="+", default=None, help="time only these gates")
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES), help="row shapes to time")
    parser.add_argument("--no-memory", action="store_true", help="skip the traced pass for peak memory")
    parser.add_argument("--memory-up-to", type=int, default=100_000,
                        help="trace memory up to this many rows (above: the RSS growth of a forked child)")
    parser.add_argument("--ab", nargs="+", metavar="TREE", help="compare these checkouts (the first is the base)")
    parser.add_argument("--rounds", type=int, default=2, help="--ab: rounds of alternating runs")
    args = parser.parse_args()
    if args.ab:
        _ab(args.ab, args.shapes, args.gates or list(AB_GATES), max(args.sizes), args.rounds)
        return
    sizes = sorted(set(args.sizes + ([1_000_000] if args.million else [])))
    only = set(args.gates) if args.gates else None
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; python "
          f"{sys.version.split()[0]}. On a shared machine wall time swings with the load; the ratios to the "
          "baselines measured alongside, and CPU seconds, swing less.")
    print("ratios (x group, x json) and s/1k rows are on CPU seconds: on a shared machine wall time swings with "
          "the load; 'wall x json' is the wait beside the wait for json (gates run parts in a second thread on "
          "large inputs, so their CPU seconds can exceed their wall seconds)")
    for shape in args.shapes:
        _time_shape(shape, sizes, only, args)


def _time_shape(shape: str, sizes: list[int], only: set[str] | None, args: argparse.Namespace) -> None:
    print(f"\nshape: {shape}")
    print(f"{'rows':>9} {'gate':<26} {'wall s':>8} {'cpu s':>7} {'x group':>8} {'x json':>7} {'wall x json':>11} "
          f"{'s/1k rows':>9} {'peak MB':>8}")
    table: dict[str, dict[int, float]] = {}
    cpu_table: dict[str, dict[int, float]] = {}
    notes: list[str] = []
    for size in sizes:
        rows, eval_rows = _rows_of(size, shape)
        jsonl = [json.dumps(row) for row in rows] if size <= 100_000 else None
        cases, missing = _cases(rows, eval_rows, jsonl, only)
        for line in missing:
            if line not in notes:
                notes.append(line)
        base: dict[str, float] = {}
        wall_base: dict[str, float] = {}
        for name, fn in cases:
            repeats = args.repeats if size <= 100_000 else 1
            seconds, cpu = _best_of(fn, repeats)
            if name.startswith("baseline"):
                base[name] = max(cpu, 1e-6)
                wall_base[name] = max(seconds, 1e-6)
            table.setdefault(name, {})[size] = seconds
            cpu_table.setdefault(name, {})[size] = cpu
            peak = f"{'':8}"
            if not args.no_memory and size <= args.memory_up_to:
                peak = f"{_peak_mb(fn):8.0f}"
            elif not args.no_memory and (rss := _peak_rss_mb(fn)) is not None:
                peak = f"{rss:4.0f} rss"
            x_json = f"{cpu / base['baseline: json']:7.2f}" if "baseline: json" in base else f"{'':7}"
            wall_x_json = (f"{seconds / wall_base['baseline: json']:11.2f}" if "baseline: json" in wall_base
                           else f"{'':11}")
            print(f"{size:>9} {name:<26} {seconds:8.3f} {cpu:7.2f} {cpu / base['baseline: group']:8.1f} {x_json} "
                  f"{wall_x_json} {cpu / size * 1000:9.4f} {peak}", flush=True)
        del rows, eval_rows, jsonl, cases
        gc.collect()
    print("\ngrowth of cost between sizes, wall / cpu (linear = the rows' ratio; the baselines show the machine's "
          "own drift, and 'of the group's' divides a gate's CPU growth by the group baseline's):")
    group_cpu = cpu_table["baseline: group"]
    for name, by_size in table.items():
        cpu = cpu_table[name]
        steps = []
        for a, b in zip(sorted(by_size), sorted(by_size)[1:]):
            if by_size[a] <= 0:
                continue
            growth = cpu[b] / max(cpu[a], 1e-9)
            # the gate's CPU growth over the group baseline's in the same run: 1.0 grows as one pass over the rows
            relative = (f"; x{growth / (group_cpu[b] / group_cpu[a]):.2f} of the group's"
                        if not name.startswith("baseline") and group_cpu.get(a, 0) > 0 and b in group_cpu else "")
            steps.append(f"{a // 1000}k->{b // 1000}k x{by_size[b] / by_size[a]:.1f} / x{growth:.1f} "
                         f"(rows x{b / a:g}{relative})")
        print(f"  {name:<24} " + ", ".join(steps))
    print(f"\nat 100k rows ({shape}) against the targets (seconds on the dev machine; <= 1.0 meets it):")
    for name, target in TARGETS.items():
        seconds = table.get(name, {}).get(100_000)
        if seconds is None:
            print(f"  {name:<24} not measured at 100k")
        else:
            json_base = cpu_table.get("baseline: json", {}).get(100_000)
            json_wall = table.get("baseline: json", {}).get(100_000)
            group = cpu_table["baseline: group"][100_000]
            cpu = cpu_table[name][100_000]
            print(f"  {name:<24} wall {seconds:6.2f} s / {target:.1f} s = {seconds / target:.2f}, cpu {cpu:6.2f} s / "
                  f"{target:.1f} s = {cpu / target:.2f}  "
                  f"(cpu {cpu / max(group, 1e-6):.0f}x the group baseline"
                  + (f", {cpu / max(json_base, 1e-6):.2f}x reading the rows from JSON; wall "
                     f"{seconds / max(json_wall or 0.0, 1e-6):.2f}x)" if json_base else ")"))
    for line in notes:
        print(f"note: {line}")


if __name__ == "__main__":
    main()
