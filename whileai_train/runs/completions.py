"""Holdout completions kept on a run: what the model wrote at each holdout eval, beside its scores.

    a row: {"step", "ask", "prompt", "completion", "proxy", "gold", "tools": [{"name", "failed"}],
            "features": [names], "cut": true when the prompt or the completion was cut to the cap}
    get_completions(run_id, step=None) -> {"completions": [rows], "steps": [...], "kept", "cut", "dropped",
                                           "max_rows", "max_chars"}

One eval's rows are a batch, and a batch travels as a note does: `Run.note(completions_note(batch))` puts it in
the sender's queue, the spool keeps it until it is delivered, and `whileai-train sync` sends what is owed. The
sink that takes it sees the marker and stores it apart, never as a note: the local store in the tables below
(LocalSink), the platform through POST /runs/{id}/completions (HttpSink). The note's number is the batch's
number, so a re-sent batch is stored once.

Two caps, each defined once (runs/defaults.py): MAX_COMPLETION_CHARS of each prompt and completion, and
MAX_COMPLETIONS_PER_RUN rows per run. The monitor applies both before sending (a 1 MB completion never reaches
the spool whole) and the store applies them again on what it is given (the HTTP API takes rows from anyone).
What a cap removed is counted per batch (`cut`: completions or prompts cut; `dropped`: rows not stored) and
the run's totals are read back beside the rows.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from whileai_train.errors import ConfigError, RunError
from whileai_train.runs.defaults import MAX_COMPLETION_CHARS, MAX_COMPLETIONS_PER_RUN

if TYPE_CHECKING:
    from whileai_train.runs.store import LocalStore

__all__ = ["COMPLETIONS_MARKER", "batch_of_note", "clean_row", "completion_totals",
           "completions_note", "cut_text", "finite_score", "get_completions", "read_completions", "store_batch"]

# The first line of a note that carries a batch of completions (an HTML comment: a reader that shows notes as
# markdown shows nothing of it).
COMPLETIONS_MARKER = "<!-- whileai:holdout-completions v1 -->"

_TEXT_FIELDS = ("prompt", "completion")


def cut_text(text: Any, limit: int = MAX_COMPLETION_CHARS) -> tuple[str, bool]:
    """`text` as a string of at most `limit` characters, and whether it was cut."""
    value = text if isinstance(text, str) else str(text)
    return (value, False) if len(value) <= limit else (value[:limit], True)


def finite_score(value: Any) -> float | None:
    """A score as stored: a finite number, else None (JSON has no NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def clean_row(row: Mapping[str, Any], step: int | None, limit: int = MAX_COMPLETION_CHARS) -> dict[str, Any]:
    """A row as it is stored: the known fields only, texts cut to `limit` characters ("cut" says so)."""
    out: dict[str, Any] = {"step": step, "ask": cut_text(row.get("ask") or "", limit)[0]}
    cut = bool(row.get("cut"))
    for name in _TEXT_FIELDS:
        out[name], was_cut = cut_text(row.get(name) or "", limit)
        cut = cut or was_cut
    out["proxy"], out["gold"] = finite_score(row.get("proxy")), finite_score(row.get("gold"))
    tools = row.get("tools")
    tools = tools if isinstance(tools, list) else []
    out["tools"] = [{"name": cut_text(t.get("name") or "?", 200)[0], "failed": bool(t.get("failed"))}
                    for t in tools if isinstance(t, Mapping)]
    features = row.get("features")
    features = features if isinstance(features, list) else []
    out["features"] = [cut_text(f, 200)[0] for f in features]
    out["cut"] = cut
    return out


def completions_note(step: int, rows: Sequence[Mapping[str, Any]], *, cut: int = 0, dropped: int = 0) -> str:
    """One eval's rows as the note that carries them (runs/run.py's notes path; the sinks store it apart)."""
    body = {"step": step, "rows": list(rows), "cut": cut, "dropped": dropped}
    return COMPLETIONS_MARKER + "\n" + json.dumps(body, separators=(",", ":"), allow_nan=False)


def batch_of_note(markdown: str) -> dict[str, Any] | None:
    """The batch a note carries ({"step", "rows", "cut", "dropped"}), or None for a note of words."""
    if not markdown.startswith(COMPLETIONS_MARKER):
        return None
    try:
        body = json.loads(markdown[len(COMPLETIONS_MARKER):])
    except ValueError:
        return None
    return body if isinstance(body, dict) and isinstance(body.get("rows"), list) else None


def _count(value: Any) -> int:
    return max(0, int(value)) if isinstance(value, int) and not isinstance(value, bool) else 0


def store_batch(store: LocalStore, run_id: str, batch: int, body: Mapping[str, Any], *,
                max_rows: int = MAX_COMPLETIONS_PER_RUN, limit: int = MAX_COMPLETION_CHARS) -> int:
    """Store one eval's rows under the batch number `batch`; returns the rows stored (0 for a re-send).

    Rows past the run's `max_rows` are counted as dropped, texts past `limit` cut and counted. Raises RunError
    when there is no such run and RunFinishedError when it is finished (a finished run is final)."""
    step = body.get("step")
    step = step if isinstance(step, int) and not isinstance(step, bool) else None
    rows = [r for r in body.get("rows") or [] if isinstance(r, Mapping)]
    cleaned = [clean_row(r, step, limit) for r in rows]
    newly_cut = sum(1 for r, c in zip(rows, cleaned, strict=True) if c["cut"] and not r.get("cut"))
    with store.writing_to_running(run_id, "adding holdout completions") as conn:
        if conn.execute("SELECT 1 FROM completion_batches WHERE run_id = ? AND batch = ?",
                        (run_id, int(batch))).fetchone() is not None:
            return 0  # a re-send: stored once
        held = conn.execute("SELECT COUNT(*) FROM completions WHERE run_id = ?", (run_id,)).fetchone()[0]
        kept = cleaned[: max(0, max_rows - held)]
        dropped = _count(body.get("dropped")) + len(cleaned) - len(kept)
        conn.execute("INSERT INTO completion_batches (run_id, batch, step, ts, rows, cut, dropped) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (run_id, int(batch), step, time.time(), len(kept), _count(body.get("cut")) + newly_cut, dropped))
        conn.executemany("INSERT INTO completions (run_id, batch, row, step, data) VALUES (?, ?, ?, ?, ?)",
                         [(run_id, int(batch), i, step, json.dumps(r, separators=(",", ":"), allow_nan=False))
                          for i, r in enumerate(kept)])
        return len(kept)


def completion_totals(store: LocalStore, run_id: str) -> dict[str, int]:
    """The run's completions: kept (stored), cut (texts cut to the character cap), dropped (past the row cap)."""
    row = store.reading().execute(
        "SELECT COALESCE(SUM(rows), 0), COALESCE(SUM(cut), 0), COALESCE(SUM(dropped), 0) FROM completion_batches "
        "WHERE run_id = ?", (run_id,)).fetchone()
    return {"kept": int(row[0]), "cut": int(row[1]), "dropped": int(row[2])}


def read_completions(store: LocalStore, run_id: str, step: int | None = None) -> dict[str, Any]:
    """The run's stored completions (those of one eval step when `step` is given), in eval and row order, with
    the eval steps that have any and the run's totals."""
    conn = store.reading()
    where, args = ("run_id = ? AND step = ?", (run_id, int(step))) if step is not None else ("run_id = ?", (run_id,))
    rows = [json.loads(data) for (data,) in conn.execute(
        f"SELECT data FROM completions WHERE {where} ORDER BY batch, row", args)]
    steps = [int(s) for (s,) in conn.execute(
        "SELECT DISTINCT step FROM completions WHERE run_id = ? AND step IS NOT NULL ORDER BY step", (run_id,))]
    return {"run_id": run_id, "completions": rows, "steps": steps, **completion_totals(store, run_id),
            "max_rows": MAX_COMPLETIONS_PER_RUN, "max_chars": MAX_COMPLETION_CHARS}


def get_completions(run_id: str, step: int | None = None, *, api_key: str | None = None,
                    url: str | None = None) -> dict[str, Any]:
    """A run's holdout completions (the reward monitor keeps them at each eval), from the local store, else the
    platform (GET /runs/{id}/completions). `step`: only that eval's. The answer: {"completions": [rows],
    "steps", "kept", "cut", "dropped", "max_rows", "max_chars"}; each row {"step", "ask", "prompt",
    "completion", "proxy", "gold", "tools", "features", "cut"}."""
    from whileai_train.runs.records import local_store_with, platform_get

    if not isinstance(run_id, str) or not run_id:
        raise ConfigError(f"run_id={run_id!r}: pass the run's id (run.id, or `whileai-train runs`)")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        raise ConfigError(f"step={step!r}: an eval step (an int), or None for every eval")
    store = local_store_with(run_id)
    if store is not None:
        return read_completions(store, run_id, step)
    answer = platform_get(f"/runs/{run_id}/completions", {} if step is None else {"step": step},
                          api_key=api_key, url=url, missing=run_id)
    if not isinstance(answer.get("completions"), list):
        raise RunError(f"GET /runs/{run_id}/completions answered no completions list ({str(answer)[:80]!r})")
    return answer
