"""Export graded tool-using rollouts as DPO pairs and train a tiny model on them, streamed into a run.

    python recipes/03-train/dpo/run.py [--out OUT] [--steps 4]

CPU only, well under a minute: the model and tokenizer are built in code, the rollouts are generated (a
refund desk: a passing rollout refunds the right order, a failing one the wrong one). Swap in your own graded
rows (a JSONL path works), your tokenizer and your model; the rest stays as it is.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="folder for the pairs and the trainer (default: temporary)")
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)  # transformers' own deprecation notices
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.out or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        train(folder, args.steps)


def train(folder: Path, steps: int) -> None:
    from datasets import load_dataset
    from transformers import PrinterCallback
    from trl import DPOConfig, DPOTrainer

    import whileai_train as wai
    from whileai_train.demos.rollouts import REFUND_TOOLS, refund_rollouts
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    # 1. graded rows: generated here (reward 1 or 0 per rollout); yours come from wai.read_rows("graded.jsonl")
    rows = list(refund_rollouts(64))
    tokenizer = build_tiny_tokenizer()  # yours: AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")

    # 2. export: per task, a passing rollout against a failing one; prompt = what both sides share,
    #    chosen / rejected = the one agent turn where they part (DPOTrainer scores every completion token)
    path = folder / "dpo.jsonl"
    report = wai.export_preference(rows, path, format="trl", system_prompt="You are the refund desk.",
                                   tools=REFUND_TOOLS, tokenizer=tokenizer)
    print(report, "\n")

    # 3. train, streamed into a run (local store without a key): loss, rewards/margins, rewards/accuracies, ...
    dataset = load_dataset("json", data_files=str(path), split="train")  # or wai.to_dataset(path)
    config = DPOConfig(output_dir=str(folder / "trainer"), max_steps=steps, per_device_train_batch_size=4,
                       learning_rate=1e-3, use_cpu=True, report_to="none", save_strategy="no", disable_tqdm=True,
                       logging_steps=1, seed=0)
    callback = wai.WhileCallback(name="recipe-dpo", dataset_id=str(path))
    # the reference model is a second copy of the start (same seed); with a hub path TRL loads it itself
    trainer = DPOTrainer(model=build_tiny_model(tokenizer), ref_model=build_tiny_model(tokenizer), args=config,
                         train_dataset=dataset, processing_class=tokenizer, callbacks=[callback])
    trainer.remove_callback(PrinterCallback)
    batch = next(iter(trainer.get_train_dataloader()))
    with wai.track(trainer):  # a crash inside train() finishes the run "failed" with the error
        trainer.train()

    # 4. what DPO scored in the first pair: the diverging agent turn on each side, nothing of the prompt
    #    (TRL's batch holds every pair's chosen side, then every pair's rejected side)
    ids, mask = batch["input_ids"].tolist(), batch["completion_mask"].tolist()
    half = len(ids) // 2
    for side, row in (("chosen", 0), ("rejected", half)):
        spans = wai.trained_spans(tokenizer, ids[row], mask[row])
        print(f"scored on the {side} side of pair 0: " + " | ".join("»" + s.replace("\n", "\\n") + "«" for s in spans))
    last = [entry for entry in trainer.state.log_history if "rewards/margins" in entry][-1]
    run = callback.run
    print(f"\nstep {last['step']}: rewards/margins {last['rewards/margins']:+.4f}, "
          f"rewards/accuracies {last['rewards/accuracies']:.2f}")
    print(f"run {run.id if run else None}: {run.status if run else None}; see it with `whileai-train show "
          f"{run.id if run else 'RUN_ID'}` or `whileai-train serve`")


if __name__ == "__main__":
    main()
