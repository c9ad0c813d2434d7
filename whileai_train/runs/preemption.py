"""A preempted attempt is not a failed run: on SIGTERM the open runs are left open for the attempt that resumes.

Kubernetes, Slurm, SkyPilot and cloud spot reclaims stop a process with SIGTERM and kill it a grace period
later (30 s by default in Kubernetes). Python's default for SIGTERM ends the process on the spot, with no
`finally` and no exit hook. While a run is open this module's handler first interrupts each open run
(`Run.interrupt`: flush with a bounded wait, a note, the run left "running" at its sink), then lets the signal
do what it did before: the Python handler it found runs, or the process ends by SIGTERM as it would have.

The handler is installed from the main thread when a run opens, only over the default action or a Python
handler (a process that ignores SIGTERM keeps ignoring it), and the one it replaced is put back when the
last open run ends, so a process with no open run is as it was found.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["handling_sigterm", "install_sigterm", "release_sigterm"]

_previous: Any = None  # the handler found in place while ours is installed
_interrupt: Callable[[str], None] | None = None


def handling_sigterm() -> bool:
    """True while this module's handler is the process's SIGTERM handler."""
    return _interrupt is not None and signal.getsignal(signal.SIGTERM) is _on_sigterm


def install_sigterm(interrupt: Callable[[str], None]) -> None:
    """Call `interrupt("SIGTERM")` before the process's own SIGTERM action. No-op off the main thread (only it
    may set handlers), when already installed, or when SIGTERM is ignored."""
    global _previous, _interrupt
    if threading.current_thread() is not threading.main_thread() or handling_sigterm():
        return
    current = signal.getsignal(signal.SIGTERM)
    if current is signal.SIG_IGN or current is None:  # ignored, or set outside Python: not ours to change
        return
    _previous, _interrupt = current, interrupt
    signal.signal(signal.SIGTERM, _on_sigterm)


def release_sigterm() -> None:
    """Put back the handler found at install (main thread only; elsewhere it stays until the next chance)."""
    global _previous, _interrupt
    if threading.current_thread() is not threading.main_thread() or not handling_sigterm():
        return
    signal.signal(signal.SIGTERM, _previous)
    _previous, _interrupt = None, None


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    global _previous, _interrupt
    interrupt, previous = _interrupt, _previous
    signal.signal(signal.SIGTERM, previous)  # a second SIGTERM while the runs flush acts as before at once
    _previous, _interrupt = None, None
    if interrupt is not None:
        interrupt("SIGTERM")
    if callable(previous):
        previous(signum, frame)
    else:  # the default action: end the process by the same signal, as without this handler
        os.kill(os.getpid(), signal.SIGTERM)
