"""A progress bar for long library calls: tqdm's auto bar where a person watches (a terminal or a notebook), none
elsewhere (CI logs, pipes) and none with `progress=False`. tqdm loads only when a bar is shown."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["ProgressBar", "progress_bar"]


class ProgressBar:
    """What a caller uses of a bar: update(n) and close(); this one shows nothing."""

    def update(self, n: int = 1) -> None:
        """Count `n` more done (shows nothing)."""

    def close(self) -> None:
        """End the bar (nothing to end)."""


def _watched() -> bool:
    """A terminal on stderr, or a notebook kernel (IPython with a kernel attached)."""
    stream = sys.stderr
    if stream is not None and hasattr(stream, "isatty") and stream.isatty():
        return True
    shell = sys.modules.get("IPython")
    get_ipython = getattr(shell, "get_ipython", None)
    return bool(get_ipython is not None and getattr(get_ipython(), "kernel", None) is not None)


def progress_bar(total: int, description: str, enabled: bool | None = None) -> Any:
    """A bar over `total` items: shown when `enabled` is True, or when it is None and a person watches."""
    if not (enabled if enabled is not None else _watched()):
        return ProgressBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description)
