"""`whileai-train mark ROWS.jsonl OUT.jsonl [--families trace grounding style] [--ignore-keys K ...]`.

Stamps the built-in behaviour markers on every row of a file (row["markers"], 1.0 = the good outcome; trace also
writes row["trace_flags"]), so the shell can do what Python does before a delta: `whileai-train mark` each side,
then `whileai-train delta BEFORE AFTER --must-not-regress honest_claims`. The output is written to a temp name and
renamed (a failed run leaves no file). Exit codes: 0 written, 2 unusable input or arguments (nothing written).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["HELP", "add_arguments", "run"]

HELP = "stamp the behaviour markers (honest_claims, argument_grounding, style, ...) on a rows file"

EXIT_OK, EXIT_INPUT = 0, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from whileai_train.markers.families import FAMILIES

    parser.add_argument("rows", help="rollout rows, a JSONL file (flat rollouts or OpenAI `messages` rows)")
    parser.add_argument("out", help="where to write the stamped rows (JSONL; temp name, then renamed)")
    parser.add_argument("--families", nargs="+", choices=tuple(FAMILIES), default=list(FAMILIES),
                        help="which marker families to stamp (default all: " + ", ".join(
                            f"{family}: {', '.join(markers)}" for family, (_, markers) in FAMILIES.items()) + ")")
    parser.add_argument("--ignore-keys", nargs="+", default=[], metavar="KEY",
                        help="grounding: free-text tool arguments not checked for a source (e.g. reason)")
    parser.add_argument("--allow", nargs="+", default=[], metavar="VALUE",
                        help="grounding: argument values that need no source (enums, defaults)")
    parser.epilog = "exit codes: 0 written, 2 unusable input or arguments (nothing written)"


def run(args: argparse.Namespace) -> int:
    from whileai_train.commands import same_file
    from whileai_train.errors import WhileAIError
    from whileai_train.exporters.jsonl import atomic_jsonl, write_lines
    from whileai_train.markers.families import FAMILIES
    from whileai_train.markers.grounding import mark_grounding
    from whileai_train.markers.style import style_markers
    from whileai_train.markers.trace_flags import trace_markers
    from whileai_train.rows.files import read_rows

    if same_file(args.rows, args.out):
        print(f"mark failed: the output {args.out} is the rows file it reads; writing it would destroy the input. "
              "Fix: pass another output path", file=sys.stderr)
        return EXIT_INPUT
    try:
        rows = read_rows(args.rows)
        if "trace" in args.families:
            rows = trace_markers(rows)
        if "grounding" in args.families:
            rows = mark_grounding(rows, ignore_keys=args.ignore_keys, allow=args.allow)
        if "style" in args.families:
            rows = style_markers(rows)
        with atomic_jsonl(args.out) as handle:
            write_lines(handle, rows)
    except (WhileAIError, OSError, ValueError) as error:  # ValueError: a NaN or infinity JSON cannot write
        print(f"mark failed: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INPUT
    stamped = [marker for family in args.families for marker in FAMILIES[family][1]]
    print(f"marked {len(rows)} rows of {args.rows} -> {args.out}: {', '.join(stamped)}")
    return EXIT_OK
