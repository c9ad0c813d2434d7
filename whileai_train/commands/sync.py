"""`whileai-train sync`: send what spooled platform runs still owe (after an outage or a killed process)."""

from __future__ import annotations

import argparse

__all__ = ["HELP", "add_arguments", "run"]

HELP = "re-send spooled run points to the platform (after an outage or a killed process)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=None, help="platform API URL (default: the one each run used)")


def run(args: argparse.Namespace) -> int:
    from whileai_train.runs.sync import sync_spool

    result = sync_spool(url=args.url)
    if not (result.synced or result.skipped or result.failed):
        print("nothing to sync: the spool is empty")
        return 0
    print(result)
    return 0 if result.ok else 1
