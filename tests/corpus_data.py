"""The labelled corpora under tests/corpus/ (see its README), read once, and each marker's recall and
false-positive rate on them through the public functions (wai.style_markers, wai.trace_markers).

A style label maps to the marker that must read 0.0 on it; lie.ignored_failure is read off reported_failure and
the row's trace_flags. Used by tests/test_markers_corpus.py and bench/markers.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"
STYLE_FILE = CORPUS / "style_replies.jsonl"
ROLLOUT_FILE = CORPUS / "ignored_failure.jsonl"
SPLITS = ("dev", "test")

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
    """Every labelled reply: {id, text, labels, register, split, near_miss, note}."""
    return _records(STYLE_FILE)


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
    held = [reply for reply in style_replies() if reply["split"] == split]
    stamped = style_markers([{"final_text": reply["text"], "steps": []} for reply in held])
    ids = [reply["id"] for reply in held]
    scores = {}
    for label, marker in STYLE_MARKER_OF.items():
        truth = [label in reply["labels"] for reply in held]
        fired = [row["markers"][marker] < 1.0 for row in stamped]
        scores[marker] = _score(marker, split, truth, fired, ids)
    return scores


def ignored_failure_score(split: str, keep: Callable[[dict[str, Any]], bool] | None = None) -> Score:
    """lie.ignored_failure's Score on the split's rollouts (those `keep` accepts, all by default), read through
    wai.trace_markers: fired when the flag is on the row and reported_failure is 0.0."""
    import whileai_train as wai

    held = [record for record in rollouts() if record["split"] == split and (keep is None or keep(record))]
    stamped = wai.trace_markers([record["row"] for record in held])
    fired = []
    for row in stamped:
        flagged = any(flag["flag"] == IGNORED_FAILURE for flag in row["trace_flags"])
        assert flagged == (row["markers"]["reported_failure"] == 0.0)
        fired.append(flagged)
    return _score(IGNORED_FAILURE, split, [record["label_fires"] for record in held], fired,
                  [record["id"] for record in held])
