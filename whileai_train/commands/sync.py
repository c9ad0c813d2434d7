"""`whileai-train sync`: send what spooled platform runs still owe (after an outage or a killed process), and the
runs WHILEAI_MODE=offline kept in the local store."""

from __future__ import annotations

import argparse

__all__ = ["HELP", "add_arguments", "run"]

HELP = "re-send spooled run points to the platform (after an outage or a killed process), and offline runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=None, help="platform API URL (default: the one each run used)")


def run(args: argparse.Namespace) -> int:
    from whileai_train.runs.offline_sync import sync_offline
    from whileai_train.runs.sync import sync_spool

    result = sync_spool(url=args.url)
    offline = sync_offline(url=args.url)  # the runs WHILEAI_MODE=offline kept in the local store
    result.sent_points += offline.sent_points
    for name in ("synced", "skipped", "failed"):
        getattr(result, name).extend(getattr(offline, name))
    if not (result.synced or result.skipped or result.failed):
        print("nothing to sync: the spool is empty and no offline run waits")
        return 0
    print(result)
    return 0 if result.ok else 1
