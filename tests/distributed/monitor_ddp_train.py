"""Two-rank GRPO (torchrun, gloo, CPU) with the reward monitor. Each rank writes what its monitor holds to
OUT/monitor-rank{rank}.json."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

import whileai_train as wai
from whileai_train.demos.grpo_monitor import correct_answer, exact_answer, make_tasks


def letter_count(prompts: list[str], completions: list[str], **kwargs: Any) -> list[float]:
    """Pays for the letter e: something the untrained tiny model varies on, and nothing gold wants."""
    return [float(c.count("e")) for c in completions]


def main(tiny: str, out: str, mode: str = "drift") -> None:
    """mode "drift": KL past a tiny budget stops the run; "truncation": completions cut at 4 tokens stop it (the
    health alarms, read on rank 0 from the gathered records and TRL's reduced logs, broadcast)."""
    torch.set_num_threads(1)
    tasks = make_tasks(24, 0)
    drift = mode == "drift"
    monitor = wai.monitor(holdout=tasks[16:24], gold=exact_answer, every=2, n_prompts=6, k=2,
                          kl_budget=1e-6 if drift else None, endorsed=["correct_answer"],
                          features={"correct_answer": correct_answer},
                          stop_on=["drift", "feature"] if drift else ["truncation"], buffer=64, verbose=False,
                          name="ddp-monitor")
    config = GRPOConfig(output_dir=out, max_steps=6 if drift else 8, learning_rate=1e-2, per_device_train_batch_size=4,
                        num_generations=2, max_completion_length=6 if drift else 4, logging_steps=1,
                        report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0,
                        beta=0.5 if drift else 0.0, ddp_backend="gloo")
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny), reward_funcs=[monitor.wrap(letter_count)],
                          args=config, train_dataset=Dataset.from_list(tasks[:16]),
                          processing_class=AutoTokenizer.from_pretrained(tiny), callbacks=[monitor])
    trainer.train()
    summary = monitor.summary()
    run = monitor.run
    report = {"rank": int(os.environ.get("RANK", "0")), "step": trainer.state.global_step,
              "alarms": [[a.name, a.step] for a in summary.alarms], "stopped": summary.stopped,
              "stop_reason": summary.stop_reason, "curve": [[p.step, p.n_asks, p.n_completions] for p in summary.curve],
              "run": run.id if run else None, "status": run.status if run else None,
              "readings": [[e["step"], e["monitor/alarm/feature"]] for e in trainer.state.log_history
                           if "monitor/alarm/feature" in e]}
    # one file per rank (written whole, then renamed): two ranks printing to one pipe can interleave mid-line
    path = os.path.join(out, f"monitor-rank{report['rank']}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main(*sys.argv[1:4])
    # leave the process group before exit: a rank that exits with gloo's threads still running can abort
    # ("terminate called without an active exception") while the other rank is still shutting down
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
