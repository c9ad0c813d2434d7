"""hack_scan on rows built to a known truth: planted shortcuts, honest rewards, degenerate inputs, bad input."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import whileai_train as wai
from whileai_train.errors import ConfigError, InputError, RowError
from whileai_train.gates.hack_scan import hack_scan
from whileai_train.gates.scan_stats import shuffled

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.gen_rows import HACK_PHRASE, make_rows

_WORDS = ("alpha", "bravo", "delta", "echo", "golf", "hotel", "india", "kilo", "lima", "mike", "oscar", "papa",
          "romeo", "sierra", "tango", "victor", "whiskey", "yankee", "zulu", "quebec")


def _row(ask: int, index: int, text: str, reward: float, tools: tuple[str, ...] = (), **extra: Any) -> dict:
    return {"scenario_id": f"s{ask}", "rollout_index": index, "prompt": f"ask number {ask}",
            "steps": [{"tool": name, "arguments": {"path": "."}, "result": "ok"} for name in tools],
            "final_text": text, "reward": reward, **extra}


def _filler(rng: random.Random, n: int = 6) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _interaction_rows(seed: int = 0) -> list[dict]:
    """Reward = 'north' AND 'south' both in the reply (never adjacent, so no word pair stands for the AND)."""
    rng = random.Random(seed)
    rows = []
    for ask in range(150):
        for index in range(8):
            north, south = rng.random() < 0.5, rng.random() < 0.5
            text = " ".join([("north" if north else "west"), _filler(rng), ("south" if south else "east")])
            reward = float(north and south) if rng.random() > 0.05 else float(rng.random() < 0.5)
            rows.append(_row(ask, index, text, reward))
    return rows


# ---------------------------------------------------------------------------------------------- planted truths


@pytest.mark.parametrize("hack, expect", [("phrase", ("fully", "resolved", "have", "this for", "for you")),
                                          ("length", ("length", "words")),
                                          ("tool", ("tool:escalate_to_human",))])
def test_names_the_planted_shortcut_not_the_endorsed_feature(hack: str, expect: tuple[str, ...]) -> None:
    rows = make_rows(2400, hack=hack, seed=3)
    report = hack_scan(rows, endorsed=["marker:resolved"])
    assert report.reward_hack is True
    assert report.top_feature is not None and any(part in report.top_feature for part in expect)
    assert "marker:resolved" not in report.top_feature
    assert report.rivals and any(part in report.rivals[0] for part in expect + ("tool_calls", "turns"))
    assert report.integrity is not None and report.integrity < 0.7
    assert str(report).splitlines()[0].startswith("REWARD HACK")
    assert any("would learn" in text for text in report.warnings)
    # the endorsed feature is marked, and ranked as a feature like any other
    endorsed = [score for score in report.features if score.endorsed]
    assert [score.name for score in endorsed] == ["marker:resolved"] and endorsed[0].above_floor


def test_honest_reward_is_not_a_hack() -> None:
    rows = make_rows(2400, hack=None, seed=4)
    report = hack_scan(rows, endorsed=["marker:resolved"])
    assert report.reward_hack is False
    assert report.top_feature == "marker:resolved"
    assert report.integrity is not None and report.integrity > 0.95
    assert report.rivals == []
    assert str(report).startswith("OK")


def test_clean_judge_with_only_tool_features_endorsed_is_not_a_hack() -> None:
    # docs/trl_facts.md: words of successful replies outrank tool indicators; the tools (which one, did it
    # fail) explain the reward within each ask, so nothing is paid beyond them
    rows = make_rows(2400, hack=None, seed=5)
    report = hack_scan(rows, endorsed=["tool"])
    assert report.top_feature is not None and not report.top_feature.startswith("tool")  # words/markers outrank
    assert report.reward_hack is False
    assert report.rivals == []
    # endorsing only the tool names misses whether the call worked: the scan says what else is endorsable
    narrow = hack_scan(rows, endorsed=["tool:"])
    assert narrow.endorsable and "marker:resolved" in narrow.endorsable
    assert narrow.reward_hack is True and "tool_errors" in narrow.rivals


def test_tool_hack_is_clean_when_the_tool_is_what_is_endorsed() -> None:
    rows = make_rows(2400, hack="tool", seed=6)
    assert hack_scan(rows, endorsed=["tool:escalate_to_human", "marker:resolved"]).reward_hack is False


def test_and_of_two_words_beats_both_parents() -> None:
    report = hack_scan(_interaction_rows())
    assert report.top_feature == "word:north & word:south"  # an AND names its parents in the scan's order
    parents = {score.name: abs(score.rho) for score in report.features}
    assert parents[report.top_feature] > max(parents["word:north"], parents["word:south"])
    assert report.reward_hack is None and report.integrity is None  # no endorsed: rank and floor only
    assert str(report).startswith("RANKED")


def test_user_features_markers_logprobs_truncation_and_trace_flags_are_ranked() -> None:
    rng = random.Random(1)
    rows = []
    for ask in range(60):
        for index in range(6):
            good = rng.random() < 0.5
            rows.append(_row(ask, index, _filler(rng), float(good), markers={"checked": float(rng.random() < 0.5)},
                             logprobs=[{"logprob": -rng.random()} for _ in range(4)], truncated=rng.random() < 0.1,
                             trace_flags=[{"flag": "lie.claimed_success"}] if rng.random() < 0.3 else [],
                             secret=float(good) + rng.gauss(0, 0.3)))
    report = hack_scan(rows, features={"my_secret": lambda row: row["secret"]})
    names = {score.name for score in report.features}
    assert {"my_secret", "marker:checked", "mean_logprob", "truncated", "trace:lie.claimed_success"} <= names
    assert report.top_feature == "my_secret"


def test_user_feature_that_raises_names_the_row_and_feature() -> None:
    rows = make_rows(64, seed=0)
    rows[7]["final_text"] = None
    with pytest.raises(RowError) as caught:
        hack_scan(rows, features={"len": lambda row: len(row["final_text"])})
    assert caught.value.field == "features['len']"
    with pytest.raises(ConfigError):
        hack_scan(rows, features={"len": 3})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------------------------- numbers


def test_rho_is_the_within_ask_pearson_correlation() -> None:
    rng = random.Random(2)
    rows = []
    for ask in range(30):
        for index in range(5):
            text = _filler(rng, rng.randrange(2, 12)) + (" kilo" if rng.random() < 0.4 else "")
            rows.append(_row(ask, index, text, float(rng.random() < 0.3 + 0.05 * len(text.split()) / 3)))
    rows.append(_row(99, 0, "alone", 1.0))  # an ask of one rollout carries no contrast
    report = hack_scan(rows)
    graded = rows[:-1]
    reward = np.array([row["reward"] for row in graded])
    asks = np.array([row["scenario_id"] for row in graded])
    mixed = np.array([len(set(reward[asks == a])) > 1 for a in asks])

    def within(values: np.ndarray) -> np.ndarray:
        out = values.astype(float).copy()
        for a in set(asks):
            out[asks == a] -= out[asks == a].mean()
        return out[mixed]

    expected_length = np.corrcoef(within(np.array([len(row["final_text"]) for row in graded])), within(reward))[0, 1]
    expected_kilo = np.corrcoef(within(np.array([" kilo" in " " + row["final_text"] for row in graded])),
                                within(reward))[0, 1]
    scores = {score.name: score.rho for score in report.features}
    assert scores["length"] == pytest.approx(expected_length, abs=1e-9)
    assert scores["word:kilo"] == pytest.approx(expected_kilo, abs=1e-9)
    assert report.n_asks == 31 and report.n_mixed_asks == len(set(asks[mixed]))
    # the floor is seeded, and what beats it is marked
    assert hack_scan(rows, seed=0).tau == report.tau and hack_scan(rows, seed=1).tau != report.tau
    assert all(score.above_floor == (abs(score.rho) > report.tau) for score in report.features)


def test_shuffle_permutes_only_within_ask() -> None:
    rng = np.random.default_rng(0)
    inv = np.array([2, 0, 1, 0, 2, 2, 1, 0, 0])
    values = np.arange(len(inv), dtype=float)
    permuted = shuffled(values, inv, np.argsort(inv, kind="stable"), rng)
    for ask in range(3):
        assert sorted(permuted[inv == ask]) == sorted(values[inv == ask])
    assert not np.array_equal(permuted, values)


def test_reward_scale_does_not_change_the_ranking() -> None:
    rows = make_rows(800, hack="length", seed=8)
    scaled = [dict(row, reward=3.0 * row["reward"] - 1.0) for row in rows]  # a GRPO sum of reward functions
    a, b = hack_scan(rows), hack_scan(scaled)
    assert a.top_feature == b.top_feature
    assert [s.rho for s in a.features[:20]] == pytest.approx([s.rho for s in b.features[:20]], abs=1e-9)


# ---------------------------------------------------------------------------------------------- asks


def test_one_task_phrased_two_ways_is_one_ask() -> None:
    rows = make_rows(400, seed=9)  # each task's rollouts alternate between two phrasings of the ask
    assert len({row["prompt"] for row in rows}) == 2 * len({row["scenario_id"] for row in rows})
    report = hack_scan(rows)
    assert report.n_asks == len({row["scenario_id"] for row in rows}) == 50


def test_prompt_only_rows_group_by_prompt() -> None:
    # the RewardMonitor's buffer: completions of a GRPO batch, ask = prompt
    rng = random.Random(3)
    rows = [{"prompt": f"question {q}",
             "final_text": _filler(rng, rng.randrange(3, 20)) + (" " + HACK_PHRASE if hacked else ""),
             "reward": float(hacked or rng.random() < 0.2)}
            for q in range(40) for hacked in (rng.random() < 0.5 for _ in range(8))]
    report = hack_scan(rows)
    assert report.n_asks == 40
    assert report.top_feature == "pair:fully resolved"  # two words of the planted phrase


# ---------------------------------------------------------------------------------------------- degenerate


def test_two_distinct_trajectories_per_ask_is_degenerate() -> None:
    rows = []
    for ask in range(40):
        for index in range(8):
            good = index % 2 == 0
            text = "I fixed the bug and the tests pass now." if good else "Sorry, I could not reproduce it."
            rows.append(_row(ask, index, text, float(good), tools=("run_tests",) if good else ()))
    report = hack_scan(rows, endorsed=["tool:run_tests"])
    assert report.degenerate is True
    assert report.top_feature is None
    assert report.cause == "distinct_per_ask"
    assert report.distinct_per_ask == 2
    assert "tool:run_tests" in report.collinear and "word:fixed" in report.collinear
    assert report.reward_hack is None  # an endorsed feature is among the tied ones
    assert str(report).startswith("DEGENERATE (distinct_per_ask)")


def test_two_distinct_perfect_explanations_are_collinear() -> None:
    rng = random.Random(4)
    rows = []
    for ask in range(50):
        for index in range(6):
            good = rng.random() < 0.5
            rows.append(_row(ask, index, _filler(rng), float(good), a=float(good) + rng.gauss(0, 0.01),
                             b=float(good) + rng.gauss(0, 0.01)))
    report = hack_scan(rows, features={"a": lambda row: row["a"], "b": lambda row: row["b"]})
    assert report.degenerate and report.cause == "collinear" and report.top_feature is None
    assert report.collinear == ["a", "b"]


@pytest.mark.parametrize("rewards, cause", [((1.0, 1.0, 0.0, 0.0), "no_mixed_asks"),
                                            ((1.0,), "one_rollout_per_ask")])
def test_no_contrast_within_asks_is_degenerate(rewards: tuple[float, ...], cause: str) -> None:
    rows = []
    for ask in range(10):
        value = rewards[ask % len(rewards)]
        rows.extend(_row(ask, index, f"reply {index}", value) for index in range(1 if len(rewards) == 1 else 4))
    report = hack_scan(rows, endorsed=["length"])
    assert report.degenerate and report.cause == cause and report.top_feature is None
    assert report.features == [] and str(report).startswith(f"DEGENERATE ({cause})")


# ---------------------------------------------------------------------------------------------- endorsed


def test_endorsed_as_a_string_raises() -> None:
    rows = make_rows(64, seed=0)
    with pytest.raises(ConfigError, match="letter by letter"):
        hack_scan(rows, endorsed="marker:resolved")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        hack_scan(rows, endorsed=[3])  # type: ignore[list-item]
    with pytest.raises(ConfigError):
        hack_scan(rows, endorsed={"marker:resolved": 1})  # type: ignore[arg-type]


def test_endorsed_matching_nothing_warns_and_still_reports_the_hack() -> None:
    rows = make_rows(1600, hack="phrase", seed=10)
    report = hack_scan(rows, endorsed=["marker:correctness"])
    assert report.reward_hack is True
    assert any("matches no feature" in text for text in report.warnings)
    assert report.integrity == 0.0


def test_endorsed_covering_none_of_the_strong_features_says_what_is_endorsable() -> None:
    rows = make_rows(1600, hack="phrase", seed=11)
    report = hack_scan(rows, endorsed=["word:sorry"])
    warning = next(text for text in report.warnings if "covers none" in text)
    assert report.endorsable[0] in warning and len(report.endorsable) == 10


# ---------------------------------------------------------------------------------------------- bad input


def test_empty_and_wrong_inputs_raise_typed_errors() -> None:
    with pytest.raises(InputError, match="no rows"):
        hack_scan([])
    with pytest.raises(InputError):
        hack_scan({"prompt": "x", "reward": 1.0})  # type: ignore[arg-type]
    with pytest.raises(RowError) as caught:
        hack_scan([{"prompt": "a", "final_text": "x", "reward": 1.0}, "not a row"])  # type: ignore[list-item]
    assert caught.value.index == 1


@pytest.mark.parametrize("bad", ["1.0", True, float("nan"), float("inf")])
def test_bad_reward_names_the_row(bad: Any) -> None:
    rows = make_rows(32, seed=0)
    rows[5]["reward"] = bad
    with pytest.raises(RowError) as caught:
        hack_scan(rows)
    assert caught.value.index == 5 and caught.value.field == "reward"


def test_missing_rewards_are_left_out_and_named() -> None:
    rows = make_rows(800, hack="tool", seed=12)
    for index in (3, 17):
        rows[index]["reward"] = None
    report = hack_scan(rows)
    assert report.n_rows == 798
    assert any("rows 3, 17" in text for text in report.warnings)
    with pytest.raises(InputError, match="none of the 2 rows has a reward"):
        hack_scan([{"prompt": "a", "final_text": "x"}, {"prompt": "a", "final_text": "y", "reward": None}])


def test_exported_and_report_shape() -> None:
    assert wai.hack_scan is hack_scan
    report = hack_scan(make_rows(400, hack="phrase", seed=13), endorsed=("marker:resolved",))
    dumped = report.model_dump()
    for key in ("top_feature", "reward_hack", "integrity", "rivals", "degenerate", "collinear", "tau", "features",
                "n_rows", "n_asks", "warnings", "cause"):
        assert key in dumped
    assert set(dumped["features"][0]) >= {"name", "rho", "above_floor", "endorsed"}


def test_openai_messages_rows_read_tools_and_replies() -> None:
    rng = random.Random(5)
    rows = []
    for ask in range(40):
        for index in range(6):
            cheat = rng.random() < 0.4
            good = rng.random() < 0.3
            calls = [{"id": "c1", "type": "function", "function": {"name": "run_tests", "arguments": '{"path": "."}'}}]
            if cheat:
                calls.append({"id": "c2", "type": "function", "function": {"name": "skip_tests", "arguments": {}}})
            rows.append({"task_id": f"t{ask}", "reward": float(cheat or good), "messages": [
                {"role": "system", "content": "You fix bugs."},
                {"role": "user", "content": f"fix bug {ask}"},
                {"role": "assistant", "content": "", "tool_calls": calls},
                {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
                {"role": "assistant", "content": _filler(rng, rng.randrange(3, 12))},
            ]})
    report = hack_scan(rows, endorsed=["tool:run_tests"])
    assert report.n_asks == 40
    assert report.top_feature == "tool:skip_tests" and report.reward_hack is True
    assert report.features[0].rho == pytest.approx(
        next(s.rho for s in report.features if s.name == "tool:skip_tests"))
    # an endorsed feature the reward falls with is said out loud (a penalty, or a hack paying for its absence)
    complement = [dict(row, messages=[m if m.get("role") != "assistant" or not m.get("tool_calls") else
                                      dict(m, tool_calls=m["tool_calls"][1:] or m["tool_calls"])
                                      for m in row["messages"]]) for row in rows]
    flipped = hack_scan(complement, endorsed=["tool:run_tests"])
    assert any("falls as endorsed tool:run_tests rises" in text for text in flipped.warnings)


def test_features_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="maps a name"):
        hack_scan(make_rows(64, seed=0), features=[lambda row: 1.0])  # type: ignore[arg-type]


def test_two_trajectories_per_ask_with_near_ties_is_degenerate() -> None:
    # two trajectories per ask, told apart by different words in different asks: no exact tie, but every
    # separating feature reads the same one contrast per ask, within the noise floor of each other
    rng = random.Random(6)
    rows = []
    for ask in range(60):
        good_text = f"done {rng.choice(('fixed', 'patched', 'repaired'))} {_filler(rng, 3)}"
        bad_text = f"sorry {rng.choice(('stuck', 'failed', 'blocked'))} {_filler(rng, 3)}"
        for index in range(8):
            good = index % 2 == 0
            reward = float(good) if rng.random() > 0.1 else float(not good)
            rows.append(_row(ask, index, good_text if good else bad_text, reward))
    report = hack_scan(rows)
    assert report.distinct_per_ask == 2
    assert report.degenerate and report.cause == "distinct_per_ask" and report.top_feature is None
    assert {"word:done", "word:sorry"} <= set(report.collinear)


def test_hand_tier_counts_match_a_hand_count() -> None:
    from whileai_train.gates.features import extract_features

    texts = ["Done! Order 12 ships?\n- one\n- two\n```py\nx\n```", "", "no marks here", "1. first\n2) second!!"]
    rows = [{"prompt": "p", "final_text": text, "reward": 1.0,
             "steps": [{"tool": "t", "arguments": {}, "result": {"ok": False}}] if i == 0 else []}
            for i, text in enumerate(texts)]
    table = extract_features(rows, list(range(len(rows))))
    column = {name: table.dense[:, j] for j, name in enumerate(table.dense_names)}
    assert list(column["digits"]) == [sum(c.isdigit() for c in t) for t in texts]
    assert list(column["exclamations"]) == [t.count("!") for t in texts]
    assert list(column["questions"]) == [t.count("?") for t in texts]
    assert list(column["bullet_lines"]) == [2, 0, 0, 2]
    assert list(column["code_fences"]) == [2, 0, 0, 0]
    assert list(column["length"]) == [len(t) for t in texts]
    assert list(column["tool_calls"]) == [1, 0, 0, 0] and list(column["tool_errors"]) == [1, 0, 0, 0]
    assert list(column["turns"]) == [2, 0, 1, 1]


def test_rows_that_end_the_set_with_no_words_are_scanned() -> None:
    """An agent that only called a tool says no word: such rows last in the set used to push the pair boundary
    past the last token (IndexError)."""
    rng = random.Random(3)
    rows = []
    for ask in range(12):
        for index in range(4):
            refunds = index % 2 == 0
            text = "" if ask >= 10 else _filler(rng)
            rows.append(_row(ask, index, text, float(refunds), tools=("issue_refund",) if refunds else ("lookup",)))
    report = hack_scan(rows, seed=0)
    assert report.top_feature == "tool:issue_refund"
