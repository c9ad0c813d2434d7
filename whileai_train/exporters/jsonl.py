"""Write rows as JSONL to a temporary name and rename it into place: a refused export leaves no file."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_jsonl", "dumps", "dumps_plain", "plain_float", "write_rows"]

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
dumps = _encoder.encode

_orjson: Any
try:  # orjson writes the same compact line, faster; only used where its output is known to be identical
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; stay correct without it
    _orjson = None

# Exact str/int/dict/list only (subclasses, dataclasses, datetimes go to `default`, which has none: orjson raises
# and the line is written by `json` instead, with json's own verdict).
_ORJSON_OPTIONS = (_orjson.OPT_PASSTHROUGH_SUBCLASS | _orjson.OPT_PASSTHROUGH_DATETIME
                   | _orjson.OPT_PASSTHROUGH_DATACLASS) if _orjson is not None else 0


def plain_float(value: float) -> bool:
    """True when orjson writes `value` byte for byte as Python's repr (and json) does: finite, no exponent.

    repr switches to an exponent below 1e-4 and from 1e16 on (orjson at other bounds: 1e-05 vs 0.00001),
    and orjson writes NaN/infinity as null where json refuses them; those rows go through json.
    """
    magnitude = abs(value)
    return magnitude == 0.0 or 1e-4 <= magnitude < 1e16


def dumps_plain(row: dict[str, Any]) -> str:
    """`dumps(row)`, faster, for a row the caller knows holds only str, int, bool, None, plain floats
    (`plain_float`), lists, tuples and str-keyed dicts (UUIDs and enums, which orjson writes and json refuses,
    must not reach it). Anything orjson refuses (big ints, int keys, subclasses, bad UTF-8) goes to `dumps`.
    """
    if _orjson is None:
        return dumps(row)
    try:
        return _orjson.dumps(row, option=_ORJSON_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return dumps(row)


def write_rows(handle: IO[bytes], pairs: Iterable[tuple[dict[str, Any], bool]]) -> None:
    """Write (row, plain) pairs to a binary handle as JSONL: `plain` rows as `dumps_plain` writes them, the
    others as `dumps` (the same bytes either way; a lone surrogate raises UnicodeEncodeError, as a UTF-8
    text file would). One buffered write per line: no batch of lines is held or copied."""
    write = handle.write
    if _orjson is None:
        for row, _plain in pairs:
            write((dumps(row) + "\n").encode("utf-8"))
        return
    fast, options = _orjson.dumps, _ORJSON_OPTIONS | _orjson.OPT_APPEND_NEWLINE
    for row, plain in pairs:
        if plain:
            try:
                write(fast(row, option=options))
                continue
            except TypeError:  # orjson.JSONEncodeError is a TypeError: json decides
                pass
        write((dumps(row) + "\n").encode("utf-8"))


def _umask() -> int:
    """The process's umask, read without changing it where the OS says it (Linux), else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_jsonl(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO[Any]]:
    """Yield a handle on a temp file beside `path`; rename on success, delete on any exception.

    The caller writes ``dumps(row) + "\\n"`` lines (UTF-8 bytes of them when `binary`); nothing appears at
    `path` until the block ends cleanly, and then with the mode a new file gets (0666 less the umask).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if hasattr(os, "fchmod"):  # the file gets the mode any new file gets here, not the temp file's 0600
            os.fchmod(fd, 0o666 & ~_umask())
        with (os.fdopen(fd, "wb", buffering=1 << 20) if binary
              else os.fdopen(fd, "w", encoding="utf-8", buffering=1 << 20)) as handle:
            yield handle
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_lines(handle: IO[str], rows: list[dict[str, Any]]) -> None:
    """Write a batch of rows, one JSON object per line."""
    handle.write("".join(dumps(row) + "\n" for row in rows))
