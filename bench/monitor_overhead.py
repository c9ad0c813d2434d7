"""What the reward monitor costs a GRPO run, printed as ratios against baselines from the same run.

1. Step time on non-eval steps with vs without the monitor: one GRPO training on the tiny model, the
   monitor (its callback events and its reward wrapper) switched on and off in alternating blocks of steps,
   so machine noise hits both arms; the ratio of median step times. Target <= 1.02.
2. One holdout eval at the default n_prompts and k, as a share of the training time between two evals at
   the default `every` (eval seconds / (every x median step seconds without the monitor)).

The tiny model makes generation cheap next to Python overhead, so (1) is an upper bound of the monitor's
relative cost; (2) depends on the ratio of holdout to training completions, which is what the defaults fix.

    python bench/monitor_overhead.py [--steps 200] [--block 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

TARGET_STEP_RATIO = 1.02


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--block", type=int, default=1)
    args = parser.parse_args()
    import warnings

    warnings.simplefilter("ignore", FutureWarning)
    import torch
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.callbacks import monitor_defaults as D
    from whileai_train.demos.grpo_monitor import exact_answer, keyword_reward, make_tasks
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    torch.set_num_threads(1)
    home = tempfile.mkdtemp(prefix="monitor-bench-")
    os.environ["WHILEAI_HOME"] = str(Path(home) / ".whileai")
    tasks = make_tasks(64, 0)
    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer)

    # the monitor with its defaults, evals pushed past the end of training: every step is a non-eval step
    monitor = wai.monitor(gold=exact_answer, every=10 ** 9, verbose=False, name="bench-monitor-overhead")
    wrapped = monitor.wrap(keyword_reward)

    class Switch(TrainerCallback):
        """Forwards step events to the monitor only in "on" blocks; times every step."""

        def __init__(self) -> None:
            self.on = False
            self.started = 0.0
            self.times: dict[bool, list[float]] = {True: [], False: []}
            self.inside = 0.0  # seconds spent in the monitor's step events (on blocks)

        def on_train_begin(self, *a: Any, **k: Any) -> None:
            monitor.on_train_begin(*a, **k)  # opens the run and takes the step-0 eval (timed separately)

        def on_step_begin(self, args: Any, state: Any, control: Any, **k: Any) -> None:
            self.on = (state.global_step // args_block) % 2 == 1
            self.started = time.perf_counter()

        def on_step_end(self, *a: Any, **k: Any) -> None:
            if self.on:
                began = time.perf_counter()
                monitor.on_step_end(*a, **k)
                self.inside += time.perf_counter() - began

        def on_log(self, *a: Any, **k: Any) -> None:
            if self.on:
                began = time.perf_counter()
                monitor.on_log(*a, **k)
                self.inside += time.perf_counter() - began
            state = a[1]
            if state.global_step > 2:  # the first steps warm caches in both arms
                self.times[self.on].append(time.perf_counter() - self.started)

        def on_train_end(self, *a: Any, **k: Any) -> None:
            monitor.on_train_end(*a, **k)

    args_block = args.block
    switch = Switch()

    def keyword_reward_switched(**kwargs: Any) -> list[float]:
        return wrapped(**kwargs) if switch.on else keyword_reward(**kwargs)

    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(output_dir=out, max_steps=args.steps, learning_rate=1e-3, per_device_train_batch_size=8,
                            num_generations=4, max_completion_length=16, logging_steps=1, report_to="none",
                            use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0)
        trainer = GRPOTrainer(model=model, reward_funcs=[keyword_reward_switched], args=config,
                              train_dataset=Dataset.from_list(tasks), processing_class=tokenizer, callbacks=[switch])
        trainer.remove_callback(PrinterCallback)
        trainer.train()

    on, off = statistics.median(switch.times[True]), statistics.median(switch.times[False])
    eval_s = monitor.summary().settings["eval_seconds"]  # the step-0 eval, at the default n_prompts and k
    share = eval_s / (D.EVERY * off)
    print(f"GRPO on the tiny model, {args.steps} steps, monitor on/off in blocks of {args.block} steps "
          f"({len(switch.times[True])} on, {len(switch.times[False])} off):")
    print(f"  median step: {off * 1e3:.1f} ms without the monitor, {on * 1e3:.1f} ms with it")
    print(f"  step-time ratio (non-eval steps): {on / off:.3f}  (target <= {TARGET_STEP_RATIO})")
    n_on = max(1, len(switch.times[True]))
    print(f"  time inside the monitor's step events: {switch.inside / n_on * 1e3:.2f} ms a step = "
          f"{switch.inside / n_on / off:.2%} of a step (the part of the ratio that is the monitor's own work)")
    print(f"  one holdout eval ({D.N_PROMPTS} asks x {D.K} samples): {eval_s:.2f} s = {share:.1%} of the "
          f"training time between evals at every={D.EVERY} ({D.EVERY} x {off * 1e3:.0f} ms)")
    return 0 if on / off <= TARGET_STEP_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
