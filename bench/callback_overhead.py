"""What WhileCallback costs the training thread, printed as ratios against baselines from the same run.

1. One `run.log(step, **metrics)` call (5 and 40 metrics), timed call by call on the training thread while
   the background threads flush to the local store: p50, p99 and max, beside trackio's `log` (local mode)
   timed the same way. Targets: p50 <= 5 us and p99 <= 50 us at 40 metrics, no call over 5 ms.
2. Step time of a tiny transformers training with vs without the callback (logging every step, the worst
   case), the callback switched on and off in alternating blocks of steps within one training so machine
   noise hits both; the ratio of median step times. Target <= 1.01.

    python bench/callback_overhead.py [--calls 10000] [--pace-us 200] [--steps 400] [--block 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET_P50_US, TARGET_P99_US, TARGET_MAX_MS, TARGET_STEP_RATIO = 5.0, 50.0, 5.0, 1.01


def percentiles(ns: list[int]) -> tuple[float, float, float]:
    s = sorted(ns)
    return s[len(s) // 2] / 1e3, s[int(len(s) * 0.99)] / 1e3, s[-1] / 1e3


def time_calls(log: Callable[[int, dict[str, float]], None], n_metrics: int, calls: int, pace_us: float) -> list[int]:
    """Per-call wall time (ns) of `log`, with `pace_us` of busy work between calls (a training step's body)."""
    metrics = {f"metric_{i}": 0.1 * i for i in range(n_metrics)}
    gc.collect()  # the full collection the imports owe would otherwise land in whichever series runs first
    clock = time.perf_counter_ns
    out = []
    for step in range(calls):
        metrics["metric_0"] = float(step)
        t0 = clock()
        log(step, metrics)
        out.append(clock() - t0)
        end = clock() + pace_us * 1e3
        while clock() < end:
            pass
    return out


def _log_args() -> tuple[Any, Any, Any]:
    """The (args, state, control) a Trainer hands to on_log, built once."""
    import tempfile as _tempfile

    from transformers import TrainerControl, TrainerState, TrainingArguments

    args = TrainingArguments(output_dir=_tempfile.mkdtemp(), report_to="none", use_cpu=True, disable_tqdm=True)
    return args, TrainerState(max_steps=10**9), TrainerControl()


def bench_log_calls(calls: int, pace_us: float) -> None:
    """Three ways to log one point, each timed call by call, beside its own baseline:

    - `run.log(step, metrics)` (a dict, as trackio takes it) beside `trackio.log(metrics, step=step)`;
    - `WhileCallback.on_log(args, state, control, logs=metrics)`, the call a Trainer makes every logging step;
    - `run.log(step, **metrics)` beside a no-op `f(step, **metrics)`: Python's own packing of the keyword
      arguments, paid by any keyword API, is most of that form's cost.
    The targets are judged on the first two, the forms a training pays for.
    """
    import trackio

    import whileai_train as wai

    empty = time_calls(lambda step, m: None, 40, calls, pace_us)
    f = percentiles(empty)
    print(f"timer floor (an empty call, included in every figure below): p50 {f[0]:.2f} us, p99 {f[1]:.2f} us, "
          f"max {f[2]:.1f} us; a max far above it is the machine (other processes), not the call")
    args, state, control = _log_args()
    print(f"{'metrics':>7}  {'call':<46}  {'p50 us':>7} {'p99 us':>7} {'max us':>9}  {'p50 ratio':>9} {'p99 ratio':>9}")

    def row(n: int, what: str, o: tuple[float, float, float], base: tuple[float, float, float] | None) -> None:
        ratios = f"{o[0] / base[0]:>9.3f} {o[1] / base[1]:>9.3f}" if base else ""
        print(f"{n:>7}  {what:<46}  {o[0]:>7.2f} {o[1]:>7.2f} {o[2]:>9.1f}  {ratios}")

    verdicts = []
    for n in (5, 40):
        trackio.init(project="whileai-bench", name=f"bench-{n}", embed=False)
        theirs = percentiles(time_calls(lambda step, m: trackio.log(m, step=step), n, calls, pace_us))
        trackio.finish()
        run = wai.run(name=f"bench-dict-{n}")
        ours = percentiles(time_calls(lambda step, m, run=run: run.log(step, m), n, calls, pace_us))
        run.finish()
        callback = wai.WhileCallback(name=f"bench-callback-{n}")
        callback.on_train_begin(args, state, control)

        def on_log(step: int, m: dict[str, float], callback: Any = callback) -> None:
            state.global_step = step
            callback.on_log(args, state, control, logs=m)

        hooked = percentiles(time_calls(on_log, n, calls, pace_us))
        callback.on_train_end(args, state, control)

        def noop(step: int, **kw: float) -> None:
            pass

        packing = percentiles(time_calls(lambda step, m: noop(step, **m), n, calls, pace_us))
        run = wai.run(name=f"bench-kwargs-{n}")
        keywords = percentiles(time_calls(lambda step, m, run=run: run.log(step, **m), n, calls, pace_us))
        run.finish()
        row(n, "trackio.log(metrics, step=step)", theirs, None)
        row(n, "run.log(step, metrics)  vs trackio", ours, theirs)
        row(n, "WhileCallback.on_log(logs=metrics) vs trackio", hooked, theirs)
        row(n, "no-op f(step, **metrics)", packing, None)
        row(n, "run.log(step, **metrics)  vs no-op", keywords, packing)
        if n == 40:
            for what, o in (("run.log(step, metrics)", ours), ("WhileCallback.on_log", hooked)):
                verdicts.append((f"{what}: p50 <= 5 us at 40 metrics", o[0] <= TARGET_P50_US))
                verdicts.append((f"{what}: p99 <= 50 us at 40 metrics", o[1] <= TARGET_P99_US))
                verdicts.append((f"{what}: no call over 5 ms", o[2] <= TARGET_MAX_MS * 1e3))
    for what, ok in verdicts:
        print(f"  {'met' if ok else 'MISSED'}: {what}")


def bench_step_time(steps: int, block: int) -> None:
    """One training; WhileCallback is switched on and off in blocks of `block` steps, so the machine's noise
    falls on both halves alike. A step is timed from one on_step_begin to the next (so it includes every
    callback, on_log included)."""
    import torch
    from datasets import Dataset
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    import whileai_train as wai
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    torch.set_num_threads(1)
    tok = build_tiny_tokenizer()
    ids = [tok(f"order {i} refund status is done please check the ticket").input_ids[:12] for i in range(64)]
    width = min(len(x) for x in ids)
    data = Dataset.from_dict({"input_ids": [x[:width] for x in ids], "labels": [x[:width] for x in ids]})
    inner = wai.WhileCallback(name="bench-steps")

    def on(step: int) -> bool:
        return (step // block) % 2 == 1

    class Gate(TrainerCallback):
        """Forwards the per-step events to WhileCallback only in the 'on' blocks."""

        def on_train_begin(self, *a: Any, **kw: Any) -> None:
            inner.on_train_begin(*a, **kw)

        def on_train_end(self, *a: Any, **kw: Any) -> None:
            inner.on_train_end(*a, **kw)

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if on(state.global_step):
                inner.on_step_end(args, state, control, **kw)

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if on(state.global_step):
                inner.on_log(args, state, control, logs=logs, **kw)

    class StepClock(TrainerCallback):
        def __init__(self) -> None:
            self.times: dict[bool, list[float]] = {True: [], False: []}
            self.blocks: dict[int, list[float]] = {}
            self._last: tuple[float, int] | None = None

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            now = time.perf_counter()
            if self._last is not None and state.global_step > block:  # skip warm-up
                step = self._last[1] + 1
                self.times[on(step)].append(now - self._last[0])
                self.blocks.setdefault(step // block, []).append(now - self._last[0])
            self._last = (now, state.global_step)

    clock = StepClock()
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=steps, per_device_train_batch_size=4,
                             logging_steps=1, report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True)
    torch.manual_seed(0)
    trainer = Trainer(model=build_tiny_model(tok), args=args, train_dataset=data, callbacks=[Gate(), clock])
    trainer.remove_callback(PrinterCallback)  # its print of every log line is the same on both halves: noise only
    trainer.train()
    with_t, without_t = statistics.median(clock.times[True]), statistics.median(clock.times[False])
    # each 'on' block against the mean of its two 'off' neighbours: slow drifts of the machine cancel
    med = {b: statistics.median(ts) for b, ts in clock.blocks.items() if ts}
    paired = [med[b] / ((med[b - 1] + med[b + 1]) / 2) for b in med if b % 2 == 1 and b - 1 in med and b + 1 in med]
    ratio = statistics.median(paired)
    print(f"step time, ratio of medians over all steps (drift included): {with_t / without_t:.3f}")
    print(f"step time (logging every step), {len(clock.times[True])} steps with the callback and "
          f"{len(clock.times[False])} without, alternating blocks of {block}: {with_t * 1e3:.2f} ms vs "
          f"{without_t * 1e3:.2f} ms; median of {len(paired)} paired block ratios {ratio:.3f} "
          f"({'met' if ratio <= TARGET_STEP_RATIO else 'MISSED'}: <= {TARGET_STEP_RATIO})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--pace-us", type=float, default=200.0, help="busy work between log calls (default 200 us, a very fast training step)")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--block", type=int, default=5, help="steps per on/off block (default 5)")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="whileai-bench-")
    os.environ["WHILEAI_HOME"] = str(Path(home) / "whileai")
    os.environ["TRACKIO_DIR"] = str(Path(home) / "trackio")
    os.environ["HOME"] = home  # nothing of the user's is read or written
    for name in ("WHILEAI_API_KEY", "WHILEAI_DELEGATED_CREDENTIAL"):
        os.environ.pop(name, None)
    print(f"python {sys.version.split()[0]}, GIL switch interval {sys.getswitchinterval() * 1e3:.0f} ms, "
          f"{os.cpu_count()} CPUs")
    bench_log_calls(args.calls, args.pace_us)
    bench_step_time(args.steps, args.block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
