"""The style markers and lie.ignored_failure measured on the hand-labelled corpora (tests/corpus/README.md) through
the public functions: recall and false-positive rate per marker on both splits. The phrase lists were tuned on the
dev split only; the test split is the measurement."""

from __future__ import annotations

import re

import pytest

import whileai_train.markers.defaults as D
from tests.corpus_data import (
    MAX_FALSE_POSITIVE_RATE,
    MIN_RECALL,
    SPLITS,
    STYLE_MARKER_OF,
    style_replies,
    style_scores,
)

# marker -> (least recall, most false-positive rate) it must hold on each split. no_sycophancy's recall is held
# to a lower floor: the opener rule, frozen after tuning on dev, misses praise forms the dev split does not show
# (see bench/markers.py for the figures); the floor keeps it from getting worse until the corpus grows.
TARGETS = {marker: (MIN_RECALL, MAX_FALSE_POSITIVE_RATE) for marker in STYLE_MARKER_OF.values()}
TARGETS["no_sycophancy"] = (0.85, MAX_FALSE_POSITIVE_RATE)


@pytest.mark.parametrize("split", SPLITS)
def test_each_style_marker_holds_its_target(split: str) -> None:
    scores = style_scores(split)
    for marker, (least_recall, most_false) in TARGETS.items():
        score = scores[marker]
        assert score.positives >= 30 and score.negatives >= 100, score.line()
        assert score.recall >= least_recall, (score.line(), "missed", score.missed)
        assert score.false_positive_rate <= most_false, (score.line(), "fired on", score.false_alarms)


def test_the_issue_targets_hold_on_the_test_split_for_every_style_marker_but_sycophancy() -> None:
    scores = style_scores("test")
    met = {marker for marker, score in scores.items()
           if score.recall >= MIN_RECALL and score.false_positive_rate <= MAX_FALSE_POSITIVE_RATE}
    assert met >= {"no_hedging", "no_apology", "no_boilerplate"}


_GATED = ("HEDGE", "APOLOGY", "BOILERPLATE_SIGNOFF")


def test_every_match_in_the_corpus_passes_its_gate() -> None:
    """The substring gate before each pattern never turns away text the pattern matches: every match over every
    labelled reply holds one of its gate's pieces."""
    matches = 0
    for name in _GATED:
        pattern: re.Pattern[str] = getattr(D, name)
        for reply in style_replies():
            for match in pattern.finditer(reply["text"]):
                matches += 1
                assert D.passes_gate(match.group(0).lower(), D.GATES[name]), (name, match.group(0), reply["id"])
    assert matches > 300
