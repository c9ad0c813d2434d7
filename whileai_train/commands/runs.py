"""`whileai-train runs`: the runs in the local store, newest first."""

from __future__ import annotations

import argparse
import json
import time

__all__ = ["HELP", "add_arguments", "run"]

HELP = "list the runs in the local store (newest first)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=20, help="how many runs to list (default 20)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from whileai_train.runs.store import LocalStore, default_store_path

    if not default_store_path().exists():
        print(f"no local runs yet ({default_store_path()} does not exist)")
        return 0
    runs = LocalStore().list_runs(limit=args.limit)
    if args.json:
        print(json.dumps(runs, indent=2, default=str))
        return 0
    if not runs:
        print("no local runs yet")
        return 0
    print(f"{'id':<18} {'status':<8} {'step':>11}  {'cost':<10} {'started':<16} name")
    for r in runs:
        step = f"{r['step'] or 0}/{r['total_steps'] if r['total_steps'] is not None else '?'}"
        cost = (r["summary"] or {}).get("cost_usd")
        cost_text = f"${cost:.2f}" if isinstance(cost, (int, float)) else "-"
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"]))
        print(f"{r['id']:<18} {r['status']:<8} {step:>11}  {cost_text:<10} {started:<16} {r['name']}")
    return 0
