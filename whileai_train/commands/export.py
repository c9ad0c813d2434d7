"""`whileai-train export ROWS.jsonl OUT.jsonl [--kind sft|preference|prompts] [--format trl] ...`.

Writes training rows TRL trains as meant (or the OpenAI wire rows) and prints the export report.
Exit codes: 0 written, 1 refused (a privileged leak, failing SFT rows without --check warn, nothing to
train), 2 unusable input or arguments (binary, non-UTF-8 or broken input, or an output path that is one of
the inputs). The written file's mode follows the umask, as any new file's does.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whileai_train.exporters.options import ExportOptions

__all__ = ["HELP", "add_arguments", "run"]

HELP = "export rollout rows as SFT, preference (DPO) or GRPO prompt rows that TRL trains as intended"

EXIT_OK, EXIT_REFUSED, EXIT_INPUT = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rows", help="rollout rows, a JSONL file (flat rollouts or OpenAI `messages` rows)")
    parser.add_argument("out", help="where to write the exported JSONL (written to a temp name, then renamed)")
    parser.add_argument("--kind", choices=("sft", "preference", "prompts"), default="sft",
                        help="sft: training rows (default); preference: one-turn DPO pairs from graded rows; "
                             "prompts: GRPO prompt-only rows")
    from whileai_train.exporters.defaults import CHECK, CHECKS, FORMAT, MASK_MODE, MASK_MODES

    parser.add_argument("--format", choices=("trl", "openai"), default=FORMAT,
                        help=f"{FORMAT} (the default, as in Python): what TRL's trainers read; openai: the API wire "
                             "rows")
    parser.add_argument("--mask-mode", choices=MASK_MODES, default=MASK_MODE,
                        help="sft: train every agent turn (assistant) or only the last one (final)")
    parser.add_argument("--unroll", action="store_true", help="sft: one sample per agent turn, loss on that turn")
    parser.add_argument("--max-tool-output-chars", type=int, default=None, metavar="N",
                        help="cap each tool message at N characters, with a marker saying how many were cut")
    parser.add_argument("--system-prompt", default=None, help="the one system turn every row gets")
    parser.add_argument("--tools", default=None, metavar="TOOLS.json",
                        help="a JSON file with the list of tool schemas (otherwise each row's own `tools`)")
    parser.add_argument("--tokenizer", default=None, metavar="PATH",
                        help="a local tokenizer folder: render the rows with the chat template that will train "
                             "them (arguments encoding, what it drops, rows over --max-length tokens)")
    parser.add_argument("--max-length", type=int, default=None, help="the trainer's max_length (default 1024)")
    parser.add_argument("--columns", nargs="+", default=None,
                        help="prompts: row keys to carry for the reward (default: every key of the rows but the "
                             "conversation and a past rollout's own values; the report says what was left out)")
    parser.add_argument("--check", choices=CHECKS, default=CHECK,
                        help="sft: rows with a failing reward are refused (exit 1, nothing written); warn trains "
                             "on them on purpose and says so in the report")
    parser.add_argument("--no-validate", action="store_true",
                        help="write rows that quote their privileged context, or lose part of themselves to the "
                             "chat template, instead of refusing (the report counts them)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


def _tools(path: str | None) -> list[Any] | None:
    from whileai_train.errors import InputError

    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return json.loads(handle.read().decode("utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({type(exc).__name__}: {exc.strerror}). Fix: check the path") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start + 1}). Fix: save the tool schemas as UTF-8 JSON") \
            from None
    except ValueError as exc:
        raise InputError(f"{path}: not JSON ({exc}). Fix: write the tool schemas as one JSON list") from None


def _options(args: argparse.Namespace, tools: list[Any] | None, tokenizer: Any) -> ExportOptions:
    """The export's options from the command line (the SFT ones unread by a preference export)."""
    from whileai_train.exporters.options import ExportOptions

    return ExportOptions(format=args.format, mask_mode=args.mask_mode, unroll=args.unroll,
                         max_tool_output_chars=args.max_tool_output_chars, system_prompt=args.system_prompt,
                         tools=tools, tokenizer=tokenizer, validate=not args.no_validate, max_length=args.max_length,
                         check=args.check)


def run(args: argparse.Namespace) -> int:
    from whileai_train.commands import same_file
    from whileai_train.errors import (
        ConfigError,
        ExportRefusedError,
        InputError,
        TemplateDropError,
        WhileAIError,
    )

    for given, what in ((args.rows, "the rows"), (args.tools, "the tool schemas")):
        if given is not None and same_file(given, args.out):
            print(f"export failed: the output {args.out} is {what} file it reads; writing it would destroy the "
                  "input. Fix: pass another output path", file=sys.stderr)
            return EXIT_INPUT
    try:
        tools = _tools(args.tools)
        tokenizer = None
        if args.tokenizer is not None:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
        if args.kind == "sft":
            from whileai_train.exporters.training import export_dataset

            report = export_dataset(args.rows, args.out, options=_options(args, tools, tokenizer))
        elif args.kind == "preference":
            from whileai_train.exporters.preference import export_preference

            report = export_preference(args.rows, args.out, options=_options(args, tools, tokenizer))
        else:
            from whileai_train.exporters.prompts import export_prompts

            report = export_prompts(args.rows, args.out, columns=args.columns, system_prompt=args.system_prompt)
    except (ExportRefusedError, TemplateDropError) as exc:
        print(f"export refused: {exc}", file=sys.stderr)
        selection = getattr(exc, "selection", None)  # TrainingSelectionError: what the trainer would learn from
        if selection is not None:
            print("\n".join(selection.lines()), file=sys.stderr)
        return EXIT_REFUSED
    except (InputError, ConfigError, WhileAIError, OSError, json.JSONDecodeError) as exc:
        print(f"export failed: {exc}", file=sys.stderr)
        return EXIT_INPUT
    print(json.dumps(report.model_dump(), indent=2) if args.json else report)
    return EXIT_OK
