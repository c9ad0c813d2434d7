"""The word rule every gate counts words by, and the word n-gram rule built on it.

A word, for hack_scan's word features, decontaminate's n-grams and the near-duplicate shingles alike:

* the text is lower-cased (``str.lower``) and the right single quote (U+2019) is read as an apostrophe;
* word characters are letters, digits and underscore of any script (Python's ``\\w``);
* an apostrophe between two word characters joins them ("don't" and "it's" are one word each), any other
  apostrophe ('quoted') separates, as does every other character.

:func:`words` is the rule, one text at a time. :func:`word_tokens` gives the same words for many texts at once
in a few C passes over the joined corpus (the gates' path); a property test pins the two equal.

An n-gram is n consecutive words of one text (a window never spans two texts; a text under n words has none),
hashed as a polynomial over its word values (:func:`window_hashes`). :func:`ngram_table` hashes every word, every
n-gram and every whole text of a corpus (decontaminate's exact and near rules).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["GOLDEN", "NgramTable", "mix", "ngram_table", "window_hashes", "word_tokens", "words"]

_WORD = re.compile(r"\w+(?:'\w+)*")
_RIGHT_QUOTE = "\u2019"
_NON_ASCII_NON_WORD = re.compile(r"[^\w\x00-\x7f]")
_TEXT_BREAK = "\x00"  # joins texts in the bulk path; a separator under the rule, so blanked where a text holds it
# bytes.translate table of the bulk path: ASCII word characters and the apostrophe stay, the text break becomes a
# newline, every other ASCII byte a space; bytes >= 128 stay (after the non-word non-ASCII characters are blanked,
# they are the UTF-8 of word characters)
_WORD_BYTES = bytes(
    (b if (chr(b).isalnum() or chr(b) in "_'") else 10 if b == 0 else 32) if b < 128 else b for b in range(256))
# an apostrophe that is not between two word bytes, written as the pair that shows it (applied in this order:
# runs of apostrophes first, then one beside a space or a text break)
_LONE_APOSTROPHES = ((b"''", b"  "), (b" '", b"  "), (b"\n'", b"\n "), (b"' ", b"  "), (b"'\n", b" \n"))


def _fold(text: str) -> str:
    return text.lower().replace(_RIGHT_QUOTE, "'")


def words(text: str) -> list[str]:
    """The words of `text` under the rule (the module docstring)."""
    return _WORD.findall(_fold(text))


def _word_stream(texts: Sequence[str]) -> bytes:
    """All texts' words as UTF-8 bytes: words separated by spaces, texts by a newline (len(texts) - 1 of them)."""
    joined = _TEXT_BREAK.join(texts)
    if joined.count(_TEXT_BREAK) != len(texts) - 1:  # a text holds the break character: it separates words there
        joined = _TEXT_BREAK.join(text.replace(_TEXT_BREAK, " ") for text in texts)
    folded = _fold(joined)
    del joined
    if not folded.isascii():
        folded = _NON_ASCII_NON_WORD.sub(" ", folded)
    stream = b" " + folded.encode("utf-8").translate(_WORD_BYTES) + b" "
    if b"'" in stream:
        for lone, blank in _LONE_APOSTROPHES:
            stream = stream.replace(lone, blank)
    return stream


def word_tokens(texts: Sequence[str]) -> tuple[list[bytes], np.ndarray]:
    """Every text's words (UTF-8 bytes) in one flat list, and how many each text has: exactly
    ``[words(t) for t in texts]`` encoded and concatenated, in a few C passes over the joined texts.

    One flat list rather than a list per text: nothing per text stays alive for the garbage collector to walk.
    """
    if not texts:
        return [], np.zeros(0, dtype=np.int64)
    stream = _word_stream(texts)
    codes = np.frombuffer(stream, dtype=np.uint8)
    in_word = codes > 32  # every byte the stream keeps but the space (32) and the text break (10) is a word's
    before_word = np.flatnonzero(in_word[1:] > in_word[:-1])  # the separator just before each word
    breaks = np.flatnonzero(codes == 10)
    ends = np.empty(len(texts) + 1, dtype=np.int64)  # words before each text's end
    ends[0] = 0
    ends[1:-1] = np.searchsorted(before_word, breaks)
    ends[-1] = len(before_word)
    return stream.split(), np.diff(ends)


_B = 0x100000001B3  # FNV-64 prime: odd, so invertible mod 2^64
GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio, odd: a multiplier that spreads keys over the bits
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every output bit depends on every input bit."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def window_hashes(values: np.ndarray, lengths: np.ndarray, n: int, base: int = _B) -> tuple[np.ndarray, np.ndarray]:
    """The n-gram rule: every window of `n` consecutive words inside one text, hashed as the polynomial
    ``((v0 * base + v1) * base + ...) mod 2^64`` over the words' values.

    `values` holds every text's word values (uint64) back to back, text t having `lengths[t]` of them. Returns the
    window hashes in text order and `first`: text t's windows are ``hashes[first[t]:first[t + 1]]``.
    """
    counts = np.maximum(lengths - n + 1, 0)
    first = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    if int(counts.sum()) == 0:
        return np.zeros(0, np.uint64), first
    windows = values.size - n + 1
    rolling = values[:windows].astype(np.uint64, copy=True)
    multiplier = np.uint64(base)
    for k in range(1, n):  # in place, wrapping mod 2^64
        np.multiply(rolling, multiplier, out=rolling)
        np.add(rolling, values[k: k + windows], out=rolling)
    word_start = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=word_start[1:])
    owner = np.repeat(np.arange(len(lengths), dtype=np.int64), counts)
    start = np.arange(len(owner), dtype=np.int64) - first[owner] + word_start[owner]
    return rolling[start], first


@dataclass
class NgramTable:
    """The words and n-grams of a list of texts.

    ``hashes[first[t]:first[t+1]]`` are text t's n-gram hashes in order; ``owner`` gives each n-gram's text;
    ``lengths[t]`` is its word count; ``text_hash[t]`` hashes its whole word sequence (what "verbatim" compares; 0
    for a text with no words).
    """

    hashes: np.ndarray
    owner: np.ndarray
    first: np.ndarray
    lengths: np.ndarray
    text_hash: np.ndarray


def _sequence_hashes(word: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each text's whole word sequence hashed as one window as long as the text (the polynomial of window_hashes,
    then mixed), for all texts at once; 0 for a text with no words.

    The polynomial ``sum(w_i * B^(e-1-i))`` of a text ending at word e is ``B^(e-1) * sum(w_i * B^-i)``: one running
    sum over the corpus gives every text's, since B is odd and so invertible mod 2^64.
    """
    total = len(word)
    out = np.zeros(len(lengths), dtype=np.uint64)
    if total == 0:
        return out
    power = np.full(total, _B, dtype=np.uint64)
    power[0] = 1
    np.multiply.accumulate(power, out=power)  # B^i, wrapping
    inverse = np.full(total, pow(_B, -1, 1 << 64), dtype=np.uint64)
    inverse[0] = 1
    np.multiply.accumulate(inverse, out=inverse)  # B^-i
    running = np.zeros(total + 1, dtype=np.uint64)
    np.cumsum(word * inverse, out=running[1:])
    end = np.cumsum(lengths)
    some = lengths > 0
    last = end[some] - 1
    sums = running[end[some]] - running[end[some] - lengths[some]]
    hashed = mix(sums * power[last] + lengths[some].astype(np.uint64))
    out[some] = np.where(hashed == 0, np.uint64(1), hashed)
    return out


def ngram_table(texts: Sequence[str], n: int) -> NgramTable:
    """Hash every word, every n-gram and every whole text (its word sequence: what "verbatim" compares).

    Words hash with Python's hash of their bytes (SipHash, uniform in every bit; compared only within one process).
    """
    tokens, lengths = word_tokens(texts)
    word = np.fromiter(map(hash, tokens), dtype=np.int64, count=len(tokens)).view(np.uint64)
    text_hash = _sequence_hashes(word, lengths)
    hashes, first = window_hashes(word, lengths, n)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), np.diff(first))
    return NgramTable(hashes, owner, first, lengths, text_hash)
