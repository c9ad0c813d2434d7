"""Near-duplicate asks across tasks: MinHash over word 3-grams with LSH banding, then the exact Jaccard.

Two tasks whose asks read almost the same are one situation counted twice (it inflates the task count and
leaks across splits). Candidates come from MinHash signatures banded into buckets (near-linear, never all
pairs); each candidate's exact Jaccard of hashed shingles decides. Two phrasings of one task are not a finding:
a task is a situation, not a string.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.gates.defaults import (
    NEAR_DUP_BANDS,
    NEAR_DUP_JACCARD,
    NEAR_DUP_PERMUTATIONS,
    NEAR_DUP_SHINGLE,
    SHOW,
)
from whileai_train.report import Report
from whileai_train.rows.contract import prompt_text, task_key
from whileai_train.rows.intake import take_rows
from whileai_train.rows.text import GOLDEN, window_hashes, word_tokens
from whileai_train.stats import DEFAULT_SEED

__all__ = ["NearDuplicateGroup", "NearDuplicatePair", "NearDuplicateReport", "ask_texts", "near_duplicate_prompts",
           "near_duplicates_of"]


class NearDuplicatePair(BaseModel):
    """Two asks of different tasks that read almost the same (exact Jaccard of word 3-grams)."""

    task_a: str
    task_b: str
    prompt_a: str
    prompt_b: str
    jaccard: float


class NearDuplicateGroup(BaseModel):
    """Tasks whose asks are near duplicates of one another (linked through pairs at or over the threshold)."""

    tasks: list[str]
    prompts: list[str]


class NearDuplicateReport(Report):
    """Near-duplicate asks across different tasks."""

    n_prompts: int
    n_tasks: int
    n_pairs: int = 0
    n_groups: int = 0
    n_tasks_involved: int = 0
    n_rows_involved: int = 0
    groups: list[NearDuplicateGroup] = Field(default_factory=list)
    pairs: list[NearDuplicatePair] = Field(default_factory=list)
    threshold: float = NEAR_DUP_JACCARD
    shingle: int = NEAR_DUP_SHINGLE
    notes: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        if not self.n_groups:
            return (f"OK: no two tasks have near-duplicate asks ({self.n_prompts} distinct asks over "
                    f"{self.n_tasks} tasks; Jaccard of word {self.shingle}-grams under {self.threshold})")
        lines = [(f"NEAR DUPLICATES: {self.n_tasks_involved} of {self.n_tasks} tasks share a near-duplicate ask "
                  f"with another task ({self.n_groups} groups, {self.n_rows_involved} rows; Jaccard >= "
                  f"{self.threshold} on word {self.shingle}-grams)")]
        for pair in self.pairs[:SHOW]:
            lines.append(f"  {pair.jaccard:.2f}  {pair.task_a} ~ {pair.task_b}: {pair.prompt_a[:70]!r} / "
                         f"{pair.prompt_b[:70]!r}")
        lines.extend(f"  note: {text}" for text in self.notes)
        lines.append("  do: if these are one situation, give them one scenario_id (so every gate counts them as "
                     "one task); if they are different situations that read alike, make sure they are not split "
                     "across train and eval")
        return "\n".join(lines)


_PRIME = np.uint64((1 << 31) - 1)
_SHINGLE_BASE = 1_000_003  # the polynomial's base over word ids (window_hashes)


def _shingles(texts: list[str], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Hashed word `size`-grams of every text (concatenated) and each text's start offset.

    Words by the one word rule, numbered in order of first appearance; n-grams by the one n-gram rule
    (rows.text.window_hashes). A text shorter than `size` words is one shingle (its words, padded with words no
    text has), so short asks match only verbatim.
    """
    tokens, counts = word_tokens(texts)
    if len(counts) and counts.min() < size:  # pad the short texts, in place, so words are numbered as they come
        pads = [b"\x00pad%d" % k for k in range(size)]
        padded: list[bytes] = []
        end = 0
        for count in counts.tolist():
            padded.extend(tokens[end:end + count])
            end += count
            if count < size:
                padded.extend(pads[:size - count])
        tokens, counts = padded, np.maximum(counts, size)
    vocabulary: defaultdict[bytes, int] = defaultdict()
    vocabulary.default_factory = vocabulary.__len__  # a new word gets the next id
    ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens)).astype(np.uint64)
    hashed, first = window_hashes(ids, counts, size, _SHINGLE_BASE)
    return hashed % _PRIME, first[:-1]


def _minhash(shingles: np.ndarray, starts: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, int(_PRIME), size=permutations, dtype=np.uint64)
    b = rng.integers(0, int(_PRIME), size=permutations, dtype=np.uint64)
    # one permutation at a time over the contiguous shingle vector (memory: one copy of it), then texts x perms;
    # minima are < _PRIME < 2^31: 4 bytes each halves what the banding and the estimate read per pair
    signature = np.empty((permutations, len(starts)), dtype=np.uint32)
    for k in range(permutations):
        signature[k] = np.minimum.reduceat((shingles * a[k] + b[k]) % _PRIME, starts)
    return np.ascontiguousarray(signature.T)


def _candidates(signature: np.ndarray, bands: int) -> np.ndarray:
    """Pairs (i < j) of texts that agree on every row of at least one band; linear in texts per band."""
    rows = signature.shape[1] // bands
    found = []
    for band in range(bands):
        part = signature[:, band * rows:(band + 1) * rows]
        key = np.zeros(len(part), dtype=np.uint64)
        for column in range(rows):
            key = key * GOLDEN + part[:, column]
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        same = np.flatnonzero(sorted_key[1:] == sorted_key[:-1]) + 1
        if len(same) == 0:
            continue
        run_start = np.flatnonzero(np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]]))
        leader = order[run_start[np.searchsorted(run_start, same, side="right") - 1]]
        # each member against its bucket's first text, and against its neighbour: O(bucket), not O(bucket^2)
        found.append(np.column_stack([leader, order[same]]))
        found.append(np.column_stack([order[same - 1], order[same]]))
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.sort(np.vstack(found), axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    # unique rows in (i, j) order, as one int64 key each (i * n + j sorts the same way as the rows)
    # (sorted, not np.unique: numpy 2.x's np.unique of int64 goes through a hash table, slower here)
    n = np.int64(len(signature))
    keys = np.sort(pairs[:, 0].astype(np.int64) * n + pairs[:, 1])
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    return np.column_stack([keys // n, keys % n])



_PAIRS_PER_CHUNK = 200_000  # exact Jaccards computed at once (bounds the side-by-side shingle arrays)


def _jaccards(hashed: np.ndarray, starts: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """The exact Jaccard of each pair's shingle sets (texts a, b), every pair at once: each text's distinct
    shingles, sorted; a pair's two sets side by side under one key per pair; a shingle in both shows up twice."""
    if len(pairs) == 0:
        return np.zeros(0)
    sizes = np.diff(np.append(starts, len(hashed)))
    needed = np.zeros(len(starts), dtype=bool)  # only the texts in a pair are read
    needed[pairs.ravel()] = True
    text_of = np.repeat(np.arange(len(starts), dtype=np.uint64), sizes)
    keyed = np.sort(((text_of << np.uint64(31)) | hashed)[np.repeat(needed, sizes)])  # by text, then shingle
    keyed = keyed[np.concatenate([[True], keyed[1:] != keyed[:-1]])]  # each text's distinct shingles
    by_text, shingles = (keyed >> np.uint64(31)).astype(np.int64), keyed & np.uint64((1 << 31) - 1)
    first = np.searchsorted(by_text, np.arange(len(starts) + 1))  # text t: shingles[first[t]:first[t + 1]]
    distinct = np.diff(first)

    def side(texts: np.ndarray) -> np.ndarray:  # (pair << 31) | shingle, for each distinct shingle of each text
        counts = distinct[texts]
        pair = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
        at = first[texts][pair] + np.arange(int(counts.sum())) - (np.cumsum(counts) - counts)[pair]
        return (pair.astype(np.uint64) << np.uint64(31)) | shingles[at]  # shingles are < 2^31 (mod _PRIME)

    out = np.empty(len(pairs))
    for lo in range(0, len(pairs), _PAIRS_PER_CHUNK):
        a, b = pairs[lo:lo + _PAIRS_PER_CHUNK, 0], pairs[lo:lo + _PAIRS_PER_CHUNK, 1]
        keys = np.sort(np.concatenate([side(a), side(b)]))
        both = keys[1:][keys[1:] == keys[:-1]]
        shared = np.bincount((both >> np.uint64(31)).astype(np.int64), minlength=len(a))
        out[lo:lo + len(a)] = shared / (distinct[a] + distinct[b] - shared)
    return out


def _check_settings(threshold: float, shingle: int) -> None:
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold={threshold}; it is a Jaccard similarity. Fix: pass a value in (0, 1], "
                          f"e.g. {NEAR_DUP_JACCARD}")
    if not isinstance(shingle, int) or shingle < 1:
        raise ConfigError(f"shingle={shingle!r}; it is a number of words. Fix: pass {NEAR_DUP_SHINGLE}")


def near_duplicate_prompts(rows: Sequence[Mapping[str, Any]], *, threshold: float = NEAR_DUP_JACCARD,
                           shingle: int = NEAR_DUP_SHINGLE, seed: int = DEFAULT_SEED) -> NearDuplicateReport:
    """Asks of different tasks (task_key) whose word `shingle`-gram Jaccard is at least `threshold`.

    MinHash signatures with LSH banding find candidate pairs in near-linear time; each candidate's exact
    Jaccard decides. Two phrasings of one task are not reported (a task is a situation, not a string).
    """
    rows = take_rows(rows, "near_duplicate_prompts")
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise InputError(f"near_duplicate_prompts takes a list of row dicts, got a {type(rows).__name__}. "
                         "Fix: pass rows (or wai.read_rows(path))")
    if len(rows) == 0:
        raise InputError("near_duplicate_prompts got no rows. Fix: pass the rollout rows to check")
    _check_settings(threshold, shingle)
    number_of: dict[str, int] = {}
    task_of_row: list[int] = []
    for index, row in enumerate(rows):
        if row.__class__ is not dict and not isinstance(row, Mapping):
            raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
        key = task_key(row)
        number = number_of.get(key)
        if number is None:
            number = number_of[key] = len(number_of)
        task_of_row.append(number)
    return near_duplicates_of(task_of_row, list(number_of), ask_texts(rows), threshold=threshold, shingle=shingle,
                              seed=seed)


def ask_texts(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each row's ask (rows.prompt_text)."""
    return [prompt_text(row) for row in rows]


def near_duplicates_of(task_of_row: Sequence[int] | np.ndarray, task_names: list[str], asks: list[str], *,
                       threshold: float = NEAR_DUP_JACCARD, shingle: int = NEAR_DUP_SHINGLE,
                       seed: int = DEFAULT_SEED) -> NearDuplicateReport:
    """near_duplicate_prompts from rows read already: row i is task `task_names[task_of_row[i]]` and asks
    `asks[i]` (every name in `task_names` has a row). For a gate that has numbered the tasks (publish_gate)."""
    _check_settings(threshold, shingle)
    numbers = task_of_row.tolist() if isinstance(task_of_row, np.ndarray) else list(task_of_row)
    rows_per_task = np.bincount(np.asarray(numbers, dtype=np.int64), minlength=len(task_names))
    text_index: dict[str, int] = {}
    text_tasks: list[set[int]] = []  # per distinct ask: the tasks (numbers) that ask it
    for number, text in zip(numbers, asks):  # texts in order of first appearance
        t = text_index.setdefault(text, len(text_index))
        if t == len(text_tasks):
            text_tasks.append({number})
        else:
            text_tasks[t].add(number)
    texts = list(text_index)
    parent = list(range(len(texts)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def names(t: int) -> list[str]:
        return sorted(task_names[number] for number in text_tasks[t])

    examples: list[NearDuplicatePair] = []
    n_pairs = 0
    touched = [t for t, tasks in enumerate(text_tasks) if len(tasks) > 1]  # one text under several tasks
    for t in touched:  # a verbatim duplicate
        ordered = names(t)
        n_pairs += len(ordered) - 1
        examples.append(NearDuplicatePair(task_a=ordered[0], task_b=ordered[1], prompt_a=texts[t], prompt_b=texts[t],
                                          jaccard=1.0))
    if len(texts) > 1:
        hashed, starts = _shingles(texts, shingle)
        signature = _minhash(hashed, starts, NEAR_DUP_PERMUTATIONS, seed)
        pairs = _candidates(signature, NEAR_DUP_BANDS)
        if len(pairs):
            # a text's task for the report: the first by name (the only one, unless the text is shared)
            owner = np.fromiter((next(iter(tasks)) if len(tasks) == 1 else _first_by_name(tasks, task_names)
                                 for tasks in text_tasks), dtype=np.int64, count=len(text_tasks))
            shared = np.fromiter((len(tasks) > 1 for tasks in text_tasks), dtype=bool, count=len(text_tasks))
            # two phrasings of one task are not a finding; a text under several tasks is checked anyway
            pairs = pairs[(owner[pairs[:, 0]] != owner[pairs[:, 1]]) | shared[pairs[:, 0]] | shared[pairs[:, 1]]]
            estimate = np.concatenate([(signature[pairs[i:i + 100_000, 0]] == signature[pairs[i:i + 100_000, 1]]
                                        ).mean(axis=1) for i in range(0, len(pairs), 100_000)]) if len(pairs) \
                else np.zeros(0)
            pairs = pairs[estimate >= threshold - 0.15]  # the estimate's sd at 64 permutations is ~0.05
            jaccard = _jaccards(hashed, starts, pairs)
            for i in np.flatnonzero(jaccard >= threshold).tolist():
                a, b = int(pairs[i, 0]), int(pairs[i, 1])
                n_pairs += 1
                parent[find(a)] = find(b)
                touched += (a, b)
                examples.append(NearDuplicatePair(task_a=task_names[owner[a]], task_b=task_names[owner[b]],
                                                  prompt_a=texts[a], prompt_b=texts[b], jaccard=float(jaccard[i])))
    # only texts under several tasks or in a found pair can join tasks; every other text is its own task
    members: dict[int, list[int]] = {}
    for t in sorted(set(touched)):
        members.setdefault(find(t), []).append(t)
    groups = []
    involved: set[str] = set()
    for texts_in in members.values():
        linked = sorted({task_names[number] for t in texts_in for number in text_tasks[t]})
        if len(linked) > 1:
            groups.append(NearDuplicateGroup(tasks=linked, prompts=[texts[t] for t in texts_in[:3]]))
            involved.update(linked)
    groups.sort(key=lambda group: (-len(group.tasks), group.tasks[0]))
    examples.sort(key=lambda pair: (-pair.jaccard, pair.task_a, pair.task_b))
    row_count = dict(zip(task_names, rows_per_task.tolist()))
    return NearDuplicateReport(
        n_prompts=len(texts), n_tasks=len(task_names), n_pairs=n_pairs, n_groups=len(groups),
        n_tasks_involved=len(involved), n_rows_involved=sum(row_count[task] for task in involved),
        groups=groups, pairs=examples[:2 * SHOW], threshold=threshold, shingle=shingle,
        notes=[f"{len(groups) - 100} more groups not listed"] if len(groups) > 100 else [])


def _first_by_name(tasks: set[int], task_names: list[str]) -> int:
    """The task (number) of `tasks` whose name sorts first."""
    return min(tasks, key=task_names.__getitem__)
