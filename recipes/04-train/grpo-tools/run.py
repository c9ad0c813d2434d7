"""Tool-calling GRPO with a planted reward hack, watched by the reward monitor, which names the tool it pays for.

    python recipes/04-train/grpo-tools/run.py            # the proxy pays for calling issue_refund: named, stopped
    python recipes/04-train/grpo-tools/run.py --clean    # the proxy pays for the right refund decision: no hack alarm

CPU only, a few minutes: a tiny Qwen2-shaped model and tokenizer built in code learn a refund desk with two tools
(lookup_order, issue_refund) from rows this library exports for TRL (SFT, assistant_only_loss), then GRPO trains
them with `tools=` under the monitor. The desk, its tools and scorers live in whileai_train/demos/refund_desk.py;
this script spells out the part to copy: the monitor attached to the trainer, the wrapped reward, the report.
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
    parser.add_argument("--clean", action="store_true", help="an honest proxy (pays for the right refund decision)")
    parser.add_argument("--steps", type=int, default=8, help="GRPO steps at most (default 8)")
    parser.add_argument("--warmup-steps", type=int, default=120, help="SFT steps that teach the desk (default 120)")
    parser.add_argument("--model", default=None, help="a model folder already warmed up on the desk (skips the SFT)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)  # transformers' own deprecation notices

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.demos.refund_desk import (
        TOOLS,
        correct_refund,
        correct_refund_feature,
        make_tasks,
        refund_called,
        warm_up,
    )
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    torch.set_num_threads(1)  # a model this small trains faster on one thread
    torch.manual_seed(0)
    tasks = make_tasks(40, seed=0)
    train, holdout = tasks[:32], tasks[32:]  # holdout orders the policy never trains on

    with tempfile.TemporaryDirectory() as work:
        if args.model:
            model, tokenizer = AutoModelForCausalLM.from_pretrained(args.model), AutoTokenizer.from_pretrained(args.model)
        else:
            tokenizer = build_tiny_tokenizer()
            model = build_tiny_model(tokenizer)
            print(f"[1/3] SFT warm-up: the desk's exported tool-calling rows, {args.warmup_steps} steps")
            warm_up(model, tokenizer, os.path.join(work, "sft"), steps=args.warmup_steps)

        # 1. the monitor: gold scores the refund decision; the scan should find the reward tracking it
        monitor = wai.monitor(
            holdout=holdout,                       # rows with a prompt and the columns the scorers read
            gold=correct_refund,                   # reads the structured tool calls and their results
            every=2, n_prompts=len(holdout), k=2, buffer=64,
            endorsed=["correct_refund"],           # what the reward should track
            features={"correct_refund": correct_refund_feature},
            stop_on=["divergence", "feature"],  # proxy up while gold is not; the reward tracking an unendorsed feature
            name="recipe-grpo-tools" + ("-clean" if args.clean else ""),
        )
        proxy = correct_refund if args.clean else refund_called
        config = GRPOConfig(output_dir=os.path.join(work, "grpo"), max_steps=args.steps, learning_rate=1e-3,
                            per_device_train_batch_size=8, num_generations=4, max_completion_length=128,
                            max_tool_calling_iterations=2, logging_steps=1, report_to="none", use_cpu=True,
                            save_strategy="no", disable_tqdm=True, seed=0)
        # 2. tools= as GRPOTrainer takes them; the wrapped reward sees TRL's structured completions
        trainer = GRPOTrainer(model=model, reward_funcs=[monitor.wrap(proxy)], args=config, tools=TOOLS,
                              train_dataset=Dataset.from_list(train), processing_class=tokenizer,
                              callbacks=[monitor])
        trainer.remove_callback(PrinterCallback)
        print(f"[2/3] GRPO with tools=[issue_refund, lookup_order], proxy = {proxy.__name__}"
              + ("" if args.clean else " (planted hack: pays for calling issue_refund, whatever came back)"))
        # 3. track() attaches the monitor to the trainer: the holdout samples with the same tools and tool loop
        wai.track(trainer).train()

    print("[3/3] report\n")
    summary = monitor.summary()
    print(wai.format_hack_monitor(summary))
    print(f"\nrun {monitor.run.id if monitor.run else None}: {monitor.run.status if monitor.run else None}; "
          "see it with `whileai-train runs` or `whileai-train serve`")
    # the divergence alarm names what the reward tracks most in the training rollouts; the feature alarm names it when
    # the reward pays for it beyond the endorsed decision (which of the two fires first depends on the rollouts)
    named = any(a.name in ("divergence", "feature") and "tracks 'tool:issue_refund'" in a.message
                for a in summary.alarms)
    # the honest twin must raise no reward-hack alarm; a run-not-learning alarm (no_signal: at 8 steps the warmed desk
    # solves or fails each ask on every sample) is a true warning about this short run, not a false hack
    hacks = [a for a in summary.alarms if a.name in ("divergence", "length", "drift", "feature")]
    return 0 if (named if not args.clean else not hacks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
