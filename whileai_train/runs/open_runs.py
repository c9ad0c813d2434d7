"""The runs open in this process, and what the process's exit does to them.

A run left open when the interpreter exits is finished "failed" with the error that ended it (sys.excepthook
records it; atexit finishes). On SIGTERM each open run is interrupted instead, left open for the attempt that
resumes (preemption.py). The excepthook and the SIGTERM handler are installed while a run is open and put back
when the last one closes (or is let go of unfinished), so a process with no open run is as it was found.
"""

from __future__ import annotations

import atexit
import sys
import weakref
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol

from whileai_train.runs.preemption import install_sigterm, release_sigterm

__all__ = ["OpenRun", "closed", "install_exit_hooks", "opened"]


class OpenRun(Protocol):
    """What the process's exit asks of an open run (runs/run.py's Run)."""

    def interrupt(self, reason: str) -> None: ...
    def finish_at_exit(self, error: str) -> None: ...


_OPEN_RUNS: weakref.WeakSet[OpenRun] = weakref.WeakSet()
_LET_GO: dict[int, weakref.finalize[Any, Any]] = {}  # id(run) -> what closes it if it is collected open
_atexit_registered = False
_ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]
_our_excepthook: _ExceptHook | None = None
_previous_excepthook: _ExceptHook | None = None
_last_error: str | None = None


def opened(run: OpenRun) -> None:
    """`run` is open: the process's exit finishes it (once the hooks are installed). A run its user lets go of
    unfinished (a monitor built and never trained) can no longer be finished at exit: it closes as it goes."""
    _OPEN_RUNS.add(run)
    gone = weakref.finalize(run, _let_go, id(run))
    gone.atexit = False
    _LET_GO[id(run)] = gone


def closed(run: OpenRun) -> None:
    """`run` is finished or interrupted; after the last open run, the hooks go back to what they were."""
    _OPEN_RUNS.discard(run)
    gone = _LET_GO.pop(id(run), None)
    if gone is not None:
        gone.detach()
    if not _OPEN_RUNS:
        _release_hooks()


def _let_go(key: int) -> None:
    _LET_GO.pop(key, None)
    if next(iter(_OPEN_RUNS), None) is None:  # the set may still count the run being collected: ask for a live one
        _release_hooks()


def install_exit_hooks() -> None:
    """atexit (once per process), sys.excepthook and the SIGTERM handler, while a run is open."""
    _install_excepthook()
    install_sigterm(_interrupt_open_runs)  # a preempted attempt leaves its run open, not "failed"


def _install_excepthook() -> None:
    global _atexit_registered, _our_excepthook, _previous_excepthook
    if not _atexit_registered:
        _atexit_registered = True
        atexit.register(_finish_open_runs)
    if _our_excepthook is not None:
        return
    previous = sys.excepthook

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        global _last_error
        _last_error = f"{exc_type.__name__}: {exc}"
        previous(exc_type, exc, tb)

    _our_excepthook, _previous_excepthook = hook, previous
    sys.excepthook = hook


def _release_hooks() -> None:
    """The last open run closed: SIGTERM and sys.excepthook go back to what they were (when nothing else
    replaced ours meanwhile: a hook installed over ours is the user's and stays; if it calls ours, ours only
    records the error). Ours is forgotten either way, so the next run installs its own over what is there then."""
    global _our_excepthook, _previous_excepthook
    release_sigterm()
    if _our_excepthook is not None and sys.excepthook is _our_excepthook and _previous_excepthook is not None:
        sys.excepthook = _previous_excepthook
    _our_excepthook = _previous_excepthook = None


def _interrupt_open_runs(reason: str) -> None:
    for open_run in list(_OPEN_RUNS):
        open_run.interrupt(reason)


def _finish_open_runs() -> None:
    for open_run in list(_OPEN_RUNS):
        open_run.finish_at_exit(_last_error or "the process exited before the run was finished")
