"""`whileai-train gate ROWS.jsonl --mode rl|sft [--eval EVAL.jsonl] [--endorsed ...] [--json]`: a CI step.

Runs the gates a training run needs before it spends GPU hours: publish_gate (stamps, refusals, warnings,
pass_at, judge_trust, hack scan, near duplicates, length spread); for rl also the optimize(mode="rl")
preview (what a prune would keep); for sft the SFT export's own check (failing rows refused with the count
and fix `whileai-train export` would give, unless --check warn); with --eval, decontaminate against the eval
rows. Prints the reports (or one JSON object) and exits non-zero on a refusal or contamination.

Exit codes: 0 fit to train (warnings allowed), 1 refused or contaminated, 2 unusable input or arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["HELP", "add_arguments", "run"]

HELP = "check a rows file before training (publish gate, optimize preview, decontamination); non-zero on refusal"

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rows", help="the training rows, a JSONL file (one row per line)")
    parser.add_argument("--mode", required=True, choices=("rl", "sft"),
                        help="rl: repeats of one ask for a grouped update (GRPO); sft: supervised rows")
    parser.add_argument("--eval", action="append", default=[], metavar="EVAL.jsonl",
                        help="eval rows to decontaminate against (repeat for several files)")
    parser.add_argument("--endorsed", nargs="+", default=None, metavar="FEATURE",
                        help="substrings of feature names the reward should track (e.g. tool:issue_refund); "
                             "commas also separate")
    parser.add_argument("--strict-hacks", action="store_true",
                        help="refuse when the hack scan finds a reward_hack (needs --endorsed)")
    parser.add_argument("--policy", default=None, help="the policy that produced the rows, for the stamps")
    parser.add_argument("--no-scan", action="store_true", help="skip the hack scan")
    from whileai_train.exporters.defaults import CHECKS

    parser.add_argument("--check", choices=CHECKS, default=CHECKS[0],
                        help="sft: rows with a failing reward are refused (exit 1), as `whileai-train export` "
                             "refuses them; warn reports them and exits 0, as `export --check warn` trains them")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstraps and the scan's shuffles")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the reports")
    parser.epilog = "exit codes: 0 fit to train (warnings allowed), 1 refused or contaminated, 2 unusable input"


def _endorsed(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _dump(report: Any) -> Any:
    return report.model_dump(mode="json") if hasattr(report, "model_dump") else report


def run(args: argparse.Namespace) -> int:
    from whileai_train.errors import WhileAIError
    from whileai_train.gates.publish_gate import PublishGateError, publish_gate
    from whileai_train.rows.files import read_rows
    from whileai_train.rows.intake import take_rows

    out: dict[str, Any] = {"rows": str(args.rows), "mode": args.mode}
    texts: list[str] = []
    code = EXIT_OK
    try:
        rows = take_rows(args.rows, "gate")  # the export's intake: the gate refuses the shapes the export refuses
        if args.mode == "sft":
            from whileai_train.exporters.training import training_rows

            training_rows(rows, check="warn")  # the export's reading of every row, nothing written
        endorsed = _endorsed(args.endorsed)
        gate: Any
        try:
            gate = publish_gate(rows, mode=args.mode, policy=args.policy, endorsed=endorsed,
                                strict_hacks=args.strict_hacks, scan=not args.no_scan, check=args.check,
                                seed=args.seed)
            out["refused"] = None
        except PublishGateError as refused:
            gate = refused.report
            out["refused"] = str(refused)
            code = EXIT_REFUSED
        out["publish_gate"] = _dump(gate)
        texts.append(str(gate))
        if args.mode == "rl" and code == EXIT_OK:
            out["optimize"] = _optimize_preview(rows, args.seed, texts)
        if args.eval:
            from whileai_train.gates.decontaminate import decontaminate

            eval_rows = [row for path in args.eval for row in read_rows(path)]
            _, report = decontaminate(rows, eval_rows)
            out["decontaminate"] = _dump(report)
            texts.append(str(report))
            if report.n_contaminated:
                code = EXIT_REFUSED
    except WhileAIError as error:  # unreadable file, bad row, bad arguments: the message names the fix
        out["error"] = f"{type(error).__name__}: {error}"
        texts.append(f"gate: cannot check {args.rows}: {type(error).__name__}: {error}")
        code = EXIT_INPUT
    out["exit_code"] = code
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        print("\n\n".join(texts))
        verdict = {EXIT_OK: "fit to train", EXIT_REFUSED: "NOT fit to train", EXIT_INPUT: "not checked"}[code]
        print(f"\ngate: {verdict} (exit {code})", file=sys.stderr if code == EXIT_INPUT else sys.stdout)
    return code


def _optimize_preview(rows: list[dict[str, Any]], seed: int, texts: list[str]) -> Any:
    """What optimize(mode="rl") would keep; the scan already ran in the gate, so it is not run twice."""
    from whileai_train.errors import WhileAIError

    try:
        from whileai_train.select.optimize import optimize

        result = optimize(rows, mode="rl", seed=seed)
    except (WhileAIError, ImportError) as error:
        texts.append(f"optimize preview: not run ({type(error).__name__}: {error})")
        return {"error": f"{type(error).__name__}: {error}"}
    report = result.report
    texts.append("optimize preview (nothing is written; run wai.optimize to prune):\n" + str(report))
    return _dump(report)
