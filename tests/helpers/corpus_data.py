"""The labelled corpora under tests/corpus/ (see its README), read once, and each marker's recall and
false-positive rate on them through the public functions (wai.style_markers, wai.trace_markers).

A style label maps to the marker that must read 0.0 on it; lie.ignored_failure is read off reported_failure and
the row's trace_flags. Used by tests/markers/test_markers_corpus.py and bench/markers.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
STYLE_FILE = CORPUS / "style_replies.jsonl"
HOLDOUT_FILE = CORPUS / "style_replies_holdout.jsonl"
ROLLOUT_FILE = CORPUS / "ignored_failure.jsonl"
SPLITS = ("dev", "test")
# The style replies' splits: dev (tuned on), test (measured, then its misses read), holdout (written later by another
# hand, measured once after the phrase lists were frozen; see tests/corpus/README.md).
STYLE_SPLITS = ("dev", "test", "holdout")

# corpus label -> the style marker that must read 0.0 on a reply carrying it
STYLE_MARKER_OF = {"hedged": "no_hedging", "apology": "no_apology", "boilerplate": "no_boilerplate",
                   "sycophantic": "no_sycophancy"}
IGNORED_FAILURE = "lie.ignored_failure"

# What the markers must reach on the test split (issue's targets): recall at least, false positives at most.
MIN_RECALL = 0.9
MAX_FALSE_POSITIVE_RATE = 0.05


def _records(path: Path) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@cache
def style_replies() -> tuple[dict[str, Any], ...]:
    """Every labelled reply of the dev and test splits: {id, text, labels, register, split, near_miss, note}."""
    return _records(STYLE_FILE)


@cache
def held_out_replies() -> tuple[dict[str, Any], ...]:
    """Every labelled reply of the holdout split, in the same fields."""
    return _records(HOLDOUT_FILE)


@cache
def rollouts() -> tuple[dict[str, Any], ...]:
    """Every labelled rollout: {id, row, label_fires, failure_kind, reply_kind, shape, last_call, split, note}."""
    return _records(ROLLOUT_FILE)


@dataclass
class Score:
    """One marker on one split: the ids it missed (labelled, not fired) and wrongly fired on (fired, not labelled)."""

    marker: str
    split: str
    positives: int = 0
    negatives: int = 0
    missed: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return (self.positives - len(self.missed)) / self.positives if self.positives else 1.0

    @property
    def false_positive_rate(self) -> float:
        return len(self.false_alarms) / self.negatives if self.negatives else 0.0

    def line(self) -> str:
        return (f"{self.marker:<20} {self.split:<4} recall {self.recall:.3f} "
                f"({self.positives - len(self.missed)}/{self.positives})  false positives "
                f"{self.false_positive_rate:.3f} ({len(self.false_alarms)}/{self.negatives})")


def _score(marker: str, split: str, truth: Sequence[bool], fired: Sequence[bool], ids: Sequence[str]) -> Score:
    score = Score(marker, split)
    for identifier, labelled, hit in zip(ids, truth, fired, strict=True):
        if labelled:
            score.positives += 1
            if not hit:
                score.missed.append(identifier)
        else:
            score.negatives += 1
            if hit:
                score.false_alarms.append(identifier)
    return score


def style_scores(split: str, style_markers: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
                 ) -> dict[str, Score]:
    """marker -> its Score on the split's replies, each reply stamped as a row whose final_text is the reply."""
    if style_markers is None:
        import whileai_train as wai

        style_markers = wai.style_markers
    replies = held_out_replies() if split == "holdout" else style_replies()
    held = [reply for reply in replies if reply["split"] == split]
    stamped = style_markers([{"final_text": reply["text"], "steps": []} for reply in held])
    ids = [reply["id"] for reply in held]
    scores = {}
    for label, marker in STYLE_MARKER_OF.items():
        truth = [label in reply["labels"] for reply in held]
        fired = [row["markers"][marker] < 1.0 for row in stamped]
        scores[marker] = _score(marker, split, truth, fired, ids)
    return scores


def authored_reply(record: dict[str, Any]) -> str:
    """The rollout's final reply as its author wrote it: final_text, or the last message's text (a string, or its
    text parts or blocks in order)."""
    row = record["row"]
    if "final_text" in row:
        return str(row["final_text"])
    content = row["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def read_as_written(record: dict[str, Any]) -> bool:
    """Whether today's trajectory reader reads the rollout as its author meant it: the last call's result is read as
    failed exactly when the label says it failed, and the words said after it are the reply as written. A rollout it
    does not read so (Anthropic blocks, text parts, a failure spelled in a way the failure rule does not know yet)
    waits on the reader, not on the claim rule."""
    from whileai_train.markers.trajectory import RESULT, SAID, read_events

    last = None
    said: list[str] = []
    for kind, payload in read_events(record["row"]):
        if kind == RESULT:
            last, said = payload, []
        elif kind == SAID:
            said.append(payload)
    if last is None or last.failed != (record["last_call"] == "failed"):
        return False
    return " ".join(text for text in said if text).strip() == authored_reply(record).strip()


def with_plain_failure(record: dict[str, Any]) -> dict[str, Any]:
    """The rollout as a flat row the reader reads whatever its shape: one call whose result is a plain failure
    ({"status": "error"}) when the label says the last call failed, else a plain success, then the reply as written.
    What the claim rule alone makes of the reply."""
    failed = record["last_call"] == "failed"
    return {"prompt": "do it", "steps": [{"tool": "act", "arguments": {},
                                          "result": {"status": "error" if failed else "ok"}}],
            "final_text": authored_reply(record)}


def ignored_failure_score(split: str, keep: Callable[[dict[str, Any]], bool] | None = None,
                          row_of: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Score:
    """lie.ignored_failure's Score on the split's rollouts (those `keep` accepts, all by default; each as `row_of`
    makes it, the row as written by default), read through wai.trace_markers: fired when the flag is on the row,
    and then reported_failure is 0.0."""
    import whileai_train as wai

    held = [record for record in rollouts() if record["split"] == split and (keep is None or keep(record))]
    stamped = wai.trace_markers([record["row"] if row_of is None else row_of(record) for record in held])
    fired = []
    for row in stamped:
        flagged = any(flag["flag"] == IGNORED_FAILURE for flag in row["trace_flags"])
        assert flagged == (row["markers"]["reported_failure"] == 0.0)
        fired.append(flagged)
    return _score(IGNORED_FAILURE, split, [record["label_fires"] for record in held], fired,
                  [record["id"] for record in held])
