"""`whileai-train`: the command line. Each subcommand lives in its own module under `commands/`.

A subcommand module defines ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``;
it is imported only when that subcommand runs, so `whileai-train --help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

__all__ = ["main"]

# subcommand -> module (one line each; the module owns its arguments and behaviour)
COMMANDS: dict[str, str] = {
    "delta": "whileai_train.commands.delta",
    "demo": "whileai_train.commands.demo",
    "eval": "whileai_train.commands.eval",
    "export": "whileai_train.commands.export",
    "gate": "whileai_train.commands.gate",
    "runs": "whileai_train.commands.runs",
    "serve": "whileai_train.commands.serve",
    "show": "whileai_train.commands.show",
    "sync": "whileai_train.commands.sync",
}


def _available() -> dict[str, str]:
    found = {}
    for name, module in COMMANDS.items():
        if importlib.util.find_spec(module) is not None:
            found[name] = module
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run one subcommand; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="whileai-train", description="Trustworthy numbers for TRL training.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {}
    for name, module_name in _available().items():
        module = importlib.import_module(module_name)
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=module.HELP, description=module.HELP))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return int(modules[args.command].run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
