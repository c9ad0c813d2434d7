"""GRPO with the reward monitor and report_to=["trackio", "wandb", "tensorboard"] (wandb offline), for the tests.

    python tests/callbacks/log_stream_train.py OUT [attach]

Writes OUT/result.json: the trainer's log_history, what trackio's run holds, and where wandb's run file and
TensorBoard's event files are (read by the test once this process, and wandb's service, have ended).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

import whileai_train as wai
from whileai_train.callbacks.holdout_completions import TABLE_KEY
from whileai_train.demos.grpo_monitor import exact_answer, keyword_reward, make_tasks
from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer


def main(out: Path, attach: bool) -> None:
    import torch

    torch.set_num_threads(1)
    os.environ["TENSORBOARD_LOGGING_DIR"] = str(out / "tb")  # transformers 5 reads TensorBoard's folder here
    torch.manual_seed(0)
    tasks = make_tasks(24, seed=0)
    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer, hidden_size=32)
    monitor = wai.monitor(holdout=tasks[16:], gold=exact_answer, every=2, n_prompts=8, k=2, verbose=False,
                          name="log-stream")
    # logging_steps=3: the eval at step 2 is not a logging step, so the monitor must make the trainer log there
    config = GRPOConfig(output_dir=str(out / "grpo"), max_steps=4, learning_rate=1e-4, per_device_train_batch_size=4,
                        num_generations=2, max_completion_length=6, logging_steps=3, use_cpu=True,
                        save_strategy="no", disable_tqdm=True, seed=0, report_to=["trackio", "wandb", "tensorboard"],
                        project="whileai-stream", run_name="log-stream")
    trainer = GRPOTrainer(model=model, reward_funcs=[monitor.wrap(keyword_reward)], args=config,
                          train_dataset=Dataset.from_list(tasks[:16]), processing_class=tokenizer,
                          callbacks=[monitor])
    if attach:
        wai.track(trainer).train()
    else:
        trainer.train()

    import trackio
    import wandb
    from trackio.sqlite_storage import SQLiteStorage

    (trackio_run,) = list(trackio.Api().runs("whileai-stream"))
    logged = SQLiteStorage.get_logs("whileai-stream", trackio_run.name)
    trackio_rows = [{k: v for k, v in row.items() if isinstance(v, (int, float, str))} for row in logged]
    # the holdout completions, logged as trackio's own Table at each eval (callbacks/holdout_completions.py)
    trackio_tables = [{"step": row.get("train/global_step"), "table": row[TABLE_KEY]} for row in logged
                      if TABLE_KEY in row]
    wandb_run = wandb.run
    assert wandb_run is not None
    wandb_dir = Path(wandb_run.dir).parent
    wandb_run.finish()
    (run_file,) = wandb_dir.glob("run-*.wandb")
    run = monitor.run
    result = {"log_history": trainer.state.log_history, "trackio": trackio_rows, "wandb_file": str(run_file),
              "tensorboard": str(out / "tb"), "run_id": run.id if run is not None else None,
              "warnings": monitor.summary().warnings, "trackio_tables": trackio_tables,
              "wandb_tables": sorted(str(p) for p in (wandb_dir / "files" / "media" / "table").rglob("*.table.json"))}
    (out / "result.json").write_text(json.dumps(result, default=str), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main(Path(sys.argv[1]), len(sys.argv) > 2 and sys.argv[2] == "attach")
