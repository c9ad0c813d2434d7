"""Where a reply says the phrases of the style lists (defaults: HEDGE_FORMS, APOLOGY_FORMS,
BOILERPLATE_SIGNOFF_FORMS, SYCOPHANTIC_FORMS), found in one reading of the reply.

A form is tried only where one of its start words stands as a word, so the reply is cut into words once (bytes
translated in C, never a regex scanned end to end per phrase) and each list's forms are tried at the few places
they can start; where several forms of a list start at one place, the first listed counts. Forms with no start words
are tried at the reply's start. :func:`form_spans` is the same rule read the slow way (every form at every word
start); tests pin the two equal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from whileai_train.markers.defaults import (
    APOLOGY_FORMS,
    BOILERPLATE_SIGNOFF_FORMS,
    HEDGE_FORMS,
    OPENER_CHARS,
    OPENER_END,
    OPENER_LEAD,
    SYCOPHANTIC_FORMS,
    Form,
)

__all__ = ["LISTS", "Phrases", "form_spans", "opener_lead", "places", "read_phrases"]

# The lists read, in the order Phrases holds them.
LISTS: tuple[tuple[Form, ...], ...] = (HEDGE_FORMS, APOLOGY_FORMS, BOILERPLATE_SIGNOFF_FORMS, SYCOPHANTIC_FORMS)
_HEDGES, _APOLOGIES, _SIGNOFFS, _PRAISES = range(len(LISTS))

# Every byte to a space but a-z and the tilde: a word is a run of those (so "~" is a word in "~5", not in "HEAD~1"),
# where it stands (one byte per character once non-ASCII characters are replaced: a place in the bytes is the same
# place in the text).
_WORD_BYTES = bytes(b if (97 <= b <= 122 or b == 126) else 32 for b in range(256))


class Phrases(NamedTuple):
    """Where a lower-cased reply says each list's phrases: (start, end) of every match."""

    hedges: list[tuple[int, int]]
    apologies: list[tuple[int, int]]
    signoffs: list[tuple[int, int]]
    praise: list[tuple[int, int]]  # within the opener only (see read_phrases)


class _Start(NamedTuple):
    """What is tried where one start word stands: the word with a space each side (as it stands in the padded
    words), the matchers of the lists read anywhere ((list number, match), each the list's forms starting with the
    word, in the list's order), and the praise list's matcher (read in the opener only), if any."""

    key: bytes
    anywhere: tuple[tuple[int, Callable[..., re.Match[str] | None]], ...]
    praise: Callable[..., re.Match[str] | None] | None


def _index() -> dict[bytes, _Start]:
    sources: dict[str, dict[int, list[str]]] = {}
    for number, forms in enumerate(LISTS):
        for form in forms:
            for word in form.starts:
                sources.setdefault(word, {}).setdefault(number, []).append(form.pattern.pattern)
    index = {}
    for word, by_list in sources.items():
        matchers = {number: re.compile("|".join(parts)).match for number, parts in by_list.items()}
        praise = matchers.pop(_PRAISES, None)
        index[word.encode("ascii")] = _Start(f" {word} ".encode("ascii"), tuple(matchers.items()), praise)
    return index


_INDEX = _index()
_START_WORDS = frozenset(_INDEX)
_ANCHORED = tuple((number, form.pattern) for number, forms in enumerate(LISTS) for form in forms if not form.starts)


def opener_lead(low: str) -> int:
    """The last place a praise may start: OPENER_LEAD characters in, or the first sentence end, line break or double
    quote before that."""
    end = OPENER_END.search(low, 0, OPENER_LEAD)
    return end.start() if end else OPENER_LEAD


def read_phrases(low: str) -> Phrases:
    """Every place the lower-cased reply says a phrase of each list. Praise is looked for in the opener only: a match
    starting by opener_lead and read within OPENER_CHARS."""
    found: Phrases = Phrases([], [], [], [])
    size = len(low)
    for number, pattern in _ANCHORED:
        match = pattern.match(low, 0, OPENER_CHARS if number == _PRAISES else size)
        if match:
            found[number].append(match.span())
    padded = b" " + low.encode("ascii", "replace").translate(_WORD_BYTES) + b" "
    lead = -1  # the opener's lead, found when a praise may start there
    for word in _START_WORDS.intersection(padded.split()):
        key, anywhere, praise = _INDEX[word]
        step = len(key) - 1
        if anywhere:
            at = padded.find(key)  # the space before the word: the word's place in the reply
            while at != -1:
                for number, match_at in anywhere:
                    match = match_at(low, at, size)
                    if match:
                        found[number].append(match.span())
                at = padded.find(key, at + step)
        if praise is not None:
            if lead < 0:
                lead = opener_lead(low)
            at = padded.find(key, 0, lead + len(key))
            while at != -1:
                match = praise(low, at, OPENER_CHARS)
                if match:
                    found.praise.append(match.span())
                at = padded.find(key, at + step, lead + len(key))
    return found


def form_spans(low: str, forms: tuple[Form, ...], last_start: int | None = None,
               endpos: int | None = None) -> list[tuple[int, int]]:
    """The rule read the slow way: at every place a word starts (up to `last_start`), the first of the forms that
    starts with that word and matches there, read up to `endpos`; anchored forms at the reply's start. read_phrases
    finds exactly these."""
    end = len(low) if endpos is None else endpos
    spans = [m.span() for form in forms if not form.starts and (m := form.pattern.match(low, 0, end))]
    for word in re.finditer(r"[a-z~]+", low):
        if last_start is not None and word.start() > last_start:
            break
        for form in forms:
            if word.group() in form.starts:
                match = form.pattern.match(low, word.start(), end)
                if match:
                    spans.append(match.span())
                    break
    return spans


def places(spans: list[tuple[int, int]]) -> int:
    """How many places the spans cover: spans that overlap count once."""
    if len(spans) < 2:
        return len(spans)
    count, end = 0, -1
    for start, stop in sorted(spans):
        if start >= end:
            count += 1
        end = max(end, stop)
    return count
