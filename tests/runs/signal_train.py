"""One attempt of a GRPO run under the reward monitor that sends itself a signal at one point of step 3, for
tests/runs/test_signal_points.py.

    python tests/runs/signal_train.py OUT POINT INT|TERM

POINT is where the signal is sent from:
  reward      inside the wrapped training reward, while step 3 scores its completions
  callback    a trainer callback's on_step_end of step 3
  holdout     the gold scorer while the monitor's holdout eval after step 2 samples and scores
  flush       the sender's flush thread, while it writes step 3's points (the main thread is wherever it is)
  checkpoint  the sender's flush under the checkpoint after step 2 (WhileCallback.on_save -> Run.flush)

The process starts with SIGINT at its default action, as Modal's container has it: a process started from a
background job inherits SIGINT ignored, and Python then raises no KeyboardInterrupt at all.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

signal.signal(signal.SIGINT, signal.default_int_handler)

from datasets import Dataset
from transformers import PrinterCallback, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

import whileai_train as wai
from whileai_train.demos.grpo_monitor import (
    GRPO_LEARNING_RATE,
    correct_answer,
    exact_answer,
    keyword_reward,
    make_tasks,
)
from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer
from whileai_train.runs.run import Run
from whileai_train.runs.sender import Sender
from whileai_train.runs.sinks import LocalSink

STEP = 3  # the signal lands during this step (or, for holdout and checkpoint, right after step 2)


def main(out: Path, point: str, signum: int) -> None:
    import torch

    sent = threading.Event()

    def send(where: str) -> None:
        if not sent.is_set():
            sent.set()
            print(f"signal at {where}", flush=True)
            os.kill(os.getpid(), signum)

    step = {"now": 0}

    class Steps(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            step["now"] = state.global_step + 1

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if point == "callback" and state.global_step == STEP:
                send("callback")

    def keyword(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
        if point == "reward" and step["now"] == STEP:
            send("reward")
        return keyword_reward(prompts, completions, **kwargs)

    keyword.__name__ = "keyword_reward"

    def gold(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
        if point == "holdout" and step["now"] == 2:
            send("holdout")
        return exact_answer(prompts, completions, **kwargs)

    gold.__name__ = "exact_answer"

    sink_send = LocalSink.send_points

    def send_points(self: Any, run_id: str, points: Any, *args: Any, **kwargs: Any) -> Any:
        main = threading.current_thread() is threading.main_thread()
        if point == "flush" and not main and any(p[1] == STEP for p in points):
            send("flush")  # from the flush thread: the main thread takes the signal wherever it is
        return sink_send(self, run_id, points, *args, **kwargs)

    LocalSink.send_points = send_points  # type: ignore[method-assign]

    run_flush, sender_flush = Run.flush, Sender.flush

    def checkpoint_flush(self: Any, *args: Any, **kwargs: Any) -> Any:  # WhileCallback.on_save calls it
        checkpointing.set()
        try:
            return run_flush(self, *args, **kwargs)
        finally:
            checkpointing.clear()

    def flush(self: Any, *args: Any, **kwargs: Any) -> Any:
        if point == "checkpoint" and checkpointing.is_set() and threading.current_thread() is threading.main_thread():
            send("checkpoint")  # the handler runs here: in the sender's flush, under the checkpoint's Run.flush
        return sender_flush(self, *args, **kwargs)

    checkpointing = threading.Event()
    Run.flush, Sender.flush = checkpoint_flush, flush  # type: ignore[method-assign]

    torch.set_num_threads(1)
    torch.manual_seed(0)
    tasks = make_tasks(24, seed=0)
    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer, hidden_size=32)
    monitor = wai.monitor(holdout=tasks[16:], gold=gold, every=2, n_prompts=8, k=2, endorsed=["correct_answer"],
                          features={"correct_answer": correct_answer}, stop_on=[], name="signal-" + point,
                          verbose=False)
    config = GRPOConfig(output_dir=str(out), max_steps=6, learning_rate=GRPO_LEARNING_RATE,
                        per_device_train_batch_size=8, num_generations=4, max_completion_length=4,
                        logging_steps=1, report_to="none", use_cpu=True, disable_tqdm=True, seed=0,
                        save_strategy="steps" if point == "checkpoint" else "no", save_steps=2)
    trainer = GRPOTrainer(model=model, reward_funcs=[monitor.wrap(keyword)], args=config,
                          train_dataset=Dataset.from_list(tasks[:16]), processing_class=tokenizer,
                          callbacks=[monitor, Steps()])
    trainer.remove_callback(PrinterCallback)
    with wai.track(trainer, preempted_by=(KeyboardInterrupt,)):
        trainer.train()
    print(f"run {monitor.run.id if monitor.run else None}: {monitor.run.status if monitor.run else None}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main(Path(sys.argv[1]), sys.argv[2], signal.SIGINT if sys.argv[3] == "INT" else signal.SIGTERM)
