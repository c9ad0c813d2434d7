"""`whileai-train show RUN_ID`: one local run: status, summary, cost, notes and its last points."""

from __future__ import annotations

import argparse
import json

__all__ = ["HELP", "add_arguments", "run"]

HELP = "show one run of the local store: status, summary, cost and its last points"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help="the run id (see `whileai-train runs`)")
    parser.add_argument("--points", type=int, default=10, help="how many of the last points to show (default 10)")
    parser.add_argument("--json", action="store_true", help="print the record as JSON")


def run(args: argparse.Namespace) -> int:
    from whileai_train.runs.store import LocalStore, default_store_path

    record = LocalStore().get_run(args.run_id, last_points=args.points) if default_store_path().exists() else None
    if record is None:
        print(f"no run {args.run_id!r} in the local store {default_store_path()}; `whileai-train runs` lists them")
        return 1
    if args.json:
        print(json.dumps(record, indent=2, default=str))
        return 0
    summary = record.get("summary") or {}
    total = record["total_steps"] if record["total_steps"] is not None else "?"
    print(f"{record['id']} {record['name']!r}: {record['status']} at step {record['step']}/{total}, "
          f"{record['points_count']} points")
    if record.get("error"):
        print(f"error: {record['error']}")
    if summary.get("stop_reason"):
        print(f"stopped: {summary['stop_reason']}")
    if summary:
        from whileai_train.runs.cost import duration_text

        cost = summary.get("cost_usd")
        cost_text = f"about ${cost:.2f}" if isinstance(cost, (int, float)) else "no cost estimate"
        seconds = summary.get("seconds")
        took = duration_text(seconds) if isinstance(seconds, (int, float)) else f"{seconds} s"
        print(f"cost: {cost_text} ({summary.get('gpu')}, {took}; {summary.get('cost_basis')})")
        shown = ("cost_usd", "cost_basis", "gpu", "seconds", "holdout", "delta")
        rest = {k: v for k, v in summary.items() if k not in shown}
        if rest:
            print("summary: " + ", ".join(f"{k}={v}" for k, v in rest.items()))
        _print_measurement(summary)
    for note in record.get("notes") or []:
        print(f"note {note['seq']}: {note['markdown']}")
    points = record.get("points") or []
    if points:
        print(f"last {len(points)} points:")
        for p in points:
            values = ", ".join(f"{k}={_fmt(v)}" for k, v in p.items() if k not in ("seq", "ts"))
            print(f"  {values}")
    return 0


def _print_measurement(summary: dict[str, object]) -> None:
    """The after-training blocks: the holdout as one line, the delta report as format_delta_report prints it."""
    from whileai_train.runs.verdicts import holdout_line

    holdout, delta = summary.get("holdout"), summary.get("delta")
    if isinstance(holdout, dict):
        print("holdout: " + holdout_line(holdout))
    if isinstance(delta, dict):
        from pydantic import ValidationError

        from whileai_train.measure.delta_reading import DeltaReport, format_delta_report

        try:
            text = format_delta_report(DeltaReport.model_validate(delta))
        except ValidationError:  # a block another client wrote in another shape: its verdict word, if any
            text = str(delta.get("headline_verdict") or delta.get("verdict") or "a delta block of another shape")
        print("delta: " + text.replace("\n", "\n  "))


def _fmt(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
