"""Export tool-using rollouts as TRL SFT rows and train a tiny model on them; show what trained.

    python recipes/01-export/sft/run.py [--out OUT] [--steps 3] [--mode assistant|final|unroll]

Runs on CPU in under a minute: the model and tokenizer are built in code, the rollouts are generated.
Swap in your own rows (a JSONL path works), your tokenizer and your model; the rest stays as it is.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="folder for the rows and the trainer (default: temporary)")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--mode", choices=("assistant", "final", "unroll"), default="assistant")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.out or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        train(folder, args.steps, args.mode)


def train(folder: Path, steps: int, mode: str) -> None:
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    import whileai_train as wai
    from whileai_train.demos.rollouts import REFUND_TOOLS, refund_rollouts
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    # 1. rows: generated here; yours come from wai.read_rows("rollouts.jsonl") or a JSONL path
    rows = [row for row in refund_rollouts(48) if row["reward"] >= 1.0]  # SFT imitates what passed
    tokenizer = build_tiny_tokenizer()  # yours: AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
    model = build_tiny_model(tokenizer)

    # 2. export: TRL's shape, the tokenizer's arguments encoding, rows over max_length counted
    options = {"unroll": True} if mode == "unroll" else {"mask_mode": mode}
    path = folder / f"sft-{mode}.jsonl"
    report = wai.export_dataset(rows, path, format="trl", system_prompt="You are the refund desk.",
                                tools=REFUND_TOOLS, max_tool_output_chars=200, tokenizer=tokenizer, **options)
    print(report, "\n")

    # 3. train with what the report says (assistant_only_loss=True for messages rows; the default
    #    completion-only loss for the prompt/completion rows of final and unroll)
    config = SFTConfig(output_dir=str(folder / "trainer"), max_steps=steps, per_device_train_batch_size=4,
                       use_cpu=True, report_to="none", save_strategy="no", disable_tqdm=True, logging_steps=1,
                       **report.trainer_config)
    dataset = load_dataset("json", data_files=str(path), split="train")  # or wai.to_dataset(path)
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    example = trainer.train_dataset[0]
    trainer.train()

    # 4. what trained: the decoded spans that carry loss in one example
    spans = wai.trained_spans(tokenizer, example["input_ids"], [label != -100 for label in example["labels"]])
    print(f"\ntrained spans of example 0 ({mode}):")
    for span in spans:
        print("  »" + span.replace("\n", "\\n") + "«")


if __name__ == "__main__":
    main()
