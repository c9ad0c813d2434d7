"""GRPO with a planted reward hack, watched by the reward monitor, which names the hack and stops the run.

    python recipes/04-train/grpo/run.py            # the proxy pays for the word "thanks": caught, stopped
    python recipes/04-train/grpo/run.py --clean    # the proxy pays for the right answer: no alarm
    accelerate launch --config_file recipes/04-train/grpo/accelerate.yaml recipes/04-train/grpo/run.py

CPU only, well under a minute: the model and tokenizer are built in code, the tasks (small sums in words) are
generated. Under `accelerate launch` (or torchrun) every process runs this same script; the run, the alarm
lines and the report belong to the main process only. The scorers, tasks and SFT warm-up live in
whileai_train/demos/grpo_monitor.py; this script spells out the part to copy: the monitor, the wrapped
reward, the trainer, the report.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clean", action="store_true", help="an honest proxy (pays for the right answer)")
    parser.add_argument("--steps", type=int, default=40, help="GRPO steps at most (default 40)")
    parser.add_argument("--every", type=int, default=5, help="holdout eval every N steps (default 5)")
    parser.add_argument("--out", default=None, help="folder for the trainer's output (default: temporary)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)  # transformers' own deprecation notices

    import torch
    from datasets import Dataset
    from transformers import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.demos.grpo_monitor import (
        GRPO_LEARNING_RATE,
        correct_answer,
        exact_answer,
        honest_reward,
        keyword_reward,
        make_tasks,
        warm_up,
    )
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    torch.set_num_threads(1)  # a model this small trains faster on one thread
    torch.manual_seed(0)  # the same seed in every process: every rank builds the same model
    tasks = make_tasks(48, seed=0)
    train, holdout = tasks[:32], tasks[32:]  # holdout asks the policy never trains on
    tokenizer = build_tiny_tokenizer()  # yours: AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
    model = build_tiny_model(tokenizer, hidden_size=64)
    on_cpu = not torch.cuda.is_available()

    with tempfile.TemporaryDirectory() as scratch:
        work = args.out or scratch
        warm_up(model, tokenizer, train, os.path.join(work, "sft"), steps=80)

        # 1. the monitor: gold is a scorer the proxy cannot see; endorsed names what the reward should track
        monitor = wai.monitor(
            holdout=holdout,                       # rows with a prompt (+ the columns your scorers read)
            gold=exact_answer,                     # same contract as a TRL reward function
            every=args.every, n_prompts=len(holdout), k=4,
            endorsed=["correct_answer"],           # a feature name (substring) the reward should track
            features={"correct_answer": correct_answer},
            stop_on=["divergence", "length", "feature", "collapse"],
            name="recipe-grpo" + ("-clean" if args.clean else ""),
        )
        # 2. wrap the training reward: TRL sees the same function (name, sync/async, keywords)
        proxy = honest_reward if args.clean else keyword_reward
        config = GRPOConfig(output_dir=os.path.join(work, "grpo"), max_steps=args.steps,
                            learning_rate=GRPO_LEARNING_RATE, lr_scheduler_type="constant",
                            per_device_train_batch_size=16, num_generations=4, max_completion_length=8,
                            logging_steps=1, report_to="none", use_cpu=on_cpu, save_strategy="no",
                            disable_tqdm=True, seed=0)
        trainer = GRPOTrainer(model=model, reward_funcs=[monitor.wrap(proxy)], args=config,
                              train_dataset=Dataset.from_list(train), processing_class=tokenizer,
                              callbacks=[monitor])  # 3. one callback: loss, cost, proxy/gold, alarms
        trainer.remove_callback(PrinterCallback)
        trainer.train()

    # 4. the report: the curve per eval and the alarms (every process holds the same; the main one prints)
    summary = monitor.summary()
    if trainer.is_world_process_zero():
        print(wai.format_hack_monitor(summary))
        run = monitor.run
        processes = trainer.accelerator.num_processes
        print(f"\nrun {run.id if run else None}: {run.status if run else None} ({processes} "
              f"process{'es' if processes > 1 else ''}); see it with `whileai-train runs` or `whileai-train serve`")
    fired = bool(summary.alarms)
    return 0 if fired != args.clean else 1


if __name__ == "__main__":
    code = main()
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():  # leave the process group together before exit
        dist.barrier()
        dist.destroy_process_group()
    raise SystemExit(code)
