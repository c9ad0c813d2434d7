"""What a reply says of the style lists (style_phrases): how many hedges, whether it apologises, opens or signs off
with a stock phrase, or opens by praising the asker, found in one reading of the reply.

The rule (:func:`said_slowly`): at every place a word starts, the first form of a list whose start words or start
pairs begin with that word and whose pattern matches there counts (at_start forms: at the reply's start); hedges are
counted as places (matches that overlap count once); praise counts only where it starts within the opener
(:func:`opener_lead`); a sign-off counts only outside quoted lines ("> Best regards" in a draft the user asked for).

The fast reading (:func:`read`, and :func:`said` from it) finds the same: the reply is cut into words once (bytes translated in C, never a
regex scanned end to end), the words and adjacent word pairs that begin some form are picked out with two set
intersections, and only there are the forms tried, each list's forms for one word compiled into one pattern in
the list's order; a list already decided is not tried again. tests/markers/test_markers_phrases.py pins the two equal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import chain, pairwise
from typing import NamedTuple

from whileai_train.markers.style_forms import Form
from whileai_train.markers.style_phrases import (
    APOLOGY_FORMS,
    BOILERPLATE_OPENER_FORMS,
    BOILERPLATE_SIGNOFF_FORMS,
    GREETING,
    GREETING_WORDS,
    HEDGE_FORMS,
    OPENER_END,
    OPENER_LEAD,
    REFUSAL_FORMS,
    SYCOPHANTIC_FORMS,
)

__all__ = ["APOLOGY_FOUND", "BOILERPLATE_FOUND", "LISTS", "PRAISE_FOUND", "REFUSAL_FOUND", "Said", "form_spans",
           "opener_lead", "places", "read", "said", "said_slowly", "word_starts"]

# The lists read, by number.
LISTS: tuple[tuple[Form, ...], ...] = (HEDGE_FORMS, APOLOGY_FORMS, BOILERPLATE_SIGNOFF_FORMS, SYCOPHANTIC_FORMS,
                                       REFUSAL_FORMS, BOILERPLATE_OPENER_FORMS)
_PRAISE = LISTS.index(SYCOPHANTIC_FORMS)

# Every byte to a space but a-z, "~" and "%": a word is a run of those, where it stands (non-ASCII characters are
# replaced by one byte each, so a place in the bytes is the same place in the text).
_WORD_BYTES = bytes(b if (97 <= b <= 122 or b in (126, 37)) else 32 for b in range(256))
_WORD = re.compile(r"[a-z~%]+")


class Said(NamedTuple):
    """What one folded reply says of the style lists."""

    hedges: int  # places a hedge stands (matches that overlap count once)
    apology: bool
    boilerplate: bool  # a stock opener at the start, or a stock sign-off outside quoted lines
    praise: bool  # praise of the asker within the opener
    refusal: bool


def _first_word(form: Form) -> set[str]:
    return {*form.starts, *(first for first, _ in form.pairs)}


def opener_lead(low: str) -> int:
    """The last place praise may start: the end of the reply's first sentence after any salutation (a sentence end,
    line break or double quote), at most OPENER_LEAD characters after the salutation."""
    greeting = GREETING.match(low)
    start = greeting.end() if greeting else 0
    end = OPENER_END.search(low, start, start + OPENER_LEAD)
    return end.start() if end else start + OPENER_LEAD


def _unquoted(low: str, at: int) -> bool:
    """Whether the line holding `at` is not a quoted line ("> ...")."""
    return not low[low.rfind("\n", 0, at) + 1:at].lstrip().startswith(">")


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


def word_starts(low: str) -> list[tuple[int, str]]:
    """Where each word of the folded reply starts, and the word."""
    return [(word.start(), word.group()) for word in _WORD.finditer(low)]


def form_spans(low: str, forms: tuple[Form, ...], last_start: int | None = None) -> list[tuple[int, int]]:
    """The rule read the slow way: the at_start forms at the reply's start, then at every place a word starts (up to
    `last_start`) the first of the forms that begins with that word and matches there."""
    spans = [m.span() for form in forms if form.at_start and (m := form.pattern.match(low))]
    for at, word in word_starts(low):
        if last_start is not None and at > last_start:
            break
        for form in forms:
            if not form.at_start and (word in form.starts or any(first == word for first, _ in form.pairs)):
                match = form.pattern.match(low, at)
                if match:
                    spans.append(match.span())
                    break
    return spans


def said_slowly(low: str) -> Said:
    """What the folded reply says of the style lists, read the slow way (every form at every word start)."""
    signed = any(_unquoted(low, start) for start, _ in form_spans(low, BOILERPLATE_SIGNOFF_FORMS))
    return Said(places(form_spans(low, HEDGE_FORMS)), bool(form_spans(low, APOLOGY_FORMS)),
                bool(form_spans(low, BOILERPLATE_OPENER_FORMS)) or signed,
                bool(form_spans(low, SYCOPHANTIC_FORMS, opener_lead(low))), bool(form_spans(low, REFUSAL_FORMS)))


# ------------------------------------------------------------------------------------------ the fast reading

_Match = Callable[..., "re.Match[str] | None"]


class _Start(NamedTuple):
    """What is tried where one word stands: the word with a space each side (as it stands in the padded words), the
    lists' patterns tried anywhere ((list bit, the pattern of the list's forms that begin with the word, in the list's
    order)), and the praise pattern (tried in the opener only), if any."""

    key: bytes
    step: int  # len(key) - 1: where to look for the word's next place after one
    anywhere: tuple[tuple[int, _Match], ...]
    praise: _Match | None


_Heads = dict[bytes, tuple[tuple[int, _Match], ...]]
_HeadPairs = dict[tuple[bytes, bytes], tuple[tuple[int, _Match], ...]]


def _index() -> tuple[dict[bytes, _Start], dict[bytes, int], dict[tuple[bytes, bytes], int], _Heads, _HeadPairs]:
    """The reading's tables: per word its _Start; per start word and per start pair the lists (one bit each) whose
    forms begin there; per first word and per first pair of a reply the at_start forms tried (list bit, match)."""
    sources: dict[str, dict[int, list[str]]] = {}
    words: dict[bytes, int] = {}
    pairs: dict[tuple[bytes, bytes], int] = {}
    heads: dict[bytes, list[tuple[int, _Match]]] = {}
    head_pairs: dict[tuple[bytes, bytes], list[tuple[int, _Match]]] = {}
    for number, forms in enumerate(LISTS):
        for form in forms:
            starts = [word.encode("ascii") for word in form.starts]
            twos = [(first.encode("ascii"), second.encode("ascii")) for first, second in form.pairs]
            if form.at_start:
                for word in starts:
                    heads.setdefault(word, []).append((1 << number, form.pattern.match))
                for two in twos:
                    head_pairs.setdefault(two, []).append((1 << number, form.pattern.match))
                continue
            for word in starts:
                words[word] = words.get(word, 0) | 1 << number
            for two in twos:
                pairs[two] = pairs.get(two, 0) | 1 << number
            for first in _first_word(form):
                sources.setdefault(first, {}).setdefault(number, []).append(form.pattern.pattern)
    index = {}
    for first, by_list in sources.items():
        match = {number: re.compile("|".join(parts)).match for number, parts in by_list.items()}
        praise = match.pop(_PRAISE, None)
        index[first.encode("ascii")] = _Start(f" {first} ".encode("ascii"), len(first) + 1,
                                              tuple((1 << number, at) for number, at in sorted(match.items())), praise)
    return (index, words, pairs, {word: tuple(tried) for word, tried in heads.items()},
            {two: tuple(tried) for two, tried in head_pairs.items()})


_INDEX, _WORD_LISTS, _PAIR_LISTS, _HEADS, _HEAD_PAIRS = _index()
_WORDS = frozenset(_WORD_LISTS)
_PAIRS = frozenset(_PAIR_LISTS)
# start word or start pair -> (the word, the bits of the lists whose forms begin there)
_STARTS: dict[bytes | tuple[bytes, bytes], tuple[bytes, int]] = {
    **{word: (word, lists) for word, lists in _WORD_LISTS.items()},
    **{two: (two[0], lists) for two, lists in _PAIR_LISTS.items()}}
_HEDGE_BIT, _APOLOGY_BIT, _SIGNOFF_BIT, _PRAISE_BIT, _REFUSAL_BIT, _OPENER_BIT = (1 << n for n in range(len(LISTS)))
_ANYWHERE_BITS = _HEDGE_BIT | _APOLOGY_BIT | _SIGNOFF_BIT | _REFUSAL_BIT
# The bits of read()'s second value: what the reply was found to say (a stock opener sets BOILERPLATE_FOUND too).
APOLOGY_FOUND, BOILERPLATE_FOUND, PRAISE_FOUND, REFUSAL_FOUND = _APOLOGY_BIT, _SIGNOFF_BIT, _PRAISE_BIT, _REFUSAL_BIT
_FOUND_BITS = APOLOGY_FOUND | BOILERPLATE_FOUND | PRAISE_FOUND | REFUSAL_FOUND
# A reply whose first word is none of these has no salutation, so its opener ends within OPENER_LEAD characters.
_GREETING_WORDS = frozenset(word.encode("ascii") for word in GREETING_WORDS.split())


def said(low: str) -> Said:
    """What the folded reply (style_forms.fold) says of the style lists; the same as said_slowly, read once."""
    hedges, found = read(low)
    return Said(hedges, bool(found & APOLOGY_FOUND), bool(found & BOILERPLATE_FOUND), bool(found & PRAISE_FOUND),
                bool(found & REFUSAL_FOUND))


def read(low: str) -> tuple[int, int]:
    """said in the form reply_style reads: the hedges' places, and the bits of what else the reply says
    (APOLOGY_FOUND, BOILERPLATE_FOUND, PRAISE_FOUND, REFUSAL_FOUND)."""
    padded = b" " + low.encode("ascii", "replace").translate(_WORD_BYTES) + b" "
    words = padded.split()
    if not words:
        return 0, 0
    hedges: list[tuple[int, int]] = []
    found = 0  # the bits of the lists found
    heads = _HEADS.get(words[0], ())
    if len(words) > 1:
        heads += _HEAD_PAIRS.get((words[0], words[1]), ())
    for bit, match in heads:
        matched = match(low)
        if matched is not None:
            if bit == _HEDGE_BIT:
                hedges.append(matched.span())
            else:
                found |= bit
    if found & _OPENER_BIT:
        found |= _SIGNOFF_BIT
    quoted = ">" in low
    lead = -1
    # Each start word and start pair that stands in the reply, with the lists whose forms begin there (a word that
    # begins several of them is read again for each; a list found is not tried again).
    standing: Iterable[bytes | tuple[bytes, bytes]] = chain(_WORDS.intersection(words),
                                                          _PAIRS.intersection(pairwise(words)))
    for start in standing:
        word, lists = _STARTS[start]
        lists &= ~found
        if not lists:
            continue
        key, step, anywhere, praise_at = _INDEX[word]
        if lists & _ANYWHERE_BITS:
            at = padded.find(key)
            while at != -1:
                for bit, match in anywhere:
                    if lists & bit:
                        matched = match(low, at)
                        if matched is not None:
                            if bit == _HEDGE_BIT:
                                hedges.append(matched.span())
                            elif bit != _SIGNOFF_BIT or not quoted or _unquoted(low, at):
                                lists ^= bit
                                found |= bit
                at = padded.find(key, at + step)
        if lists & _PRAISE_BIT:
            at = padded.find(key, 0, OPENER_LEAD + step + 1) if words[0] not in _GREETING_WORDS else 0
            if at == -1:
                continue  # not within the first OPENER_LEAD characters, and there is no salutation to skip
            if lead < 0:
                lead = opener_lead(low)
            end = lead + step + 1
            at = padded.find(key, 0, end)
            while at != -1:
                if praise_at(low, at) is not None:  # type: ignore[misc]
                    found |= _PRAISE_BIT
                    break
                at = padded.find(key, at + step, end)
    return (places(hedges) if hedges else 0), found & _FOUND_BITS
