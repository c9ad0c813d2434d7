"""decontaminate on rows with planted leaks: exactly the copies, near copies and same-task rows are flagged."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path

import numpy as np
import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError

VOCAB = ["order", "refund", "cancel", "flight", "hotel", "seat", "upgrade", "invoice", "address", "payment", "card",
         "delivery", "parcel", "return", "window", "aisle", "luggage", "voucher", "meal", "transfer"]
TEMPLATE = "Customer {slot} writes in. Please look up the account, check the policy, and resolve the request."


def _slot(rng: random.Random, k: int = 14) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(k))


def _sets(seed: int = 0) -> tuple[list[dict], list[dict], set[int]]:
    rng = random.Random(seed)
    evals = [{"prompt": TEMPLATE.format(slot=_slot(rng)), "task_id": f"e{i}", "answer": f"answer {i} " + _slot(rng)}
             for i in range(200)]
    rows = [{"prompt": TEMPLATE.format(slot=_slot(rng)), "task_id": f"t{i}", "final_text": "done"}
            for i in range(2000)]  # template twins: same sentences, another situation (under 80% covered)
    planted: set[int] = set()
    for j in range(10):  # verbatim, up to case, spacing and punctuation
        rows[j]["prompt"] = "  " + evals[j]["prompt"].upper().replace(",", " ;") + "!"
        planted.add(j)
    for j in range(10, 20):  # near: one word changed in the middle of a 27-word prompt
        words = evals[j]["prompt"].split()
        words[8] = "zebra"
        rows[j]["prompt"] = " ".join(words)
        planted.add(j)
    for j in range(20, 30):  # same task, unrelated text
        rows[j]["task_id"] = f"e{j + 50}"
        rows[j]["prompt"] = "something else entirely"
        planted.add(j)
    return rows, evals, planted


def test_flags_exactly_the_planted_rows() -> None:
    rows, evals, planted = _sets()
    clean, report = wai.decontaminate(rows, evals)
    assert set(report.contaminated) == planted
    assert (report.n_same_task, report.n_exact, report.n_near, report.n_semantic) == (10, 10, 10, 0)
    assert report.n_contaminated == 30 and report.hits_per_field == {"prompt": 20}
    assert len(clean) == 1970 and not report.clean
    assert all(r["task_id"] not in {rows[j]["task_id"] for j in planted} for r in clean)
    near = [o for o in report.offenders if o["rule"] == "near"]
    assert near and all(0.8 <= o["coverage"] < 1.0 for o in near)
    assert {o["eval_row"] for o in near} == set(range(10, 20))
    assert report.near_same_template == 0  # the near copies share their eval row's own words
    assert str(report).startswith("CONTAMINATED: 30 of 2000 rows")
    assert not any(isinstance(value, list) and len(value) == 1970 for value in report.model_dump().values())


def test_a_row_is_counted_once_same_task_first() -> None:
    evals = [{"prompt": "Book a window seat on the morning flight to Oslo for two adults", "task_id": "t1"}]
    rows = [{"prompt": evals[0]["prompt"], "task_id": "t1"}, {"prompt": evals[0]["prompt"], "scenario_id": "x"}]
    clean, report = wai.decontaminate(rows, evals)
    assert (report.n_same_task, report.n_exact, report.n_contaminated) == (1, 1, 2)
    assert report.offenders[0]["rule"] == "same_task" and report.offenders[1]["rule"] == "exact"


def test_one_eval_text_must_cover_not_the_union() -> None:
    a = "the traveller wants to move the flight from monday to friday and keep the same seat number"
    b = "then asks for a refund of the unused hotel night and a voucher for the missed dinner"
    evals = [{"prompt": a + " " + _slot(random.Random(1), 16), "task_id": "a"},
             {"prompt": _slot(random.Random(2), 16) + " " + b, "task_id": "b"}]
    rows = [{"prompt": a + " " + b, "task_id": "r"}]  # half from each: the union covers all of it
    clean, report = wai.decontaminate(rows, evals)
    assert report.clean and report.n_near == 0


def test_short_prompts_match_verbatim_only() -> None:
    evals = [{"prompt": "Cancel my order please", "task_id": "e1"}, {"prompt": "Where is my parcel", "task_id": "e2"}]
    rows = [{"prompt": "cancel my ORDER, please!"}, {"prompt": "Where is my parcel now"}]
    clean, report = wai.decontaminate(rows, evals)
    assert report.contaminated == [0] and report.n_exact == 1


def test_template_twins_above_the_rule_are_flagged_and_reported() -> None:
    long_template = ("Hello team, a customer called {name} needs help. Please look up the booking in the system, "
                     "check the cancellation policy for the fare class, confirm the refund amount, and reply to the "
                     "customer by email with the confirmation number and the expected refund date.")
    names = ["Alice", "Bob", "Chen", "Dara"]
    evals = [{"prompt": long_template.format(name=n), "task_id": f"e{i}"} for i, n in enumerate(names[:3])]
    rows = [{"prompt": long_template.format(name="Dara"), "task_id": "r1"}]
    clean, report = wai.decontaminate(rows, evals)
    assert report.n_near == 1 and report.near_same_template == 1 and report.near_same_template_share == 1.0
    assert "same template" in str(report)
    # with the template in more eval texts than max_eval_df the search goes by template skeleton: same answer
    clean_again, again = wai.decontaminate(rows, evals, max_eval_df=2)
    assert any("template skeleton" in note for note in again.notes)
    assert (again.n_near, again.near_same_template, again.offenders) == (1, 1, report.offenders)


def _brute_coverage(row: str, evals: list[str], n: int) -> float:
    from whileai_train.rows.text import words as split_words

    words = split_words(row)
    if len(words) < n:
        return 0.0
    grams = [tuple(words[i: i + n]) for i in range(len(words) - n + 1)]
    best = 0.0
    for text in evals:
        ew = split_words(text)
        eset = {tuple(ew[i: i + n]) for i in range(len(ew) - n + 1)}
        covered = [False] * len(words)
        for i, g in enumerate(grams):
            if g in eset:
                for j in range(i, i + n):
                    covered[j] = True
        best = max(best, sum(covered) / len(words))
    return best


@pytest.mark.parametrize(("n", "max_eval_df", "overlap"), [
    (1, 10**6, 0.6), (3, 10**6, 0.6), (8, 10**6, 0.6), (3, 1, 0.6), (3, 4, 0.6), (8, 2, 0.6), (3, 1, 0.8), (2, 2, 0.9)])
def test_near_rule_matches_a_brute_force_reading(n: int, max_eval_df: int, overlap: float) -> None:
    rng = random.Random(n)
    small = VOCAB[:6]
    evals = [" ".join(rng.choice(small) for _ in range(rng.randint(2, 20))) for _ in range(30)]
    rows = []
    for _ in range(300):
        base = rng.choice(evals).split()
        cut = rng.randint(0, len(base))
        rows.append(" ".join(base[:cut] + [rng.choice(small) for _ in range(rng.randint(0, 6))] + base[cut:]))
    exact = {" ".join(e.split()) for e in evals}
    clean, report = wai.decontaminate([{"prompt": r} for r in rows], [{"prompt": e} for e in evals], n=n, overlap=overlap,
                               max_eval_df=max_eval_df)
    expected = set()
    for i, row in enumerate(rows):
        if " ".join(row.split()) in exact:
            continue
        if _brute_coverage(row, evals, n) >= overlap:
            expected.add(i)
    near = {o["row"] for o in report.offenders if o["rule"] == "near"}
    flagged_near = set(report.contaminated) - {i for i, r in enumerate(rows) if " ".join(r.split()) in exact}
    assert flagged_near == expected
    assert near <= expected
    for hit in report.offenders:
        if hit["rule"] == "near":
            assert hit["coverage"] == pytest.approx(_brute_coverage(rows[hit["row"]], evals, n))


def test_replies_checked_against_eval_answers() -> None:
    rows, evals, _ = _sets()
    rows[100]["final_text"] = evals[5]["answer"]
    clean, report = wai.decontaminate(rows, evals, fields=("prompt", "final_text"))
    assert 100 in report.contaminated and report.hits_per_field == {"prompt": 20, "final_text": 1}
    assert wai.decontaminate(rows[:50], evals, fields="prompt").report.fields == ["prompt"]


def _embedder(texts: list[str]) -> list[list[float]]:
    """A bag of words hashed into 32 buckets: alike wordings read alike, like a (very) small embedding model."""
    out = []
    for text in texts:
        v = np.zeros(32)
        for word in text.lower().split():
            v[zlib.crc32(word.encode()) % 32] += 1.0
        out.append(v.tolist())
    return out


def test_semantic_pass_across_tasks_with_the_measured_floor() -> None:
    evals = [{"prompt": "Cancel the hotel booking for Anna and refund the card", "task_id": "e1"},
             {"prompt": "Move the flight for Ben from Monday to Friday", "task_id": "e2"},
             {"prompt": "Send the invoice for order 77 to the billing address", "task_id": "e3"}]
    rows = [{"prompt": "refund the card and cancel the hotel booking for Anna", "task_id": "t9"},  # reworded
            {"prompt": "Cancel the hotel booking for Anna and refund the card please", "task_id": "e2"},  # same task
            {"prompt": "What is the weather in Lisbon", "task_id": "t8"}]
    clean, report = wai.decontaminate(rows, evals, embedder=_embedder, similarity=0.9)
    assert report.n_same_task == 1 and report.n_semantic == 1 and report.contaminated == [0, 1]
    semantic = next(o for o in report.offenders if o["rule"] == "semantic")
    assert semantic["row"] == 0 and semantic["eval_row"] == 0 and semantic["similarity"] == pytest.approx(1.0)
    vectors = np.array(_embedder([e["prompt"] for e in evals]))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = vectors @ vectors.T
    assert report.similarity_floor == pytest.approx(np.percentile(sims[np.triu_indices(3, 1)], 99))
    assert any("question to check" in note for note in report.notes)
    clean_high, high = wai.decontaminate(rows, evals, embedder=_embedder, similarity=report.similarity_floor - 0.01)
    assert any("sits below that floor" in note for note in high.notes)
    clean_anonymous, anonymous = wai.decontaminate(rows, [{"prompt": e["prompt"]} for e in evals], embedder=_embedder)
    assert anonymous.similarity_floor is None and any("floor was not measured" in note for note in anonymous.notes)


def test_empty_or_useless_eval_source_raises(tmp_path: Path) -> None:
    rows, _, _ = _sets()
    with pytest.raises(InputError, match="holds no rows"):
        wai.decontaminate(rows, [])
    empty = tmp_path / "eval.jsonl"
    empty.write_text("")
    with pytest.raises(InputError):
        wai.decontaminate(rows, str(empty))
    with pytest.raises(InputError, match="no task ids and no text"):
        wai.decontaminate(rows, [{"other": 1}])
    with pytest.raises(InputError, match="no rows"):
        wai.decontaminate([], [{"prompt": "x"}])


def test_eval_from_jsonl_paths(tmp_path: Path) -> None:
    rows, evals, planted = _sets()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps(e) + "\n" for e in evals[:100]))
    second.write_text("".join(json.dumps(e) + "\n" for e in evals[100:]))
    clean, report = wai.decontaminate(rows, [str(first), second])
    assert set(report.contaminated) == planted and report.n_eval == 200


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"n": -3}, {"n": 2.5}, {"overlap": 0}, {"overlap": 1.5},
                                    {"similarity": 2.0}, {"fields": ()}])
def test_bad_settings_raise(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        wai.decontaminate([{"prompt": "a b c"}], [{"prompt": "a b c"}], **kwargs)


def test_messages_rows_and_no_mutation() -> None:
    import copy

    evals = [{"messages": [{"role": "system", "content": "be brief"},
                           {"role": "user", "content": "Book a window seat on the morning flight to Oslo for two"}]}]
    rows = [{"messages": [{"role": "user", "content": "book a WINDOW seat on the morning flight to Oslo for two"},
                          {"role": "assistant", "content": "Done."}]},
            {"messages": [{"role": "user", "content": "Book an aisle seat on the evening train to Bergen for one"}]}]
    before = copy.deepcopy(rows)
    clean, report = wai.decontaminate(rows, evals)
    assert report.contaminated == [0] and report.n_exact == 1
    assert rows == before and clean == [rows[1]] and clean[0] is not rows[1]


def test_rows_read_in_chunks_give_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    import whileai_train.gates.decontaminate as module

    rows, evals, planted = _sets()
    clean_whole, whole = wai.decontaminate(rows, evals)
    monkeypatch.setattr(module, "_ROW_CHUNK", 7)
    clean_chunked, chunked = wai.decontaminate(rows, evals)
    assert set(chunked.contaminated) == planted
    assert chunked.model_dump() == whole.model_dump()


def _hand_cover(positions: list[int], n: int) -> int:
    return len({w for p in positions for w in range(p, p + n)})


@pytest.mark.parametrize(("n", "overlap"), [(2, 0.5), (3, 0.8), (8, 0.8), (1, 1.0)])
def test_rare_prefix_keeps_the_longest_most_common_run_under_the_rule(n: int, overlap: float) -> None:
    """Per row, the run of most common template n-grams is the longest whose words stay under `overlap`, and the
    rest are the rare flags: checked against a per-row loop that adds n-grams one at a time."""
    from whileai_train.gates.decontaminate import _rare_prefix
    from whileai_train.rows.text import ngram_table

    rng = random.Random(n)
    texts = [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    table = ngram_table(texts, n)
    row_df = np.array([rng.choice([0, 3, 50, 51, 400]) for _ in range(len(table.hashes))])
    common = row_df > 10
    reps = np.array(sorted(rng.sample(range(len(texts)), 200)))
    rare, rest_cover = _rare_prefix(table, common, row_df, reps, overlap, n)
    in_reps = set(reps.tolist())
    for t in range(len(texts)):
        lo, hi = table.first[t], table.first[t + 1]
        mine = [i for i in range(lo, hi) if common[i]] if t in in_reps else []
        # most common first; among equal df the earlier position first (the order the code sorts in)
        mine.sort(key=lambda i: (-row_df[i], i))
        run: list[int] = []
        for i in mine:
            if _hand_cover([j - lo for j in run + [i]], n) / max(table.lengths[t], 1) >= overlap:
                break
            run.append(i)
        assert rest_cover[t] == _hand_cover([j - lo for j in run], n)
        assert set(np.flatnonzero(rare[lo:hi]) + lo) == set(mine) - set(run)


@pytest.mark.parametrize("copies", [1, 12])  # 12 eval texts hold the shared 14-gram: it counts as template text
def test_a_row_exactly_at_the_overlap_is_flagged(copies: int) -> None:
    """14 of 25 words covered meets overlap=0.56 (14 / 25 == 0.56), though 0.56 * 25 rounds to just over 14: the
    search's bounds compare as the rule does, so the row is not pruned before its coverage is read."""
    words = [f"w{i}" for i in range(25)]
    evals = [{"prompt": " ".join([*words[:14], f"tail{i}"])} for i in range(copies)]
    clean, report = wai.decontaminate([{"prompt": " ".join(words)}], evals, n=14, overlap=0.56)
    assert 14 / 25 >= 0.56 and 0.56 * 25 > 14
    assert report.n_near == 1 and report.offenders[0]["coverage"] == 14 / 25
