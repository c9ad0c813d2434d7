"""How a style phrase is written and read: the folded reply the patterns read, and the form (a pattern with the words
or word pairs its matches start with) that phrases.py tries only where those stand.

Every pattern reads the folded reply (lower case, curly apostrophes straight). A form is tried only where its match
can start: where one of its start words stands as a word, or one of its start pairs (a word and the word after it,
for a start word too common to try alone: "i think", "you're", "let me"); a form marked at_start is tried at the
reply's start only, when the reply's first word (or first two words) is one of its starts. A word is a run of a-z,
"~" and "%" (so "not 100% sure" is the words not, %, sure). A phrase right after a quote mark is talked about, not
said ('"Great question" is filler'): no form matches there.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["TO_FIRST_WORD", "Form", "fold", "one_of", "pairs_of", "phrase_forms"]


def fold(text: str) -> str:
    """The reply as the patterns read it: lower case, curly apostrophes made straight (same length as the text)."""
    return text.lower().replace("’", "'")


class Form(NamedTuple):
    """One way of saying a thing: the words and word pairs its matches start with, its pattern over the folded
    reply, and whether it is tried at the reply's start only (then the start words are the reply's first word)."""

    starts: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    pattern: re.Pattern[str]
    at_start: bool


_NOT_QUOTED = r"(?<![\"'“‘`])"
# What an at_start form may skip before its first word: anything that is not a word (markdown, emoji, quotes).
TO_FIRST_WORD = r"[^a-z~%]*"


def phrase_forms(*forms: tuple[str, str], at_start: bool = False) -> tuple[Form, ...]:
    """Forms from (start tokens, the pattern's source); a token is a word ("sorry") or a pair ("let+me")."""
    out = []
    for tokens, source in forms:
        words: list[str] = []
        pairs: list[tuple[str, str]] = []
        for token in tokens.split():
            first, _, second = token.partition("+")
            if second:
                pairs.append((first, second))
            else:
                words.append(first)
        prefix = TO_FIRST_WORD if at_start else _NOT_QUOTED
        out.append(Form(tuple(words), tuple(pairs), re.compile(prefix + "(?:" + source + ")"), at_start))
    return tuple(out)


def pairs_of(firsts: str, seconds: str) -> str:
    """Start pairs: each of `firsts` followed by each of `seconds` (space-separated words)."""
    return " ".join(f"{first}+{second.split('-')[0]}" for first in firsts.split() for second in seconds.split())


def one_of(words: str) -> str:
    """A regex alternation of space-separated words ("-" in a word also matches a space)."""
    return "|".join(word.replace("-", "[- ]") for word in words.split())
