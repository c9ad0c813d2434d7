"""The subcommands of `whileai-train`, one module each (cli.py lists them), and what several of them share.

    delta.py    whileai-train delta: before/after eval files in, the delta report (noise, guards) out
    demo.py     whileai-train demo: GRPO with a planted reward hack, caught and stopped by the monitor
    eval.py     whileai-train eval: a model and tasks in, graded rows out (wai.evaluate)
    export.py   whileai-train export: rows to SFT, preference or GRPO prompt files TRL trains
    gate.py     whileai-train gate: the data gates as one CI step (exit code, --json)
    mark.py     whileai-train mark: stamp the behaviour markers on rows
    runs.py     whileai-train runs: the runs in the local store, newest first
    serve.py    whileai-train serve: the dashboard and the runs HTTP API over the local store
    show.py     whileai-train show: one local run (status, summary, cost, notes, last points)
    sync.py     whileai-train sync: send what spooled platform runs still owe
"""

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
