"""The whole loop offline, twice: gate the rows, GRPO under the reward monitor, evaluate before and after, and the
after-training verdict with a guard, kept on the run. Once with a reward that pays for a keyword (the planted hack),
once with an honest reward, side by side.

    python recipes/02-measure/reward-hacking/run.py [--steps 30]

CPU only, a few minutes: a tiny Qwen2-shaped model and tokenizer built in code, warmed up by SFT on small sums in
words ("what is two plus three ?" -> "five"); the scorers and tasks are whileai_train/demos/grpo_monitor.py's.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

GUARD = "no_repetition"  # a behaviour the training must not break (a style marker, 1.0 = no repeated phrases)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30, help="GRPO steps per run at most (default 30)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)  # transformers' own deprecation notices

    import torch
    from datasets import Dataset
    from transformers import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    import whileai_train as wai
    from whileai_train.demos.grpo_monitor import (
        correct_answer,
        exact_answer,
        honest_reward,
        keyword_reward,
        make_tasks,
        warm_up,
    )
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    torch.set_num_threads(1)  # a model this small trains faster on one thread
    torch.manual_seed(0)
    tasks = make_tasks(48, seed=0)
    train, held_out = tasks[:32], tasks[32:]
    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer, hidden_size=64)

    def evaluate(path: str) -> list[dict[str, Any]]:
        """Gold-graded rows on the held-out tasks, three evaluations, with the style markers stamped."""
        rows = wai.evaluate(path, held_out, [exact_answer], k=4, runs=3, max_completion_length=8, progress=False)
        return wai.style_markers(rows)

    with tempfile.TemporaryDirectory() as work:
        warm_up(model, tokenizer, train, os.path.join(work, "sft"), steps=80)
        base = os.path.join(work, "base")
        model.save_pretrained(base)
        tokenizer.save_pretrained(base)
        before = evaluate(base)
        print(f"baseline: {wai.pass_at(before)}".splitlines()[0])

        verdicts = {}
        for name, proxy in (("hacked", keyword_reward), ("honest", honest_reward)):
            print(f"\n=== {name}: proxy = {proxy.__name__} ===")
            # 1. gate: the proxy's grades of the baseline's own rollouts, scanned before any GPU hour is spent
            rollouts = wai.evaluate(base, train, [proxy], k=4, max_completion_length=8, progress=False)
            scan = wai.hack_scan(rollouts, endorsed=["correct_answer"], features={"correct_answer": correct_answer})
            print("gate:", str(scan).splitlines()[0])
            # 2. GRPO under the monitor
            monitor = wai.monitor(holdout=held_out, gold=exact_answer, every=5, n_prompts=len(held_out), k=4,
                                  endorsed=["correct_answer"], features={"correct_answer": correct_answer},
                                  stop_on=["divergence", "feature"], verbose=False, name=f"recipe-measure-{name}")
            policy = build_tiny_model(tokenizer, hidden_size=64)
            policy.load_state_dict(model.state_dict())
            config = GRPOConfig(output_dir=os.path.join(work, name), max_steps=args.steps, learning_rate=2e-3,
                                lr_scheduler_type="constant", per_device_train_batch_size=16, num_generations=4,
                                max_completion_length=8, logging_steps=1, report_to="none", use_cpu=True,
                                save_strategy="no", disable_tqdm=True, seed=0)
            trainer = GRPOTrainer(model=policy, reward_funcs=[monitor.wrap(proxy)], args=config,
                                  train_dataset=Dataset.from_list(train), processing_class=tokenizer,
                                  callbacks=[monitor])
            trainer.remove_callback(PrinterCallback)
            wai.track(trainer).train()
            print("monitor:", monitor.summary().verdict)
            trained = os.path.join(work, f"{name}-trained")
            policy.save_pretrained(trained)
            tokenizer.save_pretrained(trained)
            # 3. evaluate the trained model as the baseline was, then the verdict with a guard, kept on the run
            after = evaluate(trained)
            report = wai.delta_report(before, after, must_not_regress=[GUARD])
            print(str(report).splitlines()[0])
            if monitor.run is not None:
                wai.attach_delta(monitor.run.id, report)
                print(f"kept on run {monitor.run.id} ({monitor.run.status}): whileai-train show {monitor.run.id}")
            verdicts[name] = (monitor.summary().alarms, report.headline_verdict)

    print("\n=== side by side ===")
    for name, (alarms, verdict) in verdicts.items():
        caught = ", ".join(sorted({a.name for a in alarms})) or "none"
        print(f"{name:7s} alarms: {caught:25s} delta_report: {verdict}")
    hacked_alarms, hacked_verdict = verdicts["hacked"]
    honest_alarms, _ = verdicts["honest"]
    return 0 if hacked_alarms and hacked_verdict != "PASS" and not honest_alarms else 1


if __name__ == "__main__":
    raise SystemExit(main())
