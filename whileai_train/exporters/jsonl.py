"""Write rows as JSONL to a temporary name and rename it into place: a refused export leaves no file."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_jsonl", "dumps"]

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
dumps = _encoder.encode


@contextlib.contextmanager
def atomic_jsonl(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """Yield a text handle on a temp file beside `path`; rename on success, delete on any exception.

    The caller writes ``dumps(row) + "\\n"`` lines; nothing appears at `path` until the block ends cleanly.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", buffering=1 << 20) as handle:
            yield handle
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_lines(handle: IO[str], rows: list[dict[str, Any]]) -> None:
    """Write a batch of rows, one JSON object per line."""
    handle.write("".join(dumps(row) + "\n" for row in rows))
