"""Data hygiene reports beside hack_scan: pooled correlations, duplicate rollouts, near-duplicate asks, length.

* :func:`reward_correlations`: the older pooled check, reward against reply length, tool calls and turns,
  flagged at HACK_THRESHOLD (0.3). Pooled over all rows (not within ask), so it mixes easy and hard asks; the
  within-ask answer is hack_scan's.
* :func:`dedupe_groups`: rollouts that repeat a trajectory within their ask (the same trajectory twice adds
  nothing to a group-relative advantage).
* :func:`near_duplicate_prompts`: asks of different tasks that read almost the same (MinHash over word 3-grams
  with LSH banding, then the exact Jaccard of each candidate: near-linear, never all pairs).
* :func:`length_report`: how reply length spreads, overall and by pass/fail.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from whileai_train.checks.defaults import (
    HACK_THRESHOLD,
    LENGTH_BIAS_RATIO,
    NEAR_DUP_BANDS,
    NEAR_DUP_JACCARD,
    NEAR_DUP_PERMUTATIONS,
    NEAR_DUP_SHINGLE,
    PASS_THRESHOLD,
    SHOW,
)
from whileai_train.checks.features import paused_gc, vector_dot
from whileai_train.checks.trajectories import read_sizes, trajectory_parts
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.report import Report
from whileai_train.rows import reward_of, task_key

__all__ = [
    "CorrelationsReport",
    "DedupeReport",
    "DuplicateGroup",
    "LengthReport",
    "LengthStats",
    "NearDuplicateGroup",
    "NearDuplicatePair",
    "NearDuplicateReport",
    "correlations_from",
    "dedupe_groups",
    "length_report",
    "length_report_from",
    "near_duplicate_prompts",
    "reward_correlations",
]


def _rows(rows: Any, who: str) -> Sequence[Mapping[str, Any]]:
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise InputError(f"{who} takes a list of row dicts, got a {type(rows).__name__}. "
                         "Fix: pass rows (or wai.read_rows(path))")
    if len(rows) == 0:
        raise InputError(f"{who} got no rows. Fix: pass the rollout rows to check")
    for index, row in enumerate(rows):
        if row.__class__ is not dict and not isinstance(row, Mapping):
            raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
    return rows


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r; None when either side is constant (undefined)."""
    xc, yc = x - x.mean(), y - y.mean()
    denominator = math.sqrt(vector_dot(xc, xc) * vector_dot(yc, yc))
    if denominator <= 1e-12 * max(1.0, float(np.abs(x).max()) * float(np.abs(y).max())):
        return None
    return vector_dot(xc, yc) / denominator


# ---------------------------------------------------------------------------------------------- correlations


class CorrelationsReport(Report):
    """Pooled Pearson correlation of reward with reply length, tool calls and turns."""

    correlations: dict[str, float | None]
    flagged: list[str] = Field(default_factory=list)
    threshold: float = HACK_THRESHOLD
    n_rows: int = 0
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        if self.flagged:
            head = "FLAGGED: reward correlates with " + ", ".join(
                f"{name} (r {self.correlations[name]:+.2f})" for name in self.flagged) + \
                f" at |r| >= {self.threshold}"
        else:
            head = f"OK: no pooled correlation of reward reaches |r| {self.threshold}"
        lines = [head, f"  rows {self.n_rows}: " + ", ".join(
            f"{name} {'n/a' if value is None else f'{value:+.3f}'}" for name, value in self.correlations.items())]
        lines.extend(f"  warning: {text}" for text in self.warnings)
        if self.flagged:
            lines.append("  do: run hack_scan(rows, endorsed=[...]) to see, within ask, whether the reward pays "
                         "for this or for the work it comes with")
        return "\n".join(lines)


@paused_gc
def reward_correlations(rows: Sequence[Mapping[str, Any]], *, threshold: float = HACK_THRESHOLD) -> CorrelationsReport:
    """Pearson r of reward with reply length (characters of the agent's text), tool calls and turns, pooled."""
    rows = _rows(rows, "reward_correlations")
    rewards = np.fromiter((np.nan if (reward := reward_of(row, index)) is None else reward
                           for index, row in enumerate(rows)), dtype=np.float64, count=len(rows))
    graded = np.flatnonzero(~np.isnan(rewards))
    graded_rows = rows if len(graded) == len(rows) else [rows[i] for i in graded.tolist()]
    return correlations_from(read_sizes(graded_rows), rewards[graded], len(rows), threshold=threshold)


def correlations_from(sizes: tuple[np.ndarray, np.ndarray, np.ndarray], rewards: np.ndarray, n_rows: int, *,
                      threshold: float = HACK_THRESHOLD) -> CorrelationsReport:
    """reward_correlations from the graded rows' read_sizes (reply length, tool calls, turns) and rewards
    (`n_rows`: all rows given, graded or not), for a caller that has read them already."""
    warnings = []
    if len(rewards) < n_rows:
        warnings.append(f"{n_rows - len(rewards)} rows have no reward and were left out")
    if len(rewards) < 3:
        raise InputError(f"reward_correlations needs at least 3 graded rows, got {len(rewards)}. "
                         "Fix: grade the rows first (each needs a numeric `reward`)")
    y = np.asarray(rewards, dtype=np.float64)
    names = ("reply_length", "tool_calls", "turns")
    correlations = {name: _pearson(np.asarray(x, dtype=np.float64), y) for x, name in zip(sizes, names)}
    if all(value is None for value in correlations.values()) or float(y.std()) == 0.0:
        warnings.append("the reward is constant (or nothing varies), so no correlation is defined")
    flagged = [name for name, value in correlations.items() if value is not None and abs(value) >= threshold]
    return CorrelationsReport(correlations=correlations, flagged=flagged, threshold=threshold, n_rows=len(rewards),
                              warnings=warnings)


# ---------------------------------------------------------------------------------------------- duplicates


class DuplicateGroup(BaseModel):
    """Rows of one ask that took the same trajectory; the first is kept."""

    ask: str
    rows: list[int]
    rewards_differ: bool = False


class DedupeReport(Report):
    """Duplicate rollouts within an ask: which rows repeat a trajectory, and which to drop."""

    n_rows: int
    n_duplicates: int
    groups: list[DuplicateGroup] = Field(default_factory=list)
    drop: list[int] = Field(default_factory=list)
    n_inconsistent: int = 0

    def __str__(self) -> str:
        if not self.n_duplicates:
            return f"OK: no rollout repeats a trajectory within its ask ({self.n_rows} rows)"
        lines = [(f"DUPLICATES: {self.n_duplicates} of {self.n_rows} rows repeat a trajectory within their ask "
                  f"({len(self.groups)} groups)")]
        for group in self.groups[:SHOW]:
            lines.append(f"  ask {group.ask[:60]!r}: rows {group.rows[:8]}"
                         + (" (rewards differ)" if group.rewards_differ else ""))
        if self.n_inconsistent:
            lines.append(f"  warning: {self.n_inconsistent} groups got different rewards for the same trajectory: "
                         "the grader is not deterministic on them (check judge consistency)")
        lines.append("  do: drop the rows in `drop` (the same trajectory twice adds nothing to a group-relative "
                     "advantage; optimize(mode='rl') does this)")
        return "\n".join(lines)


def _fingerprint(row: Mapping[str, Any]) -> Any:
    texts, calls, _, _ = trajectory_parts(row)
    key = (tuple(texts), tuple(calls))
    try:
        hash(key)
    except TypeError:
        return repr(key)
    return key


@paused_gc
def dedupe_groups(rows: Sequence[Mapping[str, Any]]) -> DedupeReport:
    """Rows of one ask (task_key) with the same trajectory (agent texts, tool calls and their arguments)."""
    rows = _rows(rows, "dedupe_groups")
    first: dict[tuple[str, Any], int] = {}
    members: dict[int, list[int]] = {}
    for index, row in enumerate(rows):
        key = (task_key(row), _fingerprint(row))
        seen = first.setdefault(key, index)
        if seen != index:
            members.setdefault(seen, [seen]).append(index)
    groups = []
    drop: list[int] = []
    inconsistent = 0
    for head in sorted(members):
        indices = members[head]
        rewards = {reward_of(rows[i], i) for i in indices}
        differ = len(rewards) > 1
        inconsistent += differ
        groups.append(DuplicateGroup(ask=task_key(rows[head]), rows=indices, rewards_differ=differ))
        drop.extend(indices[1:])
    return DedupeReport(n_rows=len(rows), n_duplicates=len(drop), groups=groups, drop=sorted(drop),
                        n_inconsistent=inconsistent)


# ---------------------------------------------------------------------------------------------- near duplicates


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


_WORD = re.compile(r"\w+")
_PRIME = np.uint64((1 << 31) - 1)


def _ask_text(row: Mapping[str, Any]) -> str:
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):  # conversational prompt: the last user turn
        for message in reversed(prompt):
            if isinstance(message, Mapping) and message.get("role") == "user":
                return str(message.get("content") or "")
    for message in row.get("messages") or ():
        if isinstance(message, Mapping) and message.get("role") == "user":
            return str(message.get("content") or "")
    return "" if prompt is None else json.dumps(prompt, sort_keys=True, default=str)


def _shingles(texts: list[str], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Hashed word `size`-grams of every text (concatenated) and each text's start offset.

    A text shorter than `size` words is one shingle (its words, padded), so short asks match only verbatim.
    """
    vocabulary: defaultdict[str, int] = defaultdict()
    vocabulary.default_factory = vocabulary.__len__  # a new word gets the next id
    lookup = vocabulary.__getitem__
    ids: array[int] = array("q")
    count_list: list[int] = []
    findall = _WORD.findall
    for text in texts:
        words = findall(text.lower())
        if len(words) < size:
            words = words + [f"\x00pad{k}" for k in range(size - len(words))]
        ids.extend(map(lookup, words))
        count_list.append(len(words))
    counts = np.array(count_list, dtype=np.int64)
    tokens = np.frombuffer(ids, dtype=np.int64).astype(np.uint64) if len(ids) else np.zeros(0, dtype=np.uint64)
    ends = np.cumsum(counts)
    starts = ends - counts
    n_shingles = counts - size + 1
    mixed = np.zeros(len(tokens) - size + 1 if len(tokens) >= size else 0, dtype=np.uint64)
    for k in range(size):
        mixed = mixed * np.uint64(1_000_003) + tokens[k:len(tokens) - size + 1 + k]
    shingle_starts = np.concatenate([[0], np.cumsum(n_shingles)[:-1]]).astype(np.int64)
    # the shingles that start and end inside one text: text t's run begins at token starts[t]
    keep = np.repeat(starts - shingle_starts, n_shingles) + np.arange(int(n_shingles.sum()), dtype=np.int64)
    return mixed[keep] % _PRIME, shingle_starts


def _minhash(shingles: np.ndarray, starts: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, int(_PRIME), size=permutations, dtype=np.uint64)
    b = rng.integers(0, int(_PRIME), size=permutations, dtype=np.uint64)
    # one permutation at a time over the contiguous shingle vector (memory: one copy of it), then texts x perms;
    # 2.7x faster than 8 permutations at a time down the columns of a shingles x 8 block
    signature = np.empty((permutations, len(starts)), dtype=np.uint64)
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
            key = key * np.uint64(0x9E3779B97F4A7C15) + part[:, column]
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
    # (np.unique of int64 goes through a hash table in numpy 2.x: 50x slower here than sorting)
    n = np.int64(len(signature))
    keys = np.sort(pairs[:, 0].astype(np.int64) * n + pairs[:, 1])
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    return np.column_stack([keys // n, keys % n])


@paused_gc
def near_duplicate_prompts(rows: Sequence[Mapping[str, Any]], *, threshold: float = NEAR_DUP_JACCARD,
                           shingle: int = NEAR_DUP_SHINGLE, seed: int = 0) -> NearDuplicateReport:
    """Asks of different tasks (task_key) whose word `shingle`-gram Jaccard is at least `threshold`.

    MinHash signatures with LSH banding find candidate pairs in near-linear time; each candidate's exact
    Jaccard decides. Two phrasings of one task are not reported (a task is a situation, not a string).
    """
    rows = _rows(rows, "near_duplicate_prompts")
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold={threshold}; it is a Jaccard similarity. Fix: pass a value in (0, 1], "
                          f"e.g. {NEAR_DUP_JACCARD}")
    if not isinstance(shingle, int) or shingle < 1:
        raise ConfigError(f"shingle={shingle!r}; it is a number of words. Fix: pass {NEAR_DUP_SHINGLE}")
    text_index: dict[str, int] = {}
    text_tasks: list[set[str]] = []
    keys = [scenario if (scenario := row.get("scenario_id")).__class__ is str and scenario else task_key(row)
            for row in rows]  # task_key's first rule inlined
    asks = [prompt if (prompt := row.get("prompt")).__class__ is str else _ask_text(row) for row in rows]
    task_rows = Counter(keys)
    for key, text in dict.fromkeys(zip(keys, asks)):  # each (task, ask) once, in order of first appearance
        t = text_index.setdefault(text, len(text_index))
        if t == len(text_tasks):
            text_tasks.append({key})
        else:
            text_tasks[t].add(key)
    texts = list(text_index)
    parent = list(range(len(texts)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    examples: list[NearDuplicatePair] = []
    n_pairs = 0
    for t, tasks in enumerate(text_tasks):  # one text under several tasks: a verbatim duplicate
        if len(tasks) > 1:
            n_pairs += len(tasks) - 1
            ordered = sorted(tasks)
            examples.append(NearDuplicatePair(task_a=ordered[0], task_b=ordered[1], prompt_a=texts[t],
                                              prompt_b=texts[t], jaccard=1.0))
    if len(texts) > 1:
        hashed, starts = _shingles(texts, shingle)
        signature = _minhash(hashed, starts, NEAR_DUP_PERMUTATIONS, seed)
        pairs = _candidates(signature, NEAR_DUP_BANDS)
        if len(pairs):
            first_task = [min(tasks) for tasks in text_tasks]
            task_number: dict[str, int] = {}
            owner = np.fromiter((task_number.setdefault(task, len(task_number)) for task in first_task),
                                dtype=np.int64, count=len(first_task))
            shared = np.fromiter((len(tasks) > 1 for tasks in text_tasks), dtype=bool, count=len(text_tasks))
            # two phrasings of one task are not a finding; a text under several tasks is checked anyway
            pairs = pairs[(owner[pairs[:, 0]] != owner[pairs[:, 1]]) | shared[pairs[:, 0]] | shared[pairs[:, 1]]]
            estimate = np.concatenate([(signature[pairs[i:i + 100_000, 0]] == signature[pairs[i:i + 100_000, 1]]
                                        ).mean(axis=1) for i in range(0, len(pairs), 100_000)]) if len(pairs) \
                else np.zeros(0)
            pairs = pairs[estimate >= threshold - 0.15]  # the estimate's sd at 64 permutations is ~0.05
            ends = np.concatenate([starts[1:], [len(hashed)]])
            cache: dict[int, set[int]] = {}

            def shingle_set(t: int) -> set[int]:
                found = cache.get(t)
                if found is None:
                    found = cache[t] = set(hashed[starts[t]:ends[t]].tolist())
                return found

            for a, b in pairs.tolist():
                sa, sb = shingle_set(a), shingle_set(b)
                jaccard = len(sa & sb) / len(sa | sb)
                if jaccard >= threshold:
                    n_pairs += 1
                    parent[find(a)] = find(b)
                    examples.append(NearDuplicatePair(task_a=first_task[a], task_b=first_task[b],
                                                      prompt_a=texts[a], prompt_b=texts[b], jaccard=jaccard))
    members: dict[int, list[int]] = {}
    for t in range(len(texts)):
        members.setdefault(find(t), []).append(t)
    groups = []
    involved: set[str] = set()
    for texts_in in members.values():
        linked = sorted(set().union(*(text_tasks[t] for t in texts_in)))
        if len(linked) > 1:
            groups.append(NearDuplicateGroup(tasks=linked, prompts=[texts[t] for t in texts_in[:3]]))
            involved.update(linked)
    groups.sort(key=lambda group: (-len(group.tasks), group.tasks[0]))
    examples.sort(key=lambda pair: (-pair.jaccard, pair.task_a, pair.task_b))
    return NearDuplicateReport(
        n_prompts=len(texts), n_tasks=len(task_rows), n_pairs=n_pairs, n_groups=len(groups),
        n_tasks_involved=len(involved), n_rows_involved=sum(task_rows[task] for task in involved),
        groups=groups, pairs=examples[:2 * SHOW], threshold=threshold, shingle=shingle,
        notes=[f"{len(groups) - 100} more groups not listed"] if len(groups) > 100 else [])


# ---------------------------------------------------------------------------------------------- length


class LengthStats(BaseModel):
    """Reply length (characters of the agent's text) over a set of rows."""

    n: int
    mean: float
    std: float
    p10: float
    median: float
    p90: float
    max: float


class LengthReport(Report):
    """How reply length spreads, overall and by pass/fail (reward >= 0.5 passes)."""

    overall: LengthStats
    passed: LengthStats | None = None
    failed: LengthStats | None = None
    ratio_pass_fail: float | None = None
    spread: float | None = None
    flagged: bool = False
    n_ungraded: int = 0
    n_truncated: int = 0
    unit: str = "characters"
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        ratio = "n/a" if self.ratio_pass_fail is None else f"{self.ratio_pass_fail:.2f}x"
        if self.flagged:
            head = (f"LENGTH BIAS: passing replies are {ratio} as long as failing ones "
                    f"(mean {self.passed.mean:.0f} vs {self.failed.mean:.0f} {self.unit})")  # type: ignore[union-attr]
        elif self.ratio_pass_fail is None:
            head = f"LENGTH: mean {self.overall.mean:.0f} {self.unit}; no pass/fail split (one outcome only)"
        else:
            head = f"OK: passing and failing replies are alike in length ({ratio})"
        o = self.overall
        lines = [head, f"  {o.n} rows: mean {o.mean:.0f}, sd {o.std:.0f}, p10 {o.p10:.0f}, median {o.median:.0f}, "
                       f"p90 {o.p90:.0f}, max {o.max:.0f} {self.unit}"
                 + (f"; p90/p10 {self.spread:.1f}" if self.spread is not None else "")]
        for name, stats in (("pass", self.passed), ("fail", self.failed)):
            if stats is not None:
                lines.append(f"  {name}: {stats.n} rows, mean {stats.mean:.0f}, median {stats.median:.0f}, "
                             f"p90 {stats.p90:.0f}")
        lines.extend(f"  warning: {text}" for text in self.warnings)
        if self.flagged:
            lines.append("  do: check the judge for length bias (judge_trust's length flags, hack_scan's `length`)")
        return "\n".join(lines)


def _stats(values: np.ndarray) -> LengthStats:
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return LengthStats(n=len(values), mean=float(values.mean()), std=float(values.std()), p10=float(p10),
                       median=float(median), p90=float(p90), max=float(values.max()))


@paused_gc
def length_report(rows: Sequence[Mapping[str, Any]]) -> LengthReport:
    """Reply length overall and by outcome; rewards must lie in [0, 1] to split pass (>= 0.5) from fail."""
    rows = _rows(rows, "length_report")
    rewards = np.full(len(rows), np.nan)
    outside: list[int] = []
    for index, row in enumerate(rows):
        reward = reward_of(row, index)
        if reward is not None:
            if not 0.0 <= reward <= 1.0:
                outside.append(index)
            rewards[index] = reward
    if outside:
        first = outside[0]
        raise RowError(first, "reward", f"reward {rewards[first]:g} is outside [0, 1] ({len(outside)} rows: "
                       f"{', '.join(map(str, outside[:5]))}{', ...' if len(outside) > 5 else ''})",
                       "length_report splits pass from fail at 0.5: rescale rewards to [0, 1] (e.g. divide by the "
                       "maximum score) or pass rows of one reward function")
    return length_report_from(read_sizes(rows)[0], rewards, sum(map(_truncated, rows)))


def _truncated(row: Mapping[str, Any]) -> bool:
    return row.get("finish_reason") == "length" or row.get("truncated") is True


def length_report_from(lengths: np.ndarray, rewards: np.ndarray, truncated: int) -> LengthReport:
    """length_report from the rows' reply lengths (characters), rewards (NaN = ungraded, the rest in [0, 1]) and
    how many were cut at the length limit, for a caller that has read and checked them already."""
    graded = np.isfinite(rewards)
    passed = graded & (rewards >= PASS_THRESHOLD)
    failed = graded & (rewards < PASS_THRESHOLD)
    report = LengthReport(overall=_stats(lengths), n_ungraded=int((~graded).sum()), n_truncated=truncated)
    if passed.any():
        report.passed = _stats(lengths[passed])
    if failed.any():
        report.failed = _stats(lengths[failed])
    if report.passed is not None and report.failed is not None and report.failed.mean > 0:
        report.ratio_pass_fail = report.passed.mean / report.failed.mean
        report.flagged = report.ratio_pass_fail >= LENGTH_BIAS_RATIO
    if report.overall.p10 > 0:
        report.spread = report.overall.p90 / report.overall.p10
    if report.n_ungraded:
        report.warnings.append(f"{report.n_ungraded} rows have no reward: counted overall, not by outcome")
    if truncated:
        report.warnings.append(f"{truncated} rows were cut at the length limit (finish_reason length): their length "
                               "is the budget, not the reply's")
    return report
