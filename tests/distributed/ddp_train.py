"""Two-rank training (torchrun, gloo, CPU) with WhileCallback: first to the local store, then to the
platform URL in WHILEAI_TEST_URL. Each rank writes what its callback holds to OUT/<sink>/rank<N>.json."""

from __future__ import annotations

import json
import os
import sys

from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

import whileai_train as wai
from whileai_train.runs.config import SenderConfig

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0, connect_timeout_s=1.0, read_timeout_s=1.0,
                    open_timeout_s=1.0, backoff_base_s=0.05, backoff_max_s=0.2)


def train(tiny: str, out: str, name: str) -> None:
    tok = AutoTokenizer.from_pretrained(tiny)
    ids = [tok(f"order {i} refund status is done").input_ids[:8] for i in range(8)]
    width = min(len(x) for x in ids)
    ids = [x[:width] for x in ids]
    cb = wai.WhileCallback(name=name, config=FAST)
    args = TrainingArguments(output_dir=out, max_steps=3, per_device_train_batch_size=2, logging_steps=1,
                             report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True,
                             ddp_backend="gloo")
    Trainer(model=AutoModelForCausalLM.from_pretrained(tiny), args=args,
            train_dataset=Dataset.from_dict({"input_ids": ids, "labels": ids}), callbacks=[cb]).train()
    rank = os.environ.get("RANK")
    run = cb.run
    held = {"rank": rank, "name": name, "run": run.id if run else None, "logged": run.logged if run else 0,
            "status": run.status if run else None}
    with open(f"{out}/rank{rank}.json", "w") as f:  # a file per rank: stdout lines of two ranks interleave
        json.dump(held, f)


if __name__ == "__main__":
    tiny, out = sys.argv[1], sys.argv[2]
    train(tiny, out + "/local", "ddp-local")
    os.environ["WHILEAI_API_URL"] = os.environ["WHILEAI_TEST_URL"]
    os.environ["WHILEAI_API_KEY"] = os.environ["WHILEAI_TEST_KEY"]
    train(tiny, out + "/http", "ddp-http")
    import torch.distributed as dist  # leave the process group before exit (see monitor_ddp_train.py)

    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
