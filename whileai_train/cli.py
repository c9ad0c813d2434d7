"""`whileai-train`: the command line. Each subcommand lives in its own module under `commands/`.

A subcommand module defines ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``;
it is imported only when that subcommand runs, so `whileai-train --help` stays fast. A reader that stops early
(``whileai-train gate ... | head``) ends the output quietly: the command finishes and keeps its exit code.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["main"]

# subcommand -> module (one line each; the module owns its arguments and behaviour)
COMMANDS: dict[str, str] = {
    "delta": "whileai_train.commands.delta",
    "demo": "whileai_train.commands.demo",
    "eval": "whileai_train.commands.eval",
    "export": "whileai_train.commands.export",
    "gate": "whileai_train.commands.gate",
    "mark": "whileai_train.commands.mark",
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


class _ClosedPipeQuiet:
    """stdout that drops what it cannot write once the reader has gone (a closed pipe), instead of a traceback:
    the rest of the output goes to the null device and the command runs on to its exit code."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _closed(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run one subcommand; returns the process exit code."""
    from whileai_train import __version__

    parser = argparse.ArgumentParser(prog="whileai-train", description="Trustworthy numbers for TRL training.")
    parser.add_argument("--version", action="version", version=f"whileai-train {__version__}")
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
    stdout = sys.stdout
    sys.stdout = _ClosedPipeQuiet(stdout)
    try:
        code = int(modules[args.command].run(args) or 0)
        sys.stdout.flush()
    finally:
        sys.stdout = stdout
    return code


if __name__ == "__main__":
    sys.exit(main())
