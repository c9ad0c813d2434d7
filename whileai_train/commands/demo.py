"""`whileai-train demo`: GRPO with a planted reward hack, caught and stopped by the reward monitor.

By default (whileai_train/demos/grpo_monitor.py, recipes/04-train/grpo/): a tiny model built in code,
a short SFT warm-up, then GRPO on CPU whose proxy reward pays for a keyword while gold pays for the right
answer; the monitor names the hack and stops the run, which is in the local store; the report is printed.
``--clean`` runs the honest variant (no alarm). ``--sft`` (or ``--rows``) runs the SFT export demo below.

The SFT export demo: export tool-using rollouts, train SFT a few steps on a tiny model, show what trained.

Runs on CPU in well under a minute from a fresh install: the model and tokenizer are built in code
(no hub), the rollouts are generated (a refund desk with lookup/refund tools). It prints the export
report, the loss of each step, and one training example with the tokens that carried loss marked, so
you can see that the agent's turns trained and the tool output, user and system turns did not.
The same steps, as a script to read and adapt: recipes/01-export/sft/.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "run", "sft_export_demo"]

HELP = ("GRPO on a tiny model with a planted reward hack, caught and stopped by the reward monitor (CPU, about "
        "a minute); --clean: honest reward, no alarm; --sft: the SFT export demo")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clean", action="store_true", help="GRPO demo with an honest proxy: no alarm fires")
    parser.add_argument("--sft", action="store_true", help="run the SFT export demo instead (export generated "
                                                           "tool-using rollouts, train SFT, show what trained)")
    parser.add_argument("--out", default=None, help="folder for the exported rows and trainer output "
                                                    "(default: a temporary folder, removed afterwards)")
    parser.add_argument("--rows", type=int, default=None, help="SFT demo: how many rollouts to generate "
                                                               "(default 48; implies --sft)")
    parser.add_argument("--steps", type=int, default=None, help="steps to train (default: 40 GRPO steps at most, "
                                                                "or 3 SFT steps with --sft)")


def _quiet() -> None:
    for name, value in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false"),
                        ("HF_DATASETS_DISABLE_PROGRESS_BARS", "1"), ("TRANSFORMERS_VERBOSITY", "error")):
        os.environ.setdefault(name, value)


def _marked(tokenizer: Any, ids: list[int], labels: list[int]) -> str:
    """The example as text, each run of trained tokens wrapped in »...« ."""
    parts, run, trained = [], [], None
    for token, label in zip(ids, labels):
        flag = label != -100
        if trained is not None and flag != trained:
            text = tokenizer.decode(run)
            parts.append(f"»{text}«" if trained else text)
            run = []
        run.append(token)
        trained = flag
    if run:
        text = tokenizer.decode(run)
        parts.append(f"»{text}«" if trained else text)
    return "".join(parts)


def sft_export_demo(folder: Path, *, rows: int = 48, steps: int = 3, echo: Any = print) -> dict[str, Any]:
    """Export `rows` generated rollouts to TRL rows, train `steps` SFT steps, report what was trained."""
    _quiet()
    import logging
    import warnings

    from datasets import load_dataset
    from transformers import PrinterCallback
    from transformers.utils import logging as hf_logging
    from trl import SFTConfig, SFTTrainer

    from whileai_train.demos.rollouts import REFUND_TOOLS, refund_rollouts
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer
    from whileai_train.exporters.inspect import trained_spans
    from whileai_train.exporters.training import export_dataset

    hf_logging.set_verbosity_error()
    logging.getLogger("datasets").setLevel(logging.ERROR)
    echo("building a tiny Qwen2-shaped model and BPE tokenizer in code (Qwen2.5 chat template) ...")
    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer)
    path = folder / "sft-trl.jsonl"
    passing = (row for row in refund_rollouts(rows) if row["reward"] >= 1.0)  # SFT imitates what passed
    report = export_dataset(passing, path, format="trl", mask_mode="assistant",
                            system_prompt="You are the refund desk. Use the tools.", tools=REFUND_TOOLS,
                            max_tool_output_chars=200, tokenizer=tokenizer)
    echo(f"\nexported the passing rollouts of {rows} generated ones:\n{report}\n")
    dataset = load_dataset("json", data_files=str(path), split="train")
    with warnings.catch_warnings():  # transformers 5.24 warns about its own deprecated field names here
        warnings.simplefilter("ignore", FutureWarning)
        config = SFTConfig(output_dir=str(folder / "trainer"), max_steps=steps, per_device_train_batch_size=4,
                           learning_rate=1e-3, use_cpu=True, report_to="none", save_strategy="no",
                           disable_tqdm=True, logging_steps=1, assistant_only_loss=True, seed=0)
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    trainer.remove_callback(PrinterCallback)  # we print the losses ourselves
    example = trainer.train_dataset[0]  # type: ignore[index]
    result = trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    echo(f"trained {trainer.state.global_step} SFT steps (assistant_only_loss=True); loss per step: "
         + ", ".join(f"{loss:.3f}" for loss in losses))
    ids, labels = list(example["input_ids"]), list(example["labels"])
    spans = trained_spans(tokenizer, ids, [label != -100 for label in labels])
    trained = sum(label != -100 for label in labels)
    echo(f"\nwhat trained in example 0 ({trained} of {len(ids)} tokens carry loss; »trained«, the rest is context):")
    echo(_marked(tokenizer, ids, labels))
    leaked = [span for span in spans if "tool_response" in span or "<|im_start|>user" in span
              or "<|im_start|>system" in span]
    echo("\ntrained spans hold agent turns only: "
         + ("yes" if not leaked else f"NO ({len(leaked)} spans hold other text)"))
    return {"report": report, "losses": losses, "trained_spans": spans, "train_loss": result.training_loss,
            "path": str(path), "clean": not leaked}


def run(args: argparse.Namespace) -> int:
    if not (args.sft or args.rows is not None):
        _quiet()
        from whileai_train.demos.grpo_monitor import main as grpo_monitor_demo

        return grpo_monitor_demo(clean=args.clean, max_steps=args.steps or 40, out_dir=args.out)
    args.rows = 48 if args.rows is None else args.rows
    args.steps = 3 if args.steps is None else args.steps
    if args.out is not None:
        folder = Path(args.out)
        folder.mkdir(parents=True, exist_ok=True)
        outcome = sft_export_demo(folder, rows=args.rows, steps=args.steps)
        print(f"\nexported rows: {outcome['path']}")
    else:
        with tempfile.TemporaryDirectory(prefix="whileai-demo-") as name:
            outcome = sft_export_demo(Path(name), rows=args.rows, steps=args.steps)
    return 0 if outcome["clean"] else 1
