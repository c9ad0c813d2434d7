"""The feature tiers hack_scan ranks against reward, read from rows in one pass.

Hand tier (named by a person): reply length and words, tool calls, failed tool calls (``tool_errors``: a result
with an error or ok=false), turns, truncation, surface counts (digits,
exclamation marks, question marks, bullet lines, code fences), one indicator per tool called (``tool:<name>``),
mean token logprob when rows carry logprobs, every numeric marker (``marker:<name>``), every fired trace flag
(``trace:<flag>``), and the caller's own ``features={"name": fn}``. Auto tier (found in the data): the most common
words (``word:<w>``) and adjacent word pairs (``pair:<w1 w2>``) of the agent's turns (``rows.agent_turns``; words
by the one word rule of ``rows/text.py``), each a 0/1 indicator of the row containing it.

Rows stay plain dicts: one Python loop reads each row once; counting and the matrices are numpy/scipy.sparse.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from whileai_train.errors import ConfigError, RowError
from whileai_train.gates.defaults import AUTO_TOP_PAIRS, AUTO_TOP_WORDS, PAIR_CANDIDATE_WORDS
from whileai_train.markers.trace_flags import CallMemo, flags_in, stamped_flags
from whileai_train.progress import rows_progress
from whileai_train.rows.failure import DEFAULT_FAILURE, FailureRule
from whileai_train.rows.text import word_tokens
from whileai_train.rows.trajectory import ReadMemo, read_trajectory
from whileai_train.tables.trajectories import Parts, RowReader, Trajectories, read_trajectories

__all__ = ["FeatureTable", "check_user_features", "extract_features", "read_scan", "scan_reader", "vector_dot"]


# The hand-tier columns every scan has, in this order (the optional ones follow).
HAND = ("length", "words", "tool_calls", "tool_errors", "turns", "digits", "exclamations", "questions", "bullet_lines",
        "code_fences")


@dataclass
class FeatureTable:
    """Features of the graded rows: `dense` (n x h, NaN = missing) and `binary` (n x b sparse 0/1, CSC; the same
    matrix row-compressed in `binary_rows`, which products with many vectors want: built once, not converted)."""

    dense: np.ndarray
    dense_names: list[str]
    binary: sp.csc_matrix
    binary_names: list[str]
    trajectory: np.ndarray  # one hash per row: rows with equal hashes took the same trajectory
    notes: list[str] = field(default_factory=list)
    binary_rows: sp.csr_matrix | None = None


def vector_dot(a: np.ndarray, b: np.ndarray) -> float:
    """a . b of two vectors without BLAS: a threaded BLAS call wakes its thread pool for one short vector (slow on a
    busy machine, see bench/gates.py); einsum's plain loop does not."""
    return float(np.einsum("i,i->", a, b))


_CHUNK = 10_000  # rows tokenised at once: bounds the token list whatever the size
_SEPARATOR = "\n\x01\n"  # between rows for the surface counts: a line of its own, and in no ordinary text
_FENCE = re.compile(rb"```")
_BULLET_BYTES = re.compile(rb"^[ \t]*(?:[-*]|\xe2\x80\xa2|\d+[.)])[ \t]", re.MULTILINE)
_BULLET_AFTER_NEWLINE = re.compile(rb"\n[ \t]*(?:[-*]|\xe2\x80\xa2|\d+[.)])[ \t]")  # the same, not at 0


def _per_row(positions: list[int] | np.ndarray, separators: np.ndarray, n_rows: int) -> np.ndarray:
    """How many of `positions` (byte offsets into the joined chunk) fall in each row."""
    return np.bincount(np.searchsorted(separators, np.asarray(positions, dtype=np.int64)), minlength=n_rows)


def _bullet_starts(raw: bytes) -> list[int]:
    """Where _BULLET_BYTES matches in `raw`: a search for its line-start form after each newline (a literal
    prefix the regex engine skips to) is several times faster than trying ``^`` at every byte."""
    found = [match.start() + 1 for match in _BULLET_AFTER_NEWLINE.finditer(raw)]
    if _BULLET_BYTES.match(raw):
        found.insert(0, 0)
    return found


class ScannedTexts(NamedTuple):
    """The agent texts of all rows, read at once: every word as an id into `vocabulary` (in row order), the
    words per row, and the surface counts per row (digits, !, ?, bullet lines, code fences)."""

    token_ids: np.ndarray
    words_per_row: np.ndarray
    surface: np.ndarray
    vocabulary: list[str]


def _scan_texts(texts: list[str]) -> ScannedTexts:
    """Tokens (word ids, words by :mod:`whileai_train.rows.text`'s rule), words per row, surface counts per row and
    the vocabulary, for all texts at once.

    Rows are joined (in chunks) so lowering, splitting and counting run in C over one long string instead of
    a dozen calls per row; the separator marks where each row ends.
    """
    vocabulary: defaultdict[bytes, int] = defaultdict()
    vocabulary.default_factory = vocabulary.__len__  # a new word gets the next id
    ids_parts, lengths_parts, surface_parts = [], [], []
    for start in range(0, len(texts), _CHUNK):
        chunk = texts[start:start + _CHUNK]
        joined = _SEPARATOR.join(chunk)
        if joined.count("\x01") != len(chunk) - 1:  # a text holds the separator byte itself: blank it out
            joined = _SEPARATOR.join(text.replace("\x01", " ") for text in chunk)
        raw = joined.encode("utf-8", "replace")  # digits, marks, bullets and fences: no case to fold
        del joined
        codes = np.frombuffer(raw, dtype=np.uint8)
        separators = np.flatnonzero(codes == 1)
        n_chunk = len(chunk)
        surface_parts.append(np.column_stack([
            _per_row(np.flatnonzero((codes >= 48) & (codes <= 57)), separators, n_chunk),
            _per_row(np.flatnonzero(codes == 33), separators, n_chunk),
            _per_row(np.flatnonzero(codes == 63), separators, n_chunk),
            _per_row(_bullet_starts(raw), separators, n_chunk),
            _per_row([m.start() for m in _FENCE.finditer(raw)], separators, n_chunk),
        ]).astype(np.float64))
        del raw, codes
        tokens, counts = word_tokens(chunk)
        ids_parts.append(np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens)))
        lengths_parts.append(counts)
        del tokens
    words = [word.decode("utf-8") for word in vocabulary]  # dict order = id order
    if not ids_parts:
        return ScannedTexts(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 5)), words)
    return ScannedTexts(np.concatenate(ids_parts), np.concatenate(lengths_parts).astype(np.int64),
                        np.vstack(surface_parts), words)


def _mean_logprob(row: Mapping[str, Any]) -> float:
    value = row.get("mean_logprob")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    logprobs = row.get("logprobs")
    if isinstance(logprobs, list) and logprobs:
        total, count = 0.0, 0
        for item in logprobs:
            if isinstance(item, Mapping):
                item = item.get("logprob")
            if isinstance(item, (int, float)) and not isinstance(item, bool) and math.isfinite(item):
                total += float(item)
                count += 1
        if count:
            return total / count
    return math.nan


def scan_reader(failure: FailureRule = DEFAULT_FAILURE, wanted: Sequence[bool] | None = None) -> RowReader:
    """The scan's reader of one row: its parts and its fired trace flags from one reading of its trajectory; flags
    a row carries (row["trace_flags"], by trace_markers or the caller) as stamped, its parts then by the parts-only
    reading (with a failure= rule of the caller's own, every row is read by that rule); a row whose events cannot be
    read raises no flag. `wanted`: a mask of the rows the scan will read (the others: their parts only, no flags)."""
    own_rule = failure is not DEFAULT_FAILURE
    memo = ReadMemo()  # the rows' repeated argument and result texts, decoded once for all of them
    calls: CallMemo = {}  # and their repeated calls, each found once
    plain = ReadMemo()  # the same for the rows read for their parts only, by the default rule

    def parts_of(number: int, row: Mapping[str, Any]) -> Parts:
        """The row's parts only (read_trajectories' reading), under the memo."""
        trajectory = read_trajectory(row, number, events=False, memo=plain)
        return trajectory.texts, trajectory.calls, trajectory.turns, trajectory.errors

    def read(number: int, row: Mapping[str, Any]) -> tuple[Parts, tuple[str, ...]]:
        if wanted is not None and not wanted[number]:
            return parts_of(number, row), ()
        if not own_rule and row.get("trace_flags") is not None:
            stamped = stamped_flags(row)
            if stamped is not None:
                return parts_of(number, row), tuple(stamped)
        if row.get("messages") is None and row.get("steps") is None:
            return parts_of(number, row), ()
        trajectory = read_trajectory(row, number, failure, memo=memo)
        parts = (trajectory.texts, trajectory.calls, trajectory.turns, trajectory.errors)
        if trajectory.problem is not None:
            return parts, ()
        flags = flags_in(trajectory.events, memo=calls)
        return parts, tuple(flags) if flags else ()

    return read


def read_scan(rows: Sequence[Mapping[str, Any]], failure: FailureRule = DEFAULT_FAILURE,
              wanted: np.ndarray | None = None) -> Trajectories:
    """read_trajectories of `rows` with their trace flags (:func:`scan_reader`): what extract_features reads."""
    return read_trajectories(rows, scan_reader(failure, None if wanted is None else wanted.tolist()))


def _indicator(rows_of: array | np.ndarray, cols_of: array, n_rows: int, names: list[str]) -> sp.csr_matrix:
    data = np.ones(len(rows_of), dtype=np.float64)
    matrix = sp.csr_matrix((data, (np.asarray(rows_of, dtype=np.int64), np.asarray(cols_of, dtype=np.int64))),
                           shape=(n_rows, len(names)))
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    return matrix


def _columns(presence: sp.csr_matrix, columns: np.ndarray) -> sp.csr_matrix:
    """0/1 float columns `columns` (ascending) of a canonical CSR presence matrix (still row-compressed)."""
    position = np.full(presence.shape[1], -1, dtype=np.int32)
    position[columns] = np.arange(len(columns), dtype=np.int32)
    mapped = position[presence.indices]
    keep = mapped >= 0
    kept_before = np.zeros(len(keep) + 1, dtype=np.int64)  # kept entries before each position
    np.cumsum(keep, out=kept_before[1:])
    indptr = kept_before[presence.indptr]
    return sp.csr_matrix((np.ones(int(indptr[-1])), mapped[keep], indptr), shape=(presence.shape[0], len(columns)))


def _column_form(rows_form: sp.csr_matrix) -> sp.csc_matrix:
    """The CSC form of a 0/1 CSR matrix: its structure transposed with 1-byte data (every value is 1.0), half the
    memory traffic of converting the float matrix."""
    ones = sp.csr_matrix((np.ones(rows_form.nnz, dtype=np.int8), rows_form.indices, rows_form.indptr),
                         shape=rows_form.shape).tocsc()
    return sp.csc_matrix((np.ones(ones.nnz), ones.indices, ones.indptr), shape=rows_form.shape)


def _top_columns(df: np.ndarray, n_rows: int, top: int) -> np.ndarray:
    """Indices of the `top` largest document frequencies, leaving out ids in every row (no variation)."""
    candidates = np.flatnonzero((df > 0) & (df < n_rows))
    if len(candidates) > top:
        # stable order: by frequency, then by id (first seen), so equal counts pick the same words every run
        order = np.lexsort((candidates, -df[candidates]))
        candidates = candidates[order[:top]]
    return np.sort(candidates)


def _auto_tier(token_ids: np.ndarray, lengths: np.ndarray, vocabulary: list[str], n_rows: int,
               top_words: int, top_pairs: int, notes: list[str]) -> tuple[list[sp.csr_matrix], list[str]]:
    """Row-presence indicators of the most common words and adjacent pairs (counted by rows, not tokens), as
    row-compressed blocks."""
    n_vocab = len(vocabulary)
    if len(token_ids) == 0 or n_vocab == 0:
        return [], []
    # tokens are already in row order: the CSR is (ones, token ids, row offsets), no COO copy; int8 data and
    # int32 indices keep the intermediates small (only which word is in which row matters)
    # (sum_duplicates sorts the index array in place: it gets its own copy, token_ids keeps the word order)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    presence = sp.csr_matrix((np.ones(len(token_ids), dtype=np.int8), token_ids.astype(np.int32), indptr),
                             shape=(n_rows, n_vocab))
    presence.sum_duplicates()
    df = np.bincount(presence.indices, minlength=n_vocab)
    word_cols = _top_columns(df, n_rows, top_words)
    words = _columns(presence, word_cols)
    del presence
    names = [f"word:{vocabulary[i]}" for i in word_cols]

    # pairs, over the most common words only (a pair is in no more rows than either word)
    cand = _top_columns(df, n_rows + 1, PAIR_CANDIDATE_WORDS)
    n_cand = len(cand)
    rank = np.full(n_vocab, -1, dtype=np.int32)
    rank[cand] = np.arange(n_cand, dtype=np.int32)
    left, right = rank[token_ids[:-1]], rank[token_ids[1:]]
    keep = (left >= 0) & (right >= 0)
    bounds = indptr[1:-1]
    keep[bounds[(bounds > 0) & (bounds < len(token_ids))] - 1] = False  # a pair never spans two rows (rows
    # with no words at the end share the last boundary, past which there is no pair to drop)
    if not keep.any() or top_pairs <= 0:
        return [words], names
    keys = (left[keep].astype(np.int64) * n_cand + right[keep]).astype(np.int32)
    before = np.concatenate([[0], np.cumsum(keep)])  # kept pairs before each token position
    pair_indptr = before[np.minimum(indptr, len(keep))]
    del left, right, keep
    pair_presence = sp.csr_matrix((np.ones(len(keys), dtype=np.int8), keys, pair_indptr),
                                  shape=(n_rows, n_cand * n_cand))
    pair_presence.sum_duplicates()
    pair_df = np.bincount(pair_presence.indices, minlength=n_cand * n_cand)
    pair_cols = _top_columns(pair_df, n_rows, top_pairs)
    if n_cand < np.count_nonzero(df) and len(pair_cols) == top_pairs:
        weakest = pair_df[pair_cols].min()
        if df[cand].min() > weakest:  # a pair of two rarer words could have made the cut: say so
            notes.append(f"pairs counted over the {n_cand} most common words only")
    pairs = _columns(pair_presence, pair_cols)
    del pair_presence
    pair_names = [f"pair:{vocabulary[cand[c // n_cand]]} {vocabulary[cand[c % n_cand]]}" for c in pair_cols]
    return [words, pairs], names + pair_names


def check_user_features(features: Any) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    """`features=` as a dict of name -> callable, or a ConfigError that shows the right shape."""
    if features is not None and not isinstance(features, Mapping):
        raise ConfigError(f"features is a {type(features).__name__}; it maps a name to a function row -> number. "
                          "Fix: features={\"my_feature\": lambda row: len(row['final_text'])}")
    user = dict(features or {})
    for name, fn in user.items():
        if not isinstance(name, str) or not callable(fn):
            raise ConfigError(f"features[{name!r}] is {type(fn).__name__}: features= maps a name to a function "
                              "row -> number. Fix: features={\"my_feature\": lambda row: len(row['final_text'])}")
    return user


def extract_features(rows: Sequence[Mapping[str, Any]], row_numbers: Sequence[int],
                     features: Mapping[str, Callable[[Mapping[str, Any]], float]] | None = None, *,
                     top_words: int = AUTO_TOP_WORDS, top_pairs: int = AUTO_TOP_PAIRS,
                     trajectories: Trajectories | None = None, failure: FailureRule = DEFAULT_FAILURE) -> FeatureTable:
    """Both tiers for `rows` (already validated; `row_numbers` are their indices in the caller's input).

    `trajectories`: read_scan(rows) when the caller has it already (one read of the rows per gate, flags included).
    """
    user = check_user_features(features)
    n = len(rows)
    parts = read_scan(rows, failure) if trajectories is None or trajectories.flags is None else trajectories
    row_flags = parts.flags or []
    logprob = np.full(n, np.nan)
    marker_values: dict[str, list[float]] = {}
    user_values = {name: np.full(n, np.nan) for name in user}
    # tools numbered in order of first appearance; one C-level lookup per call
    tool_index = {name: j for j, name in enumerate(dict.fromkeys(parts.tool_names))}
    tool_cols = array("q", map(tool_index.__getitem__, parts.tool_names))
    flag_index: dict[str, int] = {}
    flag_rows, flag_cols = array("q"), array("q")
    nan = math.nan

    for i, row in enumerate(rows_progress(rows, "features")):
        if "logprobs" in row or "mean_logprob" in row:
            logprob[i] = _mean_logprob(row)
        markers = row.get("markers")
        if markers:
            is_mapping = markers.__class__ is dict or isinstance(markers, Mapping)  # (the ABC check is slow)
            for name, value in markers.items() if is_mapping else ():
                if value.__class__ is float or value.__class__ is int or value.__class__ is bool:
                    column_values = marker_values.get(name)
                    if column_values is None:
                        column_values = marker_values[name] = [nan] * n
                    column_values[i] = value
        for flag in row_flags[i]:
            flag_rows.append(i)
            flag_cols.append(flag_index.setdefault(flag, len(flag_index)))
        for name, fn in user.items():
            try:
                value = fn(row)
            except Exception as exc:  # the user's function: name the row and the feature
                raise RowError(row_numbers[i], f"features[{name!r}]",
                               f"the feature function raised {type(exc).__name__}: {exc}",
                               "make the function return a number for every row (None or NaN = missing)") from exc
            if value is not None and not isinstance(value, str):
                try:
                    user_values[name][i] = float(value)
                except (TypeError, ValueError):
                    pass
    truncated = parts.truncated.astype(np.float64)
    token_ids, lengths, surface, words_list = _scan_texts(parts.texts)
    # HAND order: length, words, tool_calls, tool_errors, turns, then the surface counts
    hand_matrix = np.column_stack([parts.lengths, lengths.astype(np.float64), parts.n_calls.astype(np.float64),
                                   parts.errors.astype(np.float64), parts.turns.astype(np.float64), surface])

    notes: list[str] = []
    dense_columns = [hand_matrix]
    dense_names = list(HAND)
    if np.isfinite(logprob).any():
        dense_columns.append(logprob[:, None])
        dense_names.append("mean_logprob")
    for name in sorted(marker_values):
        dense_columns.append(np.asarray(marker_values[name], dtype=np.float64)[:, None])
        dense_names.append(f"marker:{name}")
    for name in user:
        if not np.isfinite(user_values[name]).any():
            notes.append(f"features[{name!r}] gave no number on any row")
        dense_columns.append(user_values[name][:, None])
        dense_names.append(name)
    dense = np.hstack(dense_columns) if len(dense_columns) > 1 else hand_matrix.copy()

    tool_names = sorted(tool_index, key=tool_index.__getitem__)
    flag_names = sorted(flag_index, key=flag_index.__getitem__)
    auto, auto_names = _auto_tier(token_ids, lengths, words_list, n,
                                  top_words, top_pairs, notes)
    blocks = [sp.csr_matrix(truncated[:, None])]
    binary_names = ["truncated"]
    if tool_names:
        blocks.append(_indicator(parts.tool_rows, tool_cols, n, tool_names))
        binary_names += [f"tool:{name}" for name in tool_names]
    if flag_names:
        blocks.append(_indicator(flag_rows, flag_cols, n, flag_names))
        binary_names += [f"trace:{name}" for name in flag_names]
    blocks += auto
    binary_names += auto_names
    rows_form = sp.hstack(blocks, format="csr")
    return FeatureTable(dense=dense, dense_names=dense_names, binary=_column_form(rows_form), binary_names=binary_names,
                        trajectory=parts.hashes, notes=notes, binary_rows=rows_form)
