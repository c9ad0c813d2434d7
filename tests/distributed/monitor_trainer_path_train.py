"""Two-rank tool-calling GRPO (torchrun, gloo, CPU) with the reward monitor attached to the trainer: the holdout
samples through GRPOTrainer._generate on both ranks (its collectives called by every rank with one share size).
Each rank writes what its monitor holds to OUT/monitor-rank{rank}.json.

    torchrun --nproc_per_node 2 monitor_trainer_path_train.py DESK_MODEL_DIR OUT
"""

from __future__ import annotations

import json
import os
import sys

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

import whileai_train as wai
from whileai_train.demos.refund_desk import TOOLS, correct_refund, make_tasks, refund_called


def main(desk: str, out: str) -> None:
    torch.set_num_threads(1)
    tasks = make_tasks(21, 0)
    # five holdout asks over two ranks: shares of 3 and 2, so the trainer path needs the padded share
    monitor = wai.monitor(holdout=tasks[16:], gold=correct_refund, every=1, n_prompts=5, k=2, verbose=False,
                          name="ddp-trainer-path")
    config = GRPOConfig(output_dir=out, max_steps=2, learning_rate=1e-3, per_device_train_batch_size=4,
                        num_generations=2, max_completion_length=96, max_tool_calling_iterations=2, logging_steps=1,
                        report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0,
                        ddp_backend="gloo")
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(desk), reward_funcs=[monitor.wrap(refund_called)],
                          args=config, train_dataset=Dataset.from_list(tasks[:16]), tools=TOOLS,
                          processing_class=AutoTokenizer.from_pretrained(desk), callbacks=[monitor])
    wai.track(trainer).train()
    summary = monitor.summary()
    run = monitor.run
    report = {"rank": int(os.environ.get("RANK", "0")), "step": trainer.state.global_step,
              "sampler": summary.settings["holdout_sampler"],
              "curve": [[p.step, p.n_asks, p.n_completions, p.tool_calls] for p in summary.curve],
              "share": summary.holdout_share, "warnings": summary.warnings,
              "run": run.id if run else None, "status": run.status if run else None}
    path = os.path.join(out, f"monitor-rank{report['rank']}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
