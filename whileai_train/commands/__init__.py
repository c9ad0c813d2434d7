"""The subcommands of `whileai-train`, one module each (cli.py lists them), and what several of them share."""

from __future__ import annotations

from pathlib import Path

__all__ = ["same_file"]


def same_file(a: str, b: str) -> bool:
    """True when the two paths name one file (the same path, a link to it, or a hard link): a command that
    writes `b` while reading `a` would destroy its input."""
    first, second = Path(a), Path(b)
    try:
        if first.exists() and second.exists():
            return first.samefile(second)
    except OSError:
        pass
    return first.resolve() == second.resolve()
