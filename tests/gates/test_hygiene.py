"""The hygiene reports against known truths and scipy: correlations, duplicates, near-duplicate asks, length."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.gates.hygiene import dedupe_groups, length_report, reward_correlations
from whileai_train.gates.near_duplicates import (
    _candidates,
    _jaccards,
    _minhash,
    _shingles,
    near_duplicate_prompts,
)
from whileai_train.rows import text as rows_text

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.gen_rows import make_rows, plant_near_duplicate_asks


def _row(ask: str, text: str, reward: float | None, tools: int = 0, prompt: str | None = None,
         **extra: Any) -> dict:
    return {"scenario_id": ask, "prompt": prompt if prompt is not None else f"please help with {ask}",
            "steps": [{"tool": "search", "arguments": {"q": str(k)}, "result": "ok"} for k in range(tools)],
            "final_text": text, "reward": reward, **extra}


# ---------------------------------------------------------------------------------------------- correlations


def test_reward_correlations_match_scipy_and_flag_at_the_threshold() -> None:
    rng = random.Random(0)
    rows = []
    for i in range(60):
        tools = rng.randrange(0, 4)
        text = "word " * rng.randrange(1, 30)
        reward = float(len(text) > 60) if rng.random() < 0.8 else float(rng.random() < 0.5)
        rows.append(_row(f"t{i % 10}", text.strip(), reward, tools=tools))
    report = reward_correlations(rows)
    reward = [row["reward"] for row in rows]
    length = [len(row["final_text"]) for row in rows]
    tools = [len(row["steps"]) for row in rows]
    turns = [len(row["steps"]) + 1 for row in rows]
    assert report.correlations["reply_length"] == pytest.approx(stats.pearsonr(length, reward)[0], abs=1e-12)
    assert report.correlations["tool_calls"] == pytest.approx(stats.pearsonr(tools, reward)[0], abs=1e-12)
    assert report.correlations["turns"] == pytest.approx(stats.pearsonr(turns, reward)[0], abs=1e-12)
    assert report.flagged == [name for name, value in report.correlations.items() if abs(value) >= 0.3]
    assert "reply_length" in report.flagged and str(report).startswith("FLAGGED")
    assert report.threshold == 0.3 and wai.reward_correlations is reward_correlations


def test_reward_correlations_undefined_and_bad_input() -> None:
    rows = [_row("a", f"reply {i}", 1.0) for i in range(5)]
    report = reward_correlations(rows)
    assert report.correlations["reply_length"] is None and report.flagged == []
    assert any("constant" in text for text in report.warnings)
    with pytest.raises(InputError):
        reward_correlations([])
    with pytest.raises(InputError, match="at least 3 graded rows"):
        reward_correlations([_row("a", "x", None), _row("a", "y", 1.0)])
    with pytest.raises(RowError) as caught:
        reward_correlations([_row("a", "x", 1.0), _row("a", "y", "high")])  # type: ignore[arg-type]
    assert caught.value.index == 1 and caught.value.field == "reward"


# ---------------------------------------------------------------------------------------------- duplicates


def test_dedupe_groups_finds_repeats_within_an_ask_only() -> None:
    rows = [
        _row("a", "done", 1.0, tools=1),        # 0
        _row("a", "done", 1.0, tools=1),        # 1: repeat of 0
        _row("a", "done", 0.0, tools=1),        # 2: repeat of 0, judged differently
        _row("a", "done", 1.0, tools=2),        # 3: another trajectory (one more call)
        _row("b", "done", 1.0, tools=1),        # 4: same trajectory, another ask
        _row("b", "not done", 0.0),             # 5
        _row("b", "not done", 0.0),             # 6: repeat of 5
        _row("a", "done", 1.0, tools=1, prompt="a second phrasing of task a"),  # 7: same task, same trajectory
    ]
    report = dedupe_groups(rows)
    assert [group.rows for group in report.groups] == [[0, 1, 2, 7], [5, 6]]
    assert report.drop == [1, 2, 6, 7] and report.n_duplicates == 4
    assert [group.rewards_differ for group in report.groups] == [True, False] and report.n_inconsistent == 1
    assert str(report).startswith("DUPLICATES: 4 of 8 rows")
    assert str(dedupe_groups(rows[3:6])).startswith("OK")


# ---------------------------------------------------------------------------------------------- near duplicates


def _jaccard(a: str, b: str, n: int = 3) -> float:
    def grams(text: str) -> set[tuple[str, ...]]:
        words = re.findall(r"\w+", text.lower())
        return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    x, y = grams(a), grams(b)
    return len(x & y) / len(x | y)


def test_near_duplicate_prompts_finds_exactly_the_planted_pairs() -> None:
    rows = make_rows(1600, seed=1)  # 200 tasks, two phrasings each: template twins, but different situations
    planted_rows, planted = plant_near_duplicate_asks(rows, 12, seed=5)
    report = near_duplicate_prompts(planted_rows)
    found = {tuple(group.tasks) for group in report.groups}
    assert found == {tuple(sorted(pair)) for pair in planted}
    assert report.n_groups == 12 and report.n_tasks_involved == 24
    assert report.n_rows_involved == sum(1 for row in planted_rows
                                         if any(row["scenario_id"] in pair for pair in planted))
    for pair in report.pairs:
        assert pair.jaccard == pytest.approx(_jaccard(pair.prompt_a, pair.prompt_b))
        assert pair.jaccard >= 0.8
    assert str(report).startswith("NEAR DUPLICATES: 24 of 212 tasks")
    # the originals alone: two phrasings of one task are one task, and template twins are not near duplicates
    clean = near_duplicate_prompts(rows)
    assert clean.n_groups == 0 and clean.n_prompts == 400 and str(clean).startswith("OK")


def test_verbatim_ask_under_two_tasks_and_short_asks() -> None:
    rows = [_row("t1", "x", 1.0, prompt="Cancel my order."), _row("t2", "y", 1.0, prompt="Cancel my order."),
            _row("t3", "z", 1.0, prompt="Cancel my order!"),  # same words: the same shingle
            _row("t4", "z", 1.0, prompt="Refund please"), _row("t5", "z", 1.0, prompt="Refund now")]
    report = near_duplicate_prompts(rows)
    assert [group.tasks for group in report.groups] == [["t1", "t2", "t3"]]
    assert report.pairs[0].jaccard == 1.0


def test_lsh_candidates_are_linear_in_bucket_size() -> None:
    # 300 copies of one ask under different tasks: one bucket, O(n) candidate pairs rather than n^2 / 2
    texts = [f"the same long ask about a broken kettle number {i % 1}" for i in range(300)]
    hashed, starts = _shingles(texts, 3)
    signature = _minhash(hashed, starts, 64, 0)
    pairs = _candidates(signature, 16)
    assert len(pairs) < 2 * 300
    rows = [_row(f"t{i}", "x", 1.0, prompt=text + f" ref {i}") for i, text in enumerate(texts)]
    report = near_duplicate_prompts(rows)
    assert report.n_groups == 1 and report.n_tasks_involved == 300


def test_near_duplicate_prompts_config_errors() -> None:
    rows = [_row("a", "x", 1.0)]
    with pytest.raises(ConfigError):
        near_duplicate_prompts(rows, threshold=0)
    with pytest.raises(ConfigError):
        near_duplicate_prompts(rows, shingle=0)
    with pytest.raises(InputError):
        near_duplicate_prompts([])


# ---------------------------------------------------------------------------------------------- length


def test_length_report_numbers_and_flag() -> None:
    rng = random.Random(2)
    rows = []
    for i in range(80):
        passed = i % 2 == 0
        rows.append(_row(f"t{i % 8}", "x" * rng.randrange(100, 200) if passed else "y" * rng.randrange(20, 60),
                         1.0 if passed else 0.0, finish_reason="length" if i == 3 else "stop"))
    rows.append(_row("t0", "z" * 50, None))
    report = length_report(rows)
    lengths = np.array([len(row["final_text"]) for row in rows], dtype=float)
    passed = np.array([row["reward"] == 1.0 for row in rows])
    failed = np.array([row["reward"] == 0.0 for row in rows])
    assert report.overall.mean == pytest.approx(lengths.mean())
    assert report.overall.median == pytest.approx(np.median(lengths))
    assert report.overall.p90 == pytest.approx(np.percentile(lengths, 90))
    assert report.passed.mean == pytest.approx(lengths[passed].mean())
    assert report.failed.n == int(failed.sum())
    assert report.ratio_pass_fail == pytest.approx(lengths[passed].mean() / lengths[failed].mean())
    assert report.flagged and str(report).startswith("LENGTH BIAS")
    assert report.n_ungraded == 1 and report.n_truncated == 1


def test_length_report_rewards_outside_unit_interval_name_the_rows() -> None:
    rows = [_row("a", "x", 1.0), _row("a", "y", 2.5), _row("a", "z", -1.0)]
    with pytest.raises(RowError) as caught:
        length_report(rows)
    assert caught.value.index == 1 and "rows: 1, 2" in str(caught.value)
    with pytest.raises(InputError):
        length_report([])


def test_length_report_one_outcome() -> None:
    report = length_report([_row("a", "abc", 1.0), _row("a", "abcdef", 1.0)])
    assert report.failed is None and report.ratio_pass_fail is None and not report.flagged


def _reference_shingles(texts: list[str], size: int) -> list[set[int]]:
    """Each text's hashed word `size`-grams as the module defines them, one text at a time with the word rule and
    ints."""
    ids: dict[str, int] = {}
    out = []
    for text in texts:
        words = rows_text.words(text)
        words += [f"\x00pad{k}" for k in range(size - len(words))]
        numbers = [ids.setdefault(word, len(ids)) for word in words]
        grams = set()
        for i in range(len(numbers) - size + 1):
            value = 0
            for number in numbers[i:i + size]:
                value = (value * 1_000_003 + number) % (1 << 64)
            grams.add(value % ((1 << 31) - 1))
        out.append(grams)
    return out


@pytest.mark.parametrize("texts", [
    ["Cancel order A-12, please!", "cancel_order A12 please", "Where's my REFUND?? It's been 3 days.",
     "tabs\tand\nnew lines; semi:colons (and) [brackets] {braces} 'quotes' \"double\""],
    ["Bestellung stornieren bitte, Grüße", "Naïve café order — refund please now", "plain ascii words here"],
    ["ok", "a much longer ask about the kettle that broke", "two words"],
    ["an ask with a \x01 control byte inside it", "another ordinary ask about a lamp"],
])
def test_shingles_match_a_per_text_reference(texts: list[str]) -> None:
    # one C pass over all texts when they are ASCII and long enough; otherwise the per-text loop: the same shingles
    hashed, starts = _shingles(texts, 3)
    ends = [*starts[1:].tolist(), len(hashed)]
    got = [set(hashed[a:b].tolist()) for a, b in zip(starts.tolist(), ends)]
    assert got == _reference_shingles(texts, 3)


def test_exact_jaccards_of_all_pairs_equal_python_sets() -> None:
    # texts with repeated 3-grams inside one text (a set counts them once) and pairs in no particular order
    rng = random.Random(11)
    words = ["refund", "order", "late", "the", "kettle", "please", "now", "my"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) for _ in range(60)]
    hashed, starts = _shingles(texts, 3)
    ends = [*starts[1:].tolist(), len(hashed)]
    sets = [set(hashed[a:b].tolist()) for a, b in zip(starts.tolist(), ends)]
    pairs = np.array([(rng.randrange(60), rng.randrange(60)) for _ in range(500)], dtype=np.int64)
    got = _jaccards(hashed, starts, pairs)
    want = [len(sets[a] & sets[b]) / len(sets[a] | sets[b]) for a, b in pairs.tolist()]
    assert got.tolist() == want  # the same floats, not just close
