"""Run a gate's numpy-heavy part on a second core while the caller's thread walks the rows.

A gate over 100k rows is half per-row Python (which holds the GIL) and half numpy (which releases it around its
loops: resampling, gathers, sorts). A part that needs nothing from the rest of the gate (publish_gate's pass_at
bootstrap and near-duplicate search) can run in a thread: its numpy time overlaps the caller's Python time on
another core, and its own Python time takes turns with the caller's under the GIL. The
results are the same objects the plain call returns (each part owns its seeded generator), so the reports are
identical; only the wall time changes. Small inputs run in the caller's thread: a thread costs more than it saves.
The hack scan stays in one thread (its parts gained nothing from one in bench/gates.py).

Nothing process-wide changes while a part runs: the interpreter's switch interval is left as the user set it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar

__all__ = ["OVERLAP_MIN_ROWS", "Job", "start"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

OVERLAP_MIN_ROWS = 20_000  # below this a gate runs every part in the caller's thread


class Job(Generic[_T]):
    """One part of a gate, running in a thread (or already done, when run in place)."""

    def __init__(self) -> None:
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def _run(self, fn: Callable[[], _T]) -> None:
        try:
            self._value = fn()
        except BaseException as error:  # noqa: BLE001 (handed to result(), raised in the caller's thread)
            self._error = error

    def wait(self) -> None:
        """Block until the part has finished (its exception, if any, is kept for result())."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def result(self) -> _T:
        """The part's return value; its exception is raised here, in the caller's thread."""
        self.wait()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._value  # type: ignore[return-value]


def start(background: bool, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> Job[_T]:
    """Start `fn(*args, **kwargs)` in a daemon thread when `background`, else run it now; `.result()` joins."""
    job: Job[_T] = Job()
    if background:
        job._thread = threading.Thread(target=job._run, args=(lambda: fn(*args, **kwargs),), daemon=True,
                                       name=f"whileai-{getattr(fn, '__name__', 'part')}")
        job._thread.start()
    else:
        job._run(lambda: fn(*args, **kwargs))
    return job
