"""GRPO with the planted hack and report_to=["trackio", "wandb"] (wandb offline) beside our run, for the tests.

    python tests/callbacks/side_trackers_train.py OUT

Writes OUT/result.json: our run, and what trackio's and wandb's own runs hold once training ends.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

import whileai_train as wai
from whileai_train.demos.grpo_monitor import (
    GRPO_LEARNING_RATE,
    correct_answer,
    exact_answer,
    keyword_reward,
    make_tasks,
    warm_up,
)
from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer


def main(out: Path) -> None:
    import torch

    from whileai_train.callbacks import monitor as monitor_module

    alerted: list[list[str]] = []  # which trackers each alarm reached
    send = monitor_module.alert_side_trackers
    monitor_module.alert_side_trackers = lambda title, text: alerted.append(send(title, text)) or alerted[-1]

    torch.set_num_threads(1)
    torch.manual_seed(0)
    tasks = make_tasks(48, seed=0)
    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer, hidden_size=64)
    warm_up(model, tokenizer, tasks[:32], str(out / "sft"), steps=80)
    monitor = wai.monitor(holdout=tasks[32:], gold=exact_answer, every=5, n_prompts=16, k=4,
                          endorsed=["correct_answer"], features={"correct_answer": correct_answer},
                          stop_on=["feature"], name="side-by-side", verbose=False)
    config = GRPOConfig(output_dir=str(out / "grpo"), max_steps=10, learning_rate=GRPO_LEARNING_RATE,
                        lr_scheduler_type="constant", per_device_train_batch_size=16, num_generations=4,
                        max_completion_length=8, logging_steps=1, use_cpu=True, save_strategy="no",
                        disable_tqdm=True, seed=0, report_to=["trackio", "wandb"], project="whileai-side",
                        run_name="side-by-side")
    trainer = GRPOTrainer(model=model, reward_funcs=[monitor.wrap(keyword_reward)], args=config,
                          train_dataset=Dataset.from_list(tasks[:32]), processing_class=tokenizer,
                          callbacks=[monitor])
    trainer.train()

    import trackio
    import wandb
    from trackio.sqlite_storage import SQLiteStorage

    (trackio_run,) = list(trackio.Api().runs("whileai-side"))
    logs = SQLiteStorage.get_logs("whileai-side", trackio_run.name)
    wandb_run = wandb.run
    assert wandb_run is not None
    wandb_summary = {k: v for k, v in dict(wandb_run.summary).items() if isinstance(v, (int, float))}
    wandb_dir = Path(wandb_run.dir).parent
    wandb_run.finish()
    (run_file,) = wandb_dir.glob("run-*.wandb")  # the offline run's records, sent by `wandb sync`
    result = {
        "ours": {"id": monitor.run.id if monitor.run else None, "status": monitor.run.status if monitor.run else None,
                 "alarms": [[a.name, a.step] for a in monitor.summary().alarms], "alerted": alerted},
        "trackio": {"name": trackio_run.name, "steps": sorted({int(row["train/global_step"]) for row in logs if "train/loss" in row}),
                    "alerts": [[a["title"], a["text"]] for a in trackio_run.alerts()]},
        "wandb": {"summary_keys": sorted(wandb_summary), "offline": wandb_dir.name.startswith("offline-run-"),
                  "run_file": str(run_file)},  # read once this process (and wandb's service) has ended
    }
    (out / "result.json").write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main(Path(sys.argv[1]))
