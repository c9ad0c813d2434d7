"""A plain train(): GRPO with the reward monitor that checkpoints often and resumes from its last checkpoint.

    python recipes/05-modal/grpo/train.py --out checkpoints/grpo [--steps 12] [--save-steps 4]

app.py runs this same function on a Modal GPU with a Volume for `out`; here it runs anywhere (CPU: the tiny
model built in code). Run it again with the same `--out` after it was stopped and it resumes from the last
checkpoint as the same run: the run id and its sequence numbers are saved in each checkpoint, everything
logged up to a checkpoint is sent when it is written (a run already trained to its last step trains nothing
and says so), and a SIGTERM (or, with `preempted_by`, Modal's SIGINT)
leaves the run open for the attempt that resumes instead of finishing it "failed".
"""

from __future__ import annotations

import argparse
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

KEY_VARIABLES = ("WHILEAI_API_KEY", "WHILEAI_DELEGATED_CREDENTIAL")


def say_where_runs_go() -> None:
    """Say, before training, where the run will live; without a key, that a container's disk does not last."""
    if any(os.environ.get(name) for name in KEY_VARIABLES):
        print(f"whileai: runs go to {os.environ.get('WHILEAI_API_URL') or 'the platform'} (key from the "
              "environment)", flush=True)
        return
    print("whileai: no platform key here (WHILEAI_API_KEY is not set), so the run goes to the local store under "
          "$WHILEAI_HOME on this machine's disk. In a container that disk vanishes when the container stops, "
          "and a preempted attempt's retry starts on a fresh one: the run would be lost. Keep it by sending it to "
          "a `whileai-train serve` this container can reach: on that machine run `whileai-train serve --host "
          "0.0.0.0 --api-key KEY`, then put WHILEAI_API_URL=http://HOST:8765 and WHILEAI_API_KEY=KEY in the "
          "Modal secret `whileai` (or set WHILEAI_API_KEY to your platform key).", flush=True)


def finished_at(checkpoint: str, steps: int) -> tuple[int, str | None] | None:
    """(its step, the run id) when `checkpoint` is at or past `steps` (trained to its end), else None."""
    import json

    with open(os.path.join(checkpoint, "trainer_state.json"), encoding="utf-8") as handle:
        state = json.load(handle)
    step = int(state.get("global_step") or 0)
    if step < steps:
        return None
    callbacks = (state.get("stateful_callbacks") or {}).values()
    saved = [entry.get("attributes", {}).get("_saved_run") for entry in callbacks if isinstance(entry, dict)]
    run_id = next((run.get("run_id") for run in saved if isinstance(run, dict) and run.get("run_id")), None)
    return step, run_id


def train(out: str, *, steps: int = 12, save_steps: int = 4, every: int = 4, name: str = "modal-grpo",
          model_name: str | None = None, on_checkpoint: Callable[[], Any] | None = None,
          preempted_by: tuple[type[BaseException], ...] = (KeyboardInterrupt,),
          callbacks: Sequence[Any] = ()) -> str | None:
    """Train (or resume) GRPO into the folder `out`; returns the run id.

    Args:
        out: the checkpoint folder; a checkpoint already there is resumed from.
        steps, save_steps, every: GRPO steps, steps between checkpoints, steps between holdout evals.
        model_name: a hub model (on a GPU); None builds the tiny model in code and warms it up on the task.
        on_checkpoint: called after each checkpoint is written (app.py commits the Volume there).
        preempted_by: exceptions that mean "preempted, will resume" (Modal raises KeyboardInterrupt).
        callbacks: more trainer callbacks.
    """
    warnings.simplefilter("ignore", FutureWarning)  # transformers' own deprecation notices
    import torch
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from transformers.trainer_utils import get_last_checkpoint
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.demos.grpo_monitor import (
        GRPO_LEARNING_RATE,
        correct_answer,
        exact_answer,
        honest_reward,
        make_tasks,
        warm_up,
    )

    hf_logging.disable_progress_bar()  # no "Writing model shards" bar at each checkpoint
    say_where_runs_go()
    os.makedirs(out, exist_ok=True)
    resume = get_last_checkpoint(out)
    done = finished_at(resume, steps) if resume else None
    if done is not None:  # a job re-run after it finished: resuming would train a step past the end
        step, run_id = done
        print(f"training is done: {os.path.basename(resume)} is step {step} of {steps}; nothing to train "
              f"(run {run_id}). To train again, give a fresh --out", flush=True)
        return run_id
    print(f"resuming from {os.path.basename(resume)}" if resume else "starting (no checkpoint yet)", flush=True)
    torch.manual_seed(0)
    tasks = make_tasks(48, seed=0)
    train_rows, holdout = tasks[:32], tasks[32:]
    if model_name is None:
        from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

        torch.set_num_threads(1)  # a model this small trains faster on one thread
        tokenizer = build_tiny_tokenizer()
        model: Any = build_tiny_model(tokenizer, hidden_size=64)
        if resume is None:  # a resumed attempt takes the weights from the checkpoint
            warm_up(model, tokenizer, train_rows, os.path.join(out, "warm-up"), steps=80)
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_name)
        model = AutoModelForCausalLM.from_pretrained(model_name, dtype="auto")

    class Checkpointed(TrainerCallback):
        """Says each checkpoint, after the monitor has sent what was logged up to it, then commits it."""

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.is_world_process_zero:
                if on_checkpoint is not None:
                    on_checkpoint()
                print(f"checkpoint-{state.global_step} saved", flush=True)

    monitor = wai.monitor(holdout=holdout, gold=exact_answer, every=every, n_prompts=len(holdout), k=4,
                          endorsed=["correct_answer"], features={"correct_answer": correct_answer},
                          stop_on=["divergence", "length", "feature", "collapse"], name=name)
    on_cpu = not torch.cuda.is_available()
    config = GRPOConfig(output_dir=out, max_steps=steps, learning_rate=GRPO_LEARNING_RATE,
                        lr_scheduler_type="constant", per_device_train_batch_size=16, num_generations=4,
                        max_completion_length=8, logging_steps=1, report_to="none", use_cpu=on_cpu,
                        bf16=not on_cpu and torch.cuda.is_bf16_supported(), save_strategy="steps",
                        save_steps=save_steps, save_total_limit=2, disable_tqdm=True, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=[monitor.wrap(honest_reward)], args=config,
                          train_dataset=Dataset.from_list(train_rows), processing_class=tokenizer,
                          callbacks=[monitor, Checkpointed(), *callbacks])
    trainer.remove_callback(PrinterCallback)
    with wai.track(trainer, preempted_by=preempted_by):
        trainer.train(resume_from_checkpoint=resume)
    run = monitor.run
    print(wai.format_hack_monitor(monitor.summary()).splitlines()[0])
    print(f"run {run.id if run else None}: {run.status if run else None}", flush=True)
    return run.id if run else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="checkpoint folder (resumed from when it holds one)")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--save-steps", type=int, default=4)
    parser.add_argument("--name", default="modal-grpo")
    args = parser.parse_args()
    train(args.out, steps=args.steps, save_steps=args.save_steps, name=args.name)


if __name__ == "__main__":
    main()
