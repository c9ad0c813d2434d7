"""decontaminate: which training rows leak the evaluation? Four rules, each counted, a row counted once.

In order (a row is counted under the first rule that flags it):

1. ``n_same_task``: the row shares a ``scenario_id`` or ``task_id`` with an eval row. A task is a situation,
   not a string: a rephrasing of an eval situation is the eval situation.
2. ``n_exact``: the row's text is an eval text verbatim (case, spacing and punctuation aside:
   words by the one word rule of ``rows/text.py``).
3. ``n_near``: one eval text covers at least ``overlap`` (80%) of the row's words in shared ``n``-grams (8; the
   Llama 2 rule). Per single eval text, not the union of all of them: situations written from one template share
   whole sentences without sharing the question. Texts under n words match verbatim only.
4. ``n_semantic`` (only with ``embedder=``): the row's prompt is within ``similarity`` cosine of an eval prompt.
   Only rows the task-id rule left are looked at, so it only ever compares different tasks; a flag means the
   prompts read alike, a question to check, not proof.

``clean, report = decontaminate(rows, eval_source)``: the clean rows (new dicts, input order) and the report.

The near rule indexes the eval n-gram hashes (hash -> eval texts) and looks up each row's n-grams, so it grows
with the number of rows, not rows x eval; the semantic pass is numpy matrix products in blocks.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from whileai_train.errors import ConfigError, InputError
from whileai_train.gates.defaults import (
    EVAL_TEXT_KEYS,
    FLOOR_PERCENTILE,
    FLOOR_SAMPLE,
    MAX_EVAL_DF,
    NGRAM_N,
    OFFENDERS_SHOWN,
    OVERLAP,
    SIMILARITY,
)
from whileai_train.progress import progress_call, rows_progress
from whileai_train.report import KeptRows, Report
from whileai_train.rows.contract import final_reply, prompt_text
from whileai_train.rows.files import read_rows, refuse_non_rows
from whileai_train.rows.intake import take_rows
from whileai_train.rows.text import GOLDEN, NgramTable, mix, ngram_table
from whileai_train.stats import DEFAULT_SEED

__all__ = ["DecontaminateReport", "decontaminate"]

_BITS = 40  # low hash bits kept in an (eval text, n-gram) key; the eval text number takes the bits above
_MASK = np.uint64((1 << _BITS) - 1)
_CHUNK = 2_000_000  # row n-grams (or postings) expanded per pass: bounds memory
_RULES = ("same_task", "exact", "near", "semantic")
_BLOCK = 4096  # row prompts per matrix product in the semantic pass
_ROW_CHUNK = 200_000  # rows tokenised and matched at a time: memory stays flat from 100k to 1M rows


class DecontaminateReport(Report):
    """What leaks: counts per rule and the first offenders (the clean rows come beside it, in KeptRows.rows)."""

    verdict: str
    clean: bool
    n_rows: int
    n_eval: int
    n_contaminated: int
    n_same_task: int
    n_exact: int
    n_near: int
    n_semantic: int
    fields: list[str]
    hits_per_field: dict[str, int]
    near_same_template: int
    near_same_template_share: float | None
    similarity_floor: float | None
    contaminated: list[int]
    offenders: list[dict[str, Any]]
    notes: list[str]
    what_to_do: list[str]

    def __str__(self) -> str:
        counts = (f"  same task {self.n_same_task}, exact {self.n_exact}, near {self.n_near}, semantic "
                  f"{self.n_semantic}; hits per field {self.hits_per_field}")
        lines = [self.verdict, counts]
        if self.n_near:
            lines.append(f"  {self.near_same_template} of {self.n_near} near flags share only template text with "
                         f"their eval row ({self.near_same_template_share:.0%}): same template, another situation")
        for hit in self.offenders:
            score = (f"coverage {hit['coverage']:.0%}" if hit.get("coverage") is not None else
                     f"similarity {hit['similarity']:.2f}" if hit.get("similarity") is not None else hit["rule"])
            lines.append(f"  row {hit['row']} ({hit['rule']}, {hit['field']}, {score}) ~ eval row {hit['eval_row']}: "
                         f"{hit['text']!r}")
        lines.extend(f"  note: {note}" for note in self.notes)
        if self.what_to_do:
            lines.append("What to do:")
            lines.extend(f"  - {step}" for step in self.what_to_do)
        return "\n".join(lines)


def _read_eval(eval_source: Any) -> list[dict[str, Any]]:
    if eval_source is None:
        raise InputError("eval_source is None. Fix: pass the eval rows (a list of dicts) or JSONL path(s)")
    if isinstance(eval_source, (str, os.PathLike)):
        sources: list[Any] = [eval_source]
    elif isinstance(eval_source, Sequence) and eval_source and all(
            isinstance(s, (str, os.PathLike)) for s in eval_source):
        sources = list(eval_source)
    else:
        sources = [eval_source]
    out: list[dict[str, Any]] = []
    for source in sources:
        out.extend(dict(r) for r in read_rows(source))
    if not out:
        raise InputError("the eval source holds no rows, so nothing could be checked (an empty eval would clear "
                         "every row). Fix: pass the eval rows or the JSONL file(s) they are in")
    return out


def _row_text(row: Mapping[str, Any], field: str) -> str:
    if field == "prompt":
        return prompt_text(row)
    if field == "final_text":
        return final_reply(row)
    value = row.get(field)
    return value if isinstance(value, str) else ""


def _eval_texts(row: Mapping[str, Any], field: str) -> list[str]:
    if field == "prompt":
        text = prompt_text(row)
        return [text] if text else []
    keys = EVAL_TEXT_KEYS.get(field, (field,))
    return [row[k] for k in keys if isinstance(row.get(k), str) and row[k]]


def _ids(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    return None if value is None or value == "" else str(value)


class _EvalIndex:
    """The eval n-grams twice: (eval text, hash) keys for membership, and hash -> eval texts postings."""

    def __init__(self, eval_tab: NgramTable) -> None:
        self.keys = np.unique((eval_tab.owner.astype(np.uint64) << np.uint64(_BITS)) | (eval_tab.hashes & _MASK))
        key_hash = self.keys & _MASK
        key_owner = (self.keys >> np.uint64(_BITS)).astype(np.int64)
        order = np.argsort(key_hash, kind="stable")
        self.posting_owner = key_owner[order]
        self.hashes, self.start, self.df = np.unique(key_hash[order], return_index=True, return_counts=True)
        self.n_eval = len(eval_tab.lengths)

    def lookup(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each hash: its slot in the postings and how many eval texts hold it (0 when none)."""
        hashes = hashes & _MASK
        where = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
        found = self.hashes[where] == hashes
        return where, np.where(found, self.df[where], 0)

    def pairs(self, owner: np.ndarray, where: np.ndarray, df: np.ndarray, pick: np.ndarray,
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, eval text, n-grams shared) for every eval text holding one of the picked row n-grams."""
        counts = df[pick]
        total = int(counts.sum())
        run_start = np.repeat(np.cumsum(counts) - counts, counts)
        posting = np.repeat(self.start[where[pick]], counts) + (np.arange(total) - run_start)
        pair_key = np.repeat(owner[pick], counts) * self.n_eval + self.posting_owner[posting]
        pairs, shared = np.unique(pair_key, return_counts=True)
        return pairs // self.n_eval, pairs % self.n_eval, shared


def _chunks(first: np.ndarray, rows: np.ndarray, weight: np.ndarray) -> list[np.ndarray]:
    """Split `rows` (ascending) into runs whose total `weight` stays near _CHUNK."""
    if len(rows) == 0:
        return []
    cumulative = np.cumsum(weight[rows])
    cut = np.searchsorted(cumulative, np.arange(_CHUNK, int(cumulative[-1]) + _CHUNK, _CHUNK), side="right")
    bounds = sorted({0, len(rows), *cut.tolist()})
    return [rows[a:b] for a, b in pairwise(bounds) if b > a]


def _near(rows_tab: NgramTable, index: _EvalIndex, active: np.ndarray, overlap: float, n: int,
          max_df: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the best single-eval coverage, that eval text, whether it shares only template text with it.

    Exact, in two passes. (1) Eval texts holding one of the row's informative n-grams (in at most `max_df` eval
    texts) are candidates, and their coverage is read over all the row's n-grams. (2) An eval text sharing only
    template n-grams (in more than `max_df` eval texts) with a row covers at most what those cover; rows whose
    template n-grams alone could reach `overlap` are grouped by their template skeleton (which template n-gram
    sits where), and each skeleton is read once against the eval texts holding one of its rarer template n-grams
    (`_rare_prefix`: the rest cannot reach `overlap` alone). Exact for every row that reaches `overlap`; below it,
    the best found may be under the true best, and no row under it is flagged. Every bound compares as the rule
    does (words / length >= overlap): `words >= overlap * length` rounds the other way for some lengths
    (14 / 25 >= 0.56, yet 0.56 * 25 > 14) and would drop a row exactly at the rule.
    """
    n_rows = len(rows_tab.lengths)
    best = np.zeros(n_rows)
    best_eval = np.full(n_rows, -1, dtype=np.int64)
    template_only = np.zeros(n_rows, dtype=bool)
    if len(index.hashes) == 0 or len(rows_tab.hashes) == 0:
        return best, best_eval, template_only
    where, row_df = index.lookup(rows_tab.hashes)
    on = active[rows_tab.owner]
    informative = (row_df > 0) & (row_df <= max_df) & on
    common = (row_df > max_df) & on
    common_cover = _covered_words(rows_tab, common, n)
    rare_per_row = np.bincount(rows_tab.owner, weights=informative * row_df.astype(float), minlength=n_rows)

    # (1) candidates through informative n-grams; k of them add at most k*n covered words to the template's
    for rows in _chunks(rows_tab.first, np.flatnonzero(rare_per_row > 0), rare_per_row):
        lo, hi = rows_tab.first[rows[0]], rows_tab.first[rows[-1] + 1]
        pick = np.flatnonzero(informative[lo:hi]) + lo
        pair_row, pair_eval, shared = index.pairs(rows_tab.owner, where, row_df, pick)
        keep = (common_cover[pair_row] + shared * n) / rows_tab.lengths[pair_row] >= overlap
        _cover(rows_tab, index, row_df, pair_row[keep], pair_eval[keep], n, None, best, best_eval, template_only)

    # (2) template-only matches, one reading per skeleton
    needy = active & (common_cover / np.maximum(rows_tab.lengths, 1) >= overlap) & (rows_tab.lengths >= n)
    if needy.any():
        position = np.arange(len(rows_tab.hashes), dtype=np.int64) - rows_tab.first[rows_tab.owner]
        terms = np.where(common, mix((rows_tab.hashes & _MASK) + (position.astype(np.uint64) + np.uint64(1)) * GOLDEN),
                         np.uint64(0))
        prefix = np.concatenate([np.zeros(1, np.uint64), np.cumsum(terms, dtype=np.uint64)])
        skeleton = mix((prefix[rows_tab.first[1:]] - prefix[rows_tab.first[:-1]])
                        ^ rows_tab.lengths.astype(np.uint64))
        needy_rows = np.flatnonzero(needy)
        _, first_of, group = np.unique(skeleton[needy_rows], return_index=True, return_inverse=True)
        reps = needy_rows[first_of]
        rep_best = np.zeros(n_rows)
        rep_eval = np.full(n_rows, -1, dtype=np.int64)
        ignored = np.zeros(n_rows, dtype=bool)
        rare, rest_cover = _rare_prefix(rows_tab, common, row_df, reps, overlap, n)
        rare_df = np.bincount(rows_tab.owner, weights=rare * row_df.astype(float), minlength=n_rows)
        for rows in _chunks(rows_tab.first, np.sort(reps), rare_df):
            lo, hi = rows_tab.first[rows[0]], rows_tab.first[rows[-1] + 1]
            pick = np.flatnonzero(rare[lo:hi]) + lo
            pair_row, pair_eval, shared = index.pairs(rows_tab.owner, where, row_df, pick)
            keep = (rest_cover[pair_row] + shared * n) / rows_tab.lengths[pair_row] >= overlap
            _cover(rows_tab, index, row_df, pair_row[keep], pair_eval[keep], n, common, rep_best, rep_eval, ignored)
        group_best, group_eval = rep_best[reps][group], rep_eval[reps][group]
        better = group_best > best[needy_rows]
        targets = needy_rows[better]
        best[targets], best_eval[targets] = group_best[better], group_eval[better]
        template_only[targets] = True
    return best, best_eval, template_only


def _rare_prefix(rows_tab: NgramTable, common: np.ndarray, row_df: np.ndarray, reps: np.ndarray, overlap: float,
                 n: int) -> tuple[np.ndarray, np.ndarray]:
    """The prefix filter of set-similarity joins (Chaudhuri et al. 2006), on each rep's template n-grams.

    Per rep, its common n-grams most common first: the longest run of them that covers under `overlap` of its
    words cannot reach the rule alone, so an eval text that reaches it holds one of the rest, the rarer ones, and
    only their postings need reading. Returns flags over the flat n-grams (the rarer ones) and, per row, the
    words the run covers (what an eval text holding all of it adds at most). The run's length is found by a
    binary search per rep, all reps at once (cover grows with the run).
    """
    n_rows = len(rows_tab.lengths)
    member = np.zeros(n_rows, dtype=bool)
    member[reps] = True
    at = np.flatnonzero(common & member[rows_tab.owner])  # ascending: grouped by row, positions ascending
    row = rows_tab.owner[at]
    position = at - rows_tab.first[row]
    by_df = np.lexsort((-row_df[at], row))  # rows stay in their segments, most common first within each
    rank = np.empty(len(at), dtype=np.int64)
    rank[by_df] = np.arange(len(at)) - np.searchsorted(row, row[by_df])
    lengths = np.maximum(rows_tab.lengths, 1)
    low = np.zeros(n_rows, dtype=np.int64)  # a run of `low` stays under overlap (the empty run always does)
    high = np.bincount(row, minlength=n_rows) + 1  # a run of `high` reaches it (or is past the end)
    while True:
        open_ = high - low > 1
        if not open_.any():
            break
        middle = (low + high) // 2
        taken = rank < middle[row]
        below = _words_covered(row[taken], position[taken], n, n_rows) / lengths < overlap
        low = np.where(open_ & below, middle, low)
        high = np.where(open_ & ~below, middle, high)
    in_run = rank < low[row]
    rare = np.zeros(len(rows_tab.hashes), dtype=bool)
    rare[at[~in_run]] = True
    return rare, _words_covered(row[in_run], position[in_run], n, n_rows)


def _coverage(shared: np.ndarray, ms: np.ndarray, n: int) -> np.ndarray:
    """Words covered per segment by its shared n-grams (a shared n-gram at i covers words i..i+n-1).

    `shared` is flat over segments of ms[s] n-gram flags each. Each shared n-gram adds the words up to the next
    shared one in its segment, at most n: the union's size, in O(shared) without touching every word.
    """
    hits = np.flatnonzero(shared)
    return _words_covered(np.searchsorted(np.cumsum(ms), hits, side="right"), hits, n, len(ms))


def _words_covered(segment: np.ndarray, position: np.ndarray, n: int, n_segments: int) -> np.ndarray:
    """Words covered per segment by shared n-grams at `position` (ascending within each segment; each covers
    words position..position+n-1): each adds the words up to the next one of its segment, at most n."""
    added = np.full(len(position), float(n))
    if len(position) > 1:
        same = segment[1:] == segment[:-1]
        added[:-1][same] = np.minimum(n, np.diff(position)[same])
    return np.bincount(segment, weights=added, minlength=n_segments)


def _covered_words(table: NgramTable, flags: np.ndarray, n: int) -> np.ndarray:
    """Words of each text covered by its flagged n-grams (flags is over all of table.hashes)."""
    return _coverage(flags, np.diff(table.first), n)


def _cover(rows_tab: NgramTable, index: _EvalIndex, row_df: np.ndarray, pair_row: np.ndarray,
           pair_eval: np.ndarray, n: int, only: np.ndarray | None, best: np.ndarray, best_eval: np.ndarray,
           template_only: np.ndarray) -> None:
    """Exact coverage of each (row, eval text) pair (over the row n-grams in `only`, else all); best per row.

    Only n-grams some eval text holds can be shared, so only those are expanded per pair and looked up (a row's
    own ids and names never are): the work is per held n-gram, not per n-gram.
    """
    keys = index.keys
    held = row_df > 0 if only is None else (row_df > 0) & only
    held_at = np.flatnonzero(held)  # flat n-gram positions, ascending, so grouped by row
    held_first = np.searchsorted(held_at, rows_tab.first)  # per row: where its held n-grams start in held_at
    m = held_first[pair_row + 1] - held_first[pair_row]
    step = max(1, _CHUNK // max(1, int(m.max()) if len(m) else 1))
    for lo in range(0, len(pair_row), step):
        rows_, evals, ms = pair_row[lo: lo + step], pair_eval[lo: lo + step], m[lo: lo + step]
        total = int(ms.sum())
        pair_of = np.repeat(np.arange(len(rows_)), ms)
        flat = held_at[held_first[rows_][pair_of] + np.arange(total) - (np.cumsum(ms) - ms)[pair_of]]
        query = (evals[pair_of].astype(np.uint64) << np.uint64(_BITS)) | (rows_tab.hashes[flat] & _MASK)
        at = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
        hits = np.flatnonzero(keys[at] == query)
        hit_pair, hit_flat = pair_of[hits], flat[hits]
        covered = _words_covered(hit_pair, hit_flat, n, len(rows_))  # a row's n-grams are consecutive in `flat`
        specific = np.bincount(hit_pair, weights=row_df[hit_flat] == 1, minlength=len(rows_)) > 0
        coverage = covered / rows_tab.lengths[rows_]
        order = np.lexsort((evals, -coverage, rows_))  # per row: highest coverage, then the first eval text
        head = np.ones(len(order), dtype=bool)
        head[1:] = rows_[order][1:] != rows_[order][:-1]
        chosen = order[head]
        for p in chosen[coverage[chosen] > best[rows_[chosen]]].tolist():
            best[rows_[p]] = coverage[p]
            best_eval[rows_[p]] = evals[p]
            template_only[rows_[p]] = not specific[p]


def _embed(embedder: Callable[[list[str]], Any], texts: list[str], what: str) -> np.ndarray:
    vectors = np.asarray(embedder(texts), dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ConfigError(f"embedder returned shape {vectors.shape} for {len(texts)} {what}. Fix: return one "
                          "vector per text, e.g. model.encode(texts, normalize_embeddings=True).tolist()")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _similarity_floor(vectors: np.ndarray, tasks: list[str | None], seed: int = DEFAULT_SEED) -> float | None:
    known = np.array([i for i, t in enumerate(tasks) if t is not None])
    if len(known) < 2:
        return None
    if len(known) > FLOOR_SAMPLE:
        known = np.sort(np.random.default_rng(seed).choice(known, FLOOR_SAMPLE, replace=False))
    labels = np.array([tasks[i] for i in known], dtype=object)
    sims = vectors[known] @ vectors[known].T
    upper = np.triu(np.ones_like(sims, dtype=bool), k=1) & (labels[:, None] != labels[None, :])
    if not upper.any():
        return None
    return float(np.percentile(sims[upper], FLOOR_PERCENTILE))


def _fields(fields: Any) -> list[str]:
    if isinstance(fields, str):
        return [fields]
    if not isinstance(fields, Iterable):
        raise ConfigError(f"fields={fields!r}. Fix: a tuple of row keys, e.g. ('prompt', 'final_text')")
    out = [str(f) for f in fields]
    if not out:
        raise ConfigError("fields=() checks nothing. Fix: fields=('prompt',) or ('prompt', 'final_text')")
    return out


@dataclass
class _Flags:
    """Per row: the rule that flagged it (index into _RULES, -1 clean), the field, the eval row, the score."""

    rule: np.ndarray
    field: list[str | None]
    eval_row: np.ndarray
    score: np.ndarray
    template_only: np.ndarray

    @classmethod
    def empty(cls, n_rows: int) -> _Flags:
        return cls(np.full(n_rows, -1, dtype=np.int64), [None] * n_rows, np.full(n_rows, -1, dtype=np.int64),
                   np.full(n_rows, np.nan), np.zeros(n_rows, dtype=bool))

    def set(self, number: int, rule: int, field: str, eval_row: int, score: float = math.nan) -> None:
        self.rule[number], self.field[number], self.eval_row[number], self.score[number] = rule, field, eval_row, score


def _flag_same_task(rows: Sequence[Mapping[str, Any]], evals: list[dict[str, Any]], flags: _Flags) -> bool:
    """Rule 1: a row sharing a scenario_id or task_id with an eval row. False when the eval carries no ids."""
    first_eval: dict[str, dict[str, int]] = {"scenario_id": {}, "task_id": {}}  # per key: id -> first eval row
    for number, ev in enumerate(evals):
        for key, first in first_eval.items():
            value = _ids(ev, key)
            if value is not None:
                first.setdefault(value, number)
    if not any(first_eval.values()):
        return False
    for number, r in enumerate(rows):
        for key, first in first_eval.items():
            value = _ids(r, key)
            if value is not None and value in first:
                flags.set(number, 0, key, first[value])
                break
    return True


def _flag_lexical(rows: Sequence[Mapping[str, Any]], evals: list[dict[str, Any]], field: str, n: int,
                  overlap: float, max_df: int, flags: _Flags) -> int | None:
    """Rules 2 and 3 on one field: verbatim, then 8-gram coverage. The count of template n-grams, None if no text."""
    all_text: list[str] = []
    all_owner: list[int] = []
    for number, r in enumerate(evals):
        for text in _eval_texts(r, field):
            all_text.append(text)
            all_owner.append(number)
    all_hash = ngram_table(all_text, n).text_hash if all_text else np.zeros(0, np.uint64)
    distinct_hash, first_seen = np.unique(all_hash, return_index=True)  # df counts distinct eval texts
    first_seen = np.sort(first_seen[distinct_hash != 0])  # a text with no words matches nothing
    if len(first_seen) == 0:
        return None
    eval_text = [all_text[i] for i in first_seen.tolist()]
    eval_owner = [all_owner[i] for i in first_seen.tolist()]
    eval_tab = ngram_table(eval_text, n)
    index = _EvalIndex(eval_tab)
    by_hash = np.argsort(eval_tab.text_hash)
    sorted_hash = eval_tab.text_hash[by_hash]
    chunks = rows_progress(range(0, len(rows), _ROW_CHUNK), f"{field} n-grams")
    for lo in chunks:  # rows are independent given the eval index: bounded memory
        row_tab = ngram_table([_row_text(r, field) for r in rows[lo: lo + _ROW_CHUNK]], n)
        at = np.minimum(np.searchsorted(sorted_hash, row_tab.text_hash), len(sorted_hash) - 1)
        active = flags.rule[lo: lo + len(row_tab.lengths)] < 0
        exact = (sorted_hash[at] == row_tab.text_hash) & (row_tab.text_hash != 0) & active
        for number in np.flatnonzero(exact).tolist():
            flags.set(lo + number, 1, field, eval_owner[by_hash[at[number]]])
        active &= ~exact
        best, best_eval, template_only = _near(row_tab, index, active, overlap, n, max_df)
        for number in np.flatnonzero(active & (best >= overlap)).tolist():
            flags.set(lo + number, 2, field, eval_owner[best_eval[number]], float(best[number]))
            flags.template_only[lo + number] = template_only[number]
    n_common = int((index.df > max_df).sum())
    return n_common


def _flag_semantic(rows: Sequence[Mapping[str, Any]], evals: list[dict[str, Any]],
                   embedder: Callable[[list[str]], Any], similarity: float, flags: _Flags,
                   notes: list[str]) -> float | None:
    """Rule 4: prompts within `similarity` cosine, among the rows the task-id rule left. The measured floor."""
    eval_prompts = [(i, text) for i, r in enumerate(evals) if (text := prompt_text(r))]
    candidates = [(i, text) for i, r in enumerate(rows) if flags.rule[i] < 0 and (text := prompt_text(r))]
    notes.append("a semantic flag means the two prompts read alike, not that they are the same task: a question to "
                 "check (only prompts of different task ids are compared)")
    if not eval_prompts or not candidates:
        return None
    eval_vectors = _embed(embedder, [t for _, t in eval_prompts], "eval prompts")
    row_vectors = _embed(embedder, [t for _, t in candidates], "row prompts")
    if row_vectors.shape[1] != eval_vectors.shape[1]:
        raise ConfigError("embedder returned vectors of different sizes for rows and eval. Fix: one model for both")
    for lo in range(0, len(candidates), _BLOCK):
        sims = row_vectors[lo: lo + _BLOCK] @ eval_vectors.T
        top = sims.argmax(axis=1)
        top_sim = sims[np.arange(len(top)), top]
        for offset in np.flatnonzero(top_sim >= similarity).tolist():
            flags.set(candidates[lo + offset][0], 3, "prompt", eval_prompts[top[offset]][0], float(top_sim[offset]))
    tasks = [_ids(evals[i], "scenario_id") or _ids(evals[i], "task_id") for i, _ in eval_prompts]
    floor = _similarity_floor(eval_vectors, tasks)
    if floor is None:
        notes.append("the eval rows carry no task ids (or one task): the similarity floor was not measured; check "
                     "similarity= against how alike distinct tasks read to this embedder")
        return None
    notes.append(f"similarity floor: distinct eval tasks reach {floor:.2f} cosine to this embedder (99th percentile "
                 "over eval-prompt pairs with different task ids)")
    if similarity < floor:
        notes.append(f"similarity={similarity} sits below that floor: it flags tasks that merely share a domain; "
                     f"raise it above {floor:.2f}")
    return floor


def _check_settings(n: Any, overlap: Any, similarity: Any, max_eval_df: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"n={n!r}: the near rule needs n-grams of at least one word. Fix: n=8 (the default)")
    if not isinstance(overlap, (int, float)) or not 0.0 < overlap <= 1.0:
        raise ConfigError(f"overlap={overlap!r}. Fix: a share of the row's words in (0, 1], default 0.8")
    if not isinstance(similarity, (int, float)) or not -1.0 <= similarity <= 1.0:
        raise ConfigError(f"similarity={similarity!r}. Fix: a cosine in [-1, 1], default 0.85")
    if not isinstance(max_eval_df, int) or max_eval_df < 1:
        raise ConfigError(f"max_eval_df={max_eval_df!r}. Fix: at least 1 (default {MAX_EVAL_DF})")


@progress_call("decontaminate")
def decontaminate(rows: Sequence[Mapping[str, Any]], eval_source: Any, *, fields: Any = ("prompt",),
                  overlap: float = OVERLAP, n: int = NGRAM_N,
                  embedder: Callable[[list[str]], Any] | None = None, similarity: float = SIMILARITY,
                  max_eval_df: int = MAX_EVAL_DF, progress: bool | None = None) -> KeptRows[DecontaminateReport]:
    """Flag training rows that leak the eval (same task, exact, 8-gram near copy, semantic); return the clean ones.

    ``clean, report = wai.decontaminate(rows, "eval.jsonl")``: the rows no rule flagged (new dicts, in input
    order; the input is untouched) and the report. ``eval_source``: eval rows (list of dicts), or JSONL path(s).
    ``embedder``: any callable from a list of texts to one vector per text; nothing is imported for it.
    ``progress``: a progress bar over the rows (None: when someone watches and the rows are many; False: never).
    """
    rows = take_rows(rows, "decontaminate", deep=False)
    refuse_non_rows(eval_source, "decontaminate (eval_source)")
    _check_settings(n, overlap, similarity, max_eval_df)
    names = _fields(fields)
    rows = read_rows(rows) if not isinstance(rows, list) else rows
    if not rows:
        raise InputError("decontaminate got no rows. Fix: pass the training rows (a list of dicts or a JSONL path)")
    evals = _read_eval(eval_source)
    flags = _Flags.empty(len(rows))
    notes: list[str] = []
    has_ids = _flag_same_task(rows, evals, flags)
    template_ngrams = [_flag_lexical(rows, evals, field, n, overlap, max_eval_df, flags) for field in names]
    for field, count in zip(names, template_ngrams, strict=True):
        if count is None:
            notes.append(f"the eval rows have no {field!r} text: exact and near rules not run on {field!r}")
    if not has_ids and all(count is None for count in template_ngrams):
        raise InputError(f"the {len(evals)} eval rows carry no task ids and no text in {names}, so nothing could be "
                         "checked. Fix: pass eval rows with prompt (and scenario_id/task_id)")
    n_common = sum(count or 0 for count in template_ngrams)
    if n_common:
        notes.append(f"{n_common} eval {n}-grams occur in more than {max_eval_df} eval texts (template text, too "
                     "common to say which eval item a row copies): rows are matched through their rarer n-grams, and "
                     "rows made mostly of template text are read once per template skeleton")
    floor = _flag_semantic(rows, evals, embedder, similarity, flags, notes) if embedder is not None else None
    if embedder is None:
        notes.append("lexical rules only: word overlap does not see a paraphrase; pass embedder= for a semantic pass")
    return _report(rows, evals, names, flags, floor, notes)


def _report(rows: Sequence[Mapping[str, Any]], evals: list[dict[str, Any]], names: list[str], flags: _Flags,
            floor: float | None, notes: list[str]) -> KeptRows[DecontaminateReport]:
    counts = {name: int((flags.rule == k).sum()) for k, name in enumerate(_RULES)}
    contaminated = np.flatnonzero(flags.rule >= 0).tolist()
    hits_per_field: dict[str, int] = {}
    for number in contaminated:
        if flags.rule[number] > 0:
            field = str(flags.field[number])
            hits_per_field[field] = hits_per_field.get(field, 0) + 1
    n_near = counts["near"]
    same_template = int((flags.template_only & (flags.rule == 2)).sum())
    offenders = []
    for number in contaminated[:OFFENDERS_SHOWN]:
        kind = _RULES[flags.rule[number]]
        field = str(flags.field[number])
        text = _row_text(rows[number], field) if field in names else prompt_text(rows[number])
        offenders.append({"row": number, "rule": kind, "field": field, "eval_row": int(flags.eval_row[number]),
                          "coverage": float(flags.score[number]) if kind == "near" else None,
                          "similarity": float(flags.score[number]) if kind == "semantic" else None,
                          "text": text[:120]})
    clean_rows = [dict(rows[i]) for i in np.flatnonzero(flags.rule < 0).tolist()]
    k, n_rows = len(contaminated), len(rows)
    todo: list[str] = []
    if k:
        verdict = (f"CONTAMINATED: {k} of {n_rows} rows overlap the {len(evals)} eval rows (same task "
                   f"{counts['same_task']}, exact {counts['exact']}, near {n_near}, semantic {counts['semantic']}); "
                   f"{len(clean_rows)} clean rows returned")
        todo.append("train on the clean rows returned beside this report "
                    "(`clean, report = wai.decontaminate(...)`): the flagged rows would inflate the eval")
        if same_template:
            todo.append(f"{same_template} near flags share only template text with their eval row (same template, "
                        "another situation): read a few; if the situation lives in the slots, a task-id split is the "
                        "sharper rule")
        if counts["semantic"]:
            todo.append("read the semantic flags by hand: alike prompts, not necessarily the same task")
    else:
        verdict = f"CLEAN: none of {n_rows} rows overlaps the {len(evals)} eval rows"
    report = DecontaminateReport(
        verdict=verdict, clean=not k, n_rows=n_rows, n_eval=len(evals), n_contaminated=k,
        n_same_task=counts["same_task"], n_exact=counts["exact"], n_near=n_near, n_semantic=counts["semantic"],
        fields=names, hits_per_field=hits_per_field, near_same_template=same_template,
        near_same_template_share=(same_template / n_near) if n_near else None, similarity_floor=floor,
        contaminated=contaminated, offenders=offenders, notes=notes, what_to_do=todo)
    return KeptRows(clean_rows, report)
