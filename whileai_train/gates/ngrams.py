"""Word and word-n-gram hashes for many texts at once, all in numpy (the exact and near rules of decontaminate).

Texts are lower-cased and cut into words: runs of ASCII letters, digits and underscore, plus any non-ASCII
character (so accented and non-Latin words stay whole; punctuation and spacing never count). The cutting is one
bytes.translate over the joined corpus (about twice as fast as a regex per text); each word is hashed with
Python's string hash (hashes are only compared within one process), every n-word window gets one polynomial
hash in numpy, and every text one hash of its word sequence joined by spaces (what "verbatim" compares).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

__all__ = ["NgramTable", "mix", "ngram_table"]

_B = 0x100000001B3  # FNV-64 prime: odd, so invertible mod 2^64
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
# bytes.translate table: ASCII punctuation and spacing -> space, NUL (the text separator) -> newline; letters,
# digits, "_" and the UTF-8 bytes of non-ASCII characters stay (so accented and non-Latin words stay whole)
_TABLE = bytes(
    (b if (chr(b).isalnum() or chr(b) == "_") else 10 if b == 0 else 32) if b < 128 else b for b in range(256))


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every output bit depends on every input bit."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


@dataclass
class NgramTable:
    """The words and n-grams of a list of texts.

    ``hashes[first[t]:first[t+1]]`` are text t's n-gram hashes in order; ``owner`` gives each n-gram's text;
    ``lengths[t]`` is its word count; ``text_hash[t]`` hashes its whole word sequence (0 for a text with no words).
    """

    hashes: np.ndarray
    owner: np.ndarray
    first: np.ndarray
    lengths: np.ndarray
    text_hash: np.ndarray


def _split(texts: Sequence[str]) -> list[list[bytes]]:
    """Each text's words as bytes: one lower(), one encode() and one translate() over the joined corpus."""
    joined = "\x00".join(texts)
    parts = joined.lower().encode("utf-8").translate(_TABLE).split(b"\n")
    if len(parts) != len(texts):  # a text held a NUL byte: cut text by text instead
        return [t.lower().encode("utf-8").translate(_TABLE).replace(b"\n", b" ").split() for t in texts]
    return [part.split() for part in parts]


def _word_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One 64-bit hash per word (flat, in text order), each text's word count, and each text's whole-text hash.

    Python's hash of bytes is SipHash, uniform in every bit; a text with no words hashes to 0.
    """
    tokenised = _split(texts) if texts else []
    lengths = np.fromiter(map(len, tokenised), dtype=np.int64, count=len(tokenised))
    word = np.fromiter(map(hash, chain.from_iterable(tokenised)), dtype=np.int64, count=int(lengths.sum()))
    whole = np.fromiter((hash(b" ".join(words)) if words else 0 for words in tokenised), dtype=np.int64,
                        count=len(tokenised))
    return word.view(np.uint64), lengths, whole.view(np.uint64)


def ngram_table(texts: Sequence[str], n: int) -> NgramTable:
    """Hash every word, every n-word window and every whole text; a text under n words has no n-grams."""
    word, lengths, text_hash = _word_hashes(texts)
    counts = np.maximum(lengths - n + 1, 0)
    first = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    if int(counts.sum()) == 0:
        return NgramTable(np.zeros(0, np.uint64), np.zeros(0, np.int64), first, lengths, text_hash)
    windows = word.size - n + 1
    rolling = word[:windows].copy()
    b = np.uint64(_B)
    for k in range(1, n):  # polynomial over the n word hashes, in place (wraps mod 2^64)
        np.multiply(rolling, b, out=rolling)
        np.add(rolling, word[k: k + windows], out=rolling)
    word_start = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lengths[:-1], out=word_start[1:])
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    start = np.arange(len(owner), dtype=np.int64) - first[owner] + word_start[owner]
    return NgramTable(rolling[start], owner, first, lengths, text_hash)
