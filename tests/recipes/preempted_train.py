"""Runs recipes/05-modal/grpo/train.py's train() as one attempt of a preemptible job, for the tests.

    python tests/recipes/preempted_train.py OUT [--preempt-at STEP --signal TERM|INT]

With --preempt-at, the process sends itself the signal once step STEP is logged, as a preemption would arrive
mid-run: SIGTERM (Kubernetes, Slurm, spot reclaims) or SIGINT (Modal, raised as KeyboardInterrupt).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "05-modal" / "grpo" / "train.py"


class PreemptAt(TrainerCallback):
    def __init__(self, step: int, signum: int) -> None:
        self.step, self.signum = step, signum

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        if state.global_step == self.step and logs and "loss" in logs:
            print(f"preempting at step {self.step}", flush=True)
            os.kill(os.getpid(), self.signum)


def main() -> None:
    # SIGINT at its default action, as Modal's container has it: started from a background job (a CI script,
    # nohup), this process inherits SIGINT ignored and Python would raise no KeyboardInterrupt at all
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--preempt-at", type=int, default=None)
    parser.add_argument("--signal", choices=("TERM", "INT"), default="TERM")
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("modal_grpo_train", RECIPE)
    assert spec is not None and spec.loader is not None
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    signum = signal.SIGTERM if args.signal == "TERM" else signal.SIGINT
    callbacks = [PreemptAt(args.preempt_at, signum)] if args.preempt_at is not None else []
    recipe.train(args.out, steps=12, save_steps=4, every=4, name="modal-grpo", callbacks=callbacks)


if __name__ == "__main__":
    main()
