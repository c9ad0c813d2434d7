"""`whileai-train delta BEFORE.jsonl AFTER.jsonl [--target pass@1] [--must-not-regress a,b] [--by KEY]
[--run-std X --run-std-runs N] [--json]`: the CI step after a training job, the twin of `whileai-train gate`.

Prints delta_report (or one JSON object). Exit codes: 0 PASS or NO DIFFERENCE, 1 FAIL or NOT COMPARABLE (two
sides with no task in common included: a verdict, not bad input), 2 unusable input or arguments (an unreadable
file, ungraded rows, a marker on neither side: nothing is printed as a verdict then). The fixes it prints name
this command's flags (--tasks, --run-std, ...), where delta_report's own name its arguments; markers come from
`whileai-train mark`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

__all__ = ["HELP", "add_arguments", "cli_words", "run"]

HELP = "compare an eval before and after training (delta_report); non-zero on FAIL or NOT COMPARABLE"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("before", help="the baseline's graded eval rows, a JSONL file")
    parser.add_argument("after", help="the trained model's graded eval rows on the same tasks, a JSONL file")
    parser.add_argument("--target", default="pass@1", help="the metric training was meant to move (default pass@1)")
    parser.add_argument("--must-not-regress", action="append", default=[], metavar="A,B",
                        help="markers whose significant drop fails the run (commas separate; repeatable)")
    parser.add_argument("--by", default=None, metavar="KEY", help="a row key or marker to compare the target within")
    parser.add_argument("--run-std", type=float, default=None, help="the eval's re-run standard deviation")
    parser.add_argument("--run-std-runs", type=int, default=None, metavar="N",
                        help="how many evaluations --run-std came from (the band then uses t at N - 1 df)")
    parser.add_argument("--tasks", default=None, metavar="BASE.jsonl", help="restrict both sides to these tasks")
    parser.add_argument("--balance-rollouts", action="store_true", help="trim each task to the rows both sides have")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the sign flips")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    parser.epilog = ("exit codes: 0 PASS or NO DIFFERENCE, 1 FAIL or NOT COMPARABLE (no shared task included), "
                     "2 unusable input")


# delta_report's words for its arguments -> this command's flags (longest first: run_std_runs before run_std)
_FLAGS = (
    ("run_std=wai.eval_variance(run_1, run_2, run_3)", "--run-std (wai.eval_variance(run_1, run_2, run_3) measures "
                                                        "it) with --run-std-runs 3"),
    ("run_std_runs=", "--run-std-runs"), ("run_std=", "--run-std"), ("balance_rollouts=True", "--balance-rollouts"),
    ("must_not_regress=", "--must-not-regress"), ("tasks=", "--tasks"), ("target=", "--target"), ("by=", "--by"),
)
_MARK = "(`whileai-train mark ROWS OUT` stamps the built-in markers)"


def cli_words(text: str) -> str:
    """A message of delta_report's in this command's terms: its flags for the Python arguments it names, and
    `whileai-train mark` where it says to stamp markers."""
    for python, flag in _FLAGS:
        text = re.compile(rf"(?<![\w-]){re.escape(python)}").sub(flag.replace("\\", r"\\"), text)
    if "row['markers']" in text or "stamp it on both sides" in text:
        text += f" {_MARK}"
    return text


def run(args: argparse.Namespace) -> int:
    from whileai_train.errors import WhileAIError
    from whileai_train.measure.delta_report import delta_report

    out: dict[str, Any] = {"before": str(args.before), "after": str(args.after)}
    guards = [part.strip() for value in args.must_not_regress for part in value.split(",") if part.strip()]
    try:
        report = delta_report(args.before, args.after, target=args.target, must_not_regress=guards, by=args.by,
                              run_std=args.run_std, run_std_runs=args.run_std_runs, tasks=args.tasks,
                              balance_rollouts=args.balance_rollouts, seed=args.seed)
    except (WhileAIError, OSError) as error:
        out["error"] = cli_words(f"{type(error).__name__}: {error}")
        out["exit_code"] = EXIT_INPUT
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print(f"delta: cannot compare {args.before} and {args.after}: {out['error']}", file=sys.stderr)
        return EXIT_INPUT
    code = EXIT_OK if report.headline_verdict in ("PASS", "NO DIFFERENCE") else EXIT_FAILED
    if args.json:
        out.update(report=report.model_dump(mode="json"), headline_verdict=report.headline_verdict, exit_code=code)
        print(json.dumps(out, indent=2, default=str))
    else:
        print(cli_words(str(report)))
        print(f"\ndelta: {report.headline_verdict} (exit {code})")
    return code
