"""What `import whileai_train` costs a fresh process, as a ratio against a bare interpreter in the same run.

Each round starts two cold processes in turn, `python -c pass` (the baseline) and `python -c "import
whileai_train"`, and reads each one's wall time from start to exit. The figures are the medians over the
rounds; the package's import time is its median minus the baseline's. Target: under 300 ms above a bare
interpreter (docs/architecture.md), with neither torch nor trl nor transformers imported (tests/house/test_import.py
pins that part).

    python bench/import_time.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

TARGET_MS = 300.0

PROGRAMS = {
    "baseline (python -c pass)": "pass",
    "import whileai_train": "import whileai_train",
}

HEAVY = ("torch", "trl", "transformers", "datasets", "numpy", "scipy")

PROBE = ("import json, sys, whileai_train\n"
         f"print(json.dumps({{name: name in sys.modules for name in {HEAVY!r}}}))\n")


def wall_ms(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for code in PROGRAMS.values():  # warm the filesystem caches once, outside the figures
        wall_ms(code)
    samples: dict[str, list[float]] = {name: [] for name in PROGRAMS}
    for _ in range(args.rounds):
        for name, code in PROGRAMS.items():
            samples[name].append(wall_ms(code))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    baseline = medians["baseline (python -c pass)"]
    print(f"import time, {args.rounds} rounds of cold processes (median wall ms, ratio to the baseline)")
    for name, median in medians.items():
        print(f"  {name:<28} {median:8.1f} ms   x{median / baseline:5.2f}   "
              f"(min {min(samples[name]):.1f}, max {max(samples[name]):.1f})")
    own = medians["import whileai_train"] - baseline
    print(f"  whileai_train above a bare interpreter: {own:.1f} ms (target < {TARGET_MS:.0f} ms: "
          f"{'met' if own < TARGET_MS else 'MISSED'})")
    loaded = json.loads(subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True,
                                       text=True).stdout)
    print("  modules loaded by the import: " + ", ".join(f"{name}={'yes' if hit else 'no'}"
                                                         for name, hit in loaded.items()))


if __name__ == "__main__":
    main()
