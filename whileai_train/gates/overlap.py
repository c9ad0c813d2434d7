"""Run a gate's numpy-heavy part on a second core while the caller's thread walks the rows.

A gate over 100k rows is half per-row Python (which holds the GIL) and half numpy (which releases it around its
loops: resampling, gathers, sorts). A part that needs nothing from the rest of the gate (publish_gate's pass_at
bootstrap and near-duplicate search) can run in a thread: its numpy time overlaps the caller's Python time on
another core, and its own Python time takes turns with the caller's under the GIL. The
results are the same objects the plain call returns (each part owns its seeded generator), so the reports are
identical; only the wall time changes. Small inputs run in the caller's thread: a thread costs more than it saves.
Inside the hack scan (the auto tier beside the row loop, the two batches of a noise floor) a thread measured no
gain at 100k rows, so the scan stays in one thread.

While a part runs, the interpreter's switch interval is 0.5 ms instead of 5 ms (restored when the last part
ends): a part coming back from a numpy call waits for the caller's thread to yield the GIL, and at 5 ms a
part made of many numpy calls spends most of its time waiting (measured: the overlap saved nothing at 5 ms).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar

__all__ = ["OVERLAP_MIN_ROWS", "Job", "start"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

OVERLAP_MIN_ROWS = 20_000  # below this a gate runs every part in the caller's thread
_SWITCH_INTERVAL_S = 0.0005  # while a part runs (sys.setswitchinterval; the default is 0.005)

_live_lock = threading.Lock()
_live_parts = 0
_saved_interval = 0.005


def _part_started() -> None:
    global _live_parts, _saved_interval
    with _live_lock:
        if _live_parts == 0:
            _saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved_interval, _SWITCH_INTERVAL_S))
        _live_parts += 1


def _part_ended() -> None:
    global _live_parts
    with _live_lock:
        _live_parts -= 1
        if _live_parts == 0:
            sys.setswitchinterval(_saved_interval)


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

    def _run_in_thread(self, fn: Callable[[], _T]) -> None:
        try:
            self._run(fn)
        finally:
            _part_ended()

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
        job._thread = threading.Thread(target=job._run_in_thread, args=(lambda: fn(*args, **kwargs),), daemon=True,
                                       name=f"whileai-{getattr(fn, '__name__', 'part')}")
        _part_started()
        try:
            job._thread.start()
        except BaseException:
            _part_ended()
            raise
    else:
        job._run(lambda: fn(*args, **kwargs))
    return job
