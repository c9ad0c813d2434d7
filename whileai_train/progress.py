"""Progress bars for long calls: tqdm's auto bar (a widget in a notebook, text on stderr in a terminal), shown
only where someone watches, and never with `progress=False`.

A public call over many rows opens a scope (the `progress_call` decorator reads its `progress=` argument);
the per-row passes inside it wrap their loop, and each pass shows its own bar (named "<call>: <pass>", gone
when the pass is done). Outside a scope, or with the bar off, a wrapped loop is the loop itself.

    @progress_call("hack_scan")
    def hack_scan(rows, ..., progress=None):
        ...
            for row in rows_progress(rows, "features"):         # deep inside, no argument threaded through
                ...

`progress_bar(iterable, desc=..., total=..., progress=...)` is the same bar for a loop that is a call of its
own: no scope needed; `progress_counter(total, desc=..., progress=...)` one advanced by hand (`.update(n)`,
`.close()`) for work done in chunks of items (evaluate's batches of prompts), shown whatever the size. `progress` is None (auto: on when stderr is a terminal or the
call runs in a Jupyter kernel, and the work is at least MIN_ITEMS), True (always on) or False (off).
Importing this module imports nothing heavy; tqdm is imported when a bar is shown.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sized
from contextvars import ContextVar
from typing import ParamSpec, TypeVar, cast

__all__ = ["MIN_ITEMS", "ProgressCounter", "progress_bar", "progress_call", "progress_counter", "progress_scope",
           "rows_progress", "someone_watches"]

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")

# Below this many rows a pass takes well under a second on this library's per-row passes (the slowest, trace
# flags in hack_scan, reads ~7k rows/s on one core: bench/gates.py), so auto mode shows no bar for it.
MIN_ITEMS = 10_000

# the open scope: (the call's name, its progress= argument), or None outside any scope
_SCOPE: ContextVar[tuple[str, bool | None] | None] = ContextVar("whileai_progress_scope", default=None)


def someone_watches() -> bool:
    """True in a Jupyter kernel, or when stderr is a terminal."""
    shell = sys.modules.get("IPython")
    get_ipython = getattr(shell, "get_ipython", None)
    if get_ipython is not None:
        ip = get_ipython()
        if ip is not None and "IPKernelApp" in getattr(ip, "config", {}):
            return True
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (ValueError, OSError):  # a closed or odd stream
        return False


def _on(progress: bool | None, size: int | None) -> bool:
    if progress is not None:
        return bool(progress)
    return (size is None or size >= MIN_ITEMS) and someone_watches()


@contextlib.contextmanager
def progress_scope(call: str, progress: bool | None) -> Iterator[None]:
    """The passes inside this block show bars named after `call`, per `progress` (see the module)."""
    token = _SCOPE.set((call, progress))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def progress_call(call: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the decorated function inside `progress_scope(call, its progress= keyword argument)`."""
    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def scoped(*args: P.args, **kwargs: P.kwargs) -> R:
            with progress_scope(call, cast("bool | None", kwargs.get("progress"))):
                return fn(*args, **kwargs)

        return scoped

    return decorate


def rows_progress(rows: Iterable[T], stage: str, total: int | None = None) -> Iterable[T]:
    """`rows`, with a bar for this pass when the enclosing scope's bar is on; else `rows` untouched."""
    scope = _SCOPE.get()
    if scope is None or scope[1] is False:
        return rows
    size = total if total is not None else (len(rows) if isinstance(rows, Sized) else None)
    return _bar(rows, f"{scope[0]}: {stage}", size, "rows") if _on(scope[1], size) else rows


def progress_bar(items: Iterable[T], *, desc: str, total: int | None = None, progress: bool | None = None,
                 unit: str = "it") -> Iterable[T]:
    """`items` with a bar named `desc` per `progress` (None: auto); for a loop that is a call of its own."""
    size = total if total is not None else (len(items) if isinstance(items, Sized) else None)
    return _bar(items, desc, size, unit) if _on(progress, size) else items


class ProgressCounter:
    """A bar advanced by hand; this one shows nothing (the bar is off)."""

    def update(self, n: int = 1) -> None:
        """Count `n` more items done."""

    def close(self) -> None:
        """End the bar."""


def progress_counter(total: int, *, desc: str, progress: bool | None = None, unit: str = "it") -> ProgressCounter:
    """A bar over `total` items advanced with `.update(n)`, per `progress` (None: on where someone watches)."""
    if not _on(progress, None):
        return ProgressCounter()
    with warnings.catch_warnings():  # as in _bar
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm
    return cast(ProgressCounter, tqdm(total=total, desc=desc, unit=f" {unit}", dynamic_ncols=True))


def _bar(items: Iterable[T], desc: str, total: int | None, unit: str) -> Iterable[T]:
    with warnings.catch_warnings():  # tqdm.auto warns at import in a notebook without ipywidgets (then: text)
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm
    return cast("Iterable[T]", tqdm(items, desc=desc, total=total, leave=False, unit=f" {unit}",
                                    dynamic_ncols=True))
