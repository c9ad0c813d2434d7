"""The row contract's rules, each defined once: the ask every gate reads, the word rule and its bulk path, the
walker of flat steps and the tables' counts of it, the carried stamp, one reward error, one band validator, and
gates that leave the process as they found it."""

from __future__ import annotations

import gc
import json
import random
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_info

import whileai_train as wai
from whileai_train.callbacks.reward_wrap import RewardRecorder
from whileai_train.errors import ConfigError, RowError
from whileai_train.gates.hygiene import length_report
from whileai_train.gates.near_duplicates import ask_texts
from whileai_train.judge.judge_probes import probe_row
from whileai_train.markers.trajectory import SAID, read_events
from whileai_train.rows import contract as row_rules
from whileai_train.rows.content import as_text
from whileai_train.rows.steps import final_reply_turn
from whileai_train.rows.text import mix, ngram_table, window_hashes, word_tokens, words
from whileai_train.rows.trajectory import read_trajectory
from whileai_train.tables.band import check_band
from whileai_train.tables.trajectories import flat_row_sizes, read_sizes, read_trajectories

# ---------------------------------------------------------------------------------------------- the ask

FIRST = "I have a question about my order"
SECOND = "please refund order A100 because the kettle arrived broken and leaking water everywhere"


def _two_user_turns(task: str, second: str = SECOND, first: str = FIRST) -> dict[str, Any]:
    return {"task_id": task, "prompt": [{"role": "system", "content": "You are a support agent."},
                                        {"role": "user", "content": first},
                                        {"role": "assistant", "content": "Sure, what is it?"},
                                        {"role": "user", "content": second}],
            "final_text": "Refund issued.", "reward": 1.0}


def test_the_ask_of_a_prompt_with_two_user_turns_is_its_last_user_turn() -> None:
    row = _two_user_turns("t1")
    assert row_rules.prompt_text(row) == SECOND
    assert row_rules.ask_of_prompt(row["prompt"]) == SECOND
    assert row_rules.task_key({k: v for k, v in row.items() if k != "task_id"}) == SECOND
    # in `messages` (which hold the reply too) the ask is the last user turn before the agent's first turn
    messages = {"messages": [{"role": "user", "content": FIRST}, {"role": "user", "content": SECOND},
                             {"role": "assistant", "content": "ok"}, {"role": "user", "content": "thanks"}]}
    assert row_rules.prompt_text(messages) == SECOND
    assert row_rules.prompt_text({"prompt": [{"role": "system", "content": "s"}]}) == ""


def test_every_gate_reads_the_same_ask_from_a_two_user_turn_prompt() -> None:
    row = _two_user_turns("t1")
    ask = row_rules.prompt_text(row)
    assert ask_texts([row]) == [ask]                                    # near-duplicate gate, publish_gate
    recorder = RewardRecorder()
    recorder.record("reward", {"prompts": [row["prompt"]], "completions": ["ok"]}, [1.0])
    assert recorder.drain()[0].ask == ask                               # the reward monitor's grouping
    assert probe_row("echo_ask", row)["final_text"] == ask              # judge probes

    # near-duplicates: two tasks whose last user turns match are one ask, whatever their first turns say
    same_second = [_two_user_turns("t1"), _two_user_turns("t2", first="a different opening about my account")]
    report = wai.near_duplicate_prompts(same_second)
    assert report.n_groups == 1 and report.pairs[0].jaccard == 1.0
    same_first = [_two_user_turns("t1"), _two_user_turns("t2", second="where is my parcel, it is two weeks late")]
    assert wai.near_duplicate_prompts(same_first).n_groups == 0

    # decontaminate: the eval asks the row's last user turn verbatim (exact rule); an eval asking only the first
    # user turn is not the row's ask
    evals = [{"prompt": SECOND, "task_id": "e1"}]
    assert wai.decontaminate([_two_user_turns("t1")], evals).report.n_exact == 1
    assert wai.decontaminate([_two_user_turns("t1")], [{"prompt": FIRST, "task_id": "e1"}]).report.n_exact == 0

    # selectors group by the same ask: SFT per prompt keeps one row per ask, preference pairs pair within it
    rows = [_two_user_turns("t1"), {**_two_user_turns("t1", first="hello"), "reward": 0.0}]
    kept, _ = wai.optimize(rows, mode="sft", group_by="prompt", min_reward=0.0)
    assert len(kept) == 1
    pairs = wai.build_preference_pairs(rows)
    assert len(pairs.pairs) == 1 and pairs.pairs[0]["prompt"] == ask


# ---------------------------------------------------------------------------------------------- words

_ALPHABET = (list("abcXYZ019_") + ["'", "'", "\u2019", " ", "\n", "\t", ".", ",", "!", "-", "\x00", "\x01", "\x7f"]
             + ["é", "ß", "Σ", "ς", "日本", "\u0301", "\u2014", "\u201c", "\u00a0", "İ", "\u212a", "٣", "\ud800"])


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 30)))


def test_the_word_rule_in_words() -> None:
    assert words("Don't stop: it's 'quoted', rock'n'roll!") == ["don't", "stop", "it's", "quoted", "rock'n'roll"]
    assert words("Don\u2019t") == ["don't"]  # the right single quote reads as an apostrophe
    assert words("café—naïve ''x'' a''b") == ["café", "naïve", "x", "a", "b"]
    assert words("snake_case A-12") == ["snake_case", "a", "12"]


def test_the_bulk_word_path_returns_exactly_what_the_rule_returns() -> None:
    rng = random.Random(12)
    for _ in range(400):
        texts = [_random_text(rng) for _ in range(rng.randint(1, 6))]
        tokens, counts = word_tokens(texts)
        ends = np.cumsum(counts).tolist()
        bulk = [[word.decode("utf-8") for word in tokens[end - count:end]] for end, count in zip(ends, counts.tolist())]
        assert bulk == [words(text) for text in texts], texts
    tokens, counts = word_tokens([])
    assert tokens == [] and counts.tolist() == []


def test_the_ngram_rule_windows_stay_inside_one_text() -> None:
    rng = random.Random(3)
    texts = [" ".join(rng.choice(["a", "b", "c", "don't"]) for _ in range(rng.randint(0, 9))) for _ in range(50)]
    table = ngram_table(texts, 3)
    for t, text in enumerate(texts):
        found = [hash(word.encode()) % (1 << 64) for word in words(text)]
        want = []
        for i in range(len(found) - 2):
            value = 0
            for item in found[i:i + 3]:
                value = (value * 0x100000001B3 + item) % (1 << 64)
            want.append(value)
        assert table.hashes[table.first[t]:table.first[t + 1]].tolist() == want
        assert table.lengths[t] == len(found)
        # the whole text: one window as long as the text, plus its length, mixed (0: no words)
        whole = 0
        for item in found:
            whole = (whole * 0x100000001B3 + item) % (1 << 64)
        mixed = int(mix(np.array([(whole + len(found)) % (1 << 64)], dtype=np.uint64))[0]) or 1
        assert int(table.text_hash[t]) == (mixed if found else 0)
    hashes, first = window_hashes(np.array([1, 2, 3], dtype=np.uint64), np.array([1, 2]), 2, base=10)
    assert hashes.tolist() == [23] and first.tolist() == [0, 0, 1]


# ---------------------------------------------------------------------------------------------- flat steps


def _random_step(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.45:
        step: dict[str, Any] = {"tool": rng.choice(["lookup", "refund", 7]),
                                "arguments": rng.choice([{"id": 1}, {"ids": [1, 2]}, '{"a": 1}', None])}
        if rng.random() < 0.8:
            step["result"] = rng.choice([{"ok": False}, {"error": "x"}, {"ok": True}, "Error: no", "fine", None,
                                         '{"error": 1}', 3])
        if rng.random() < 0.3:
            step["text"] = rng.choice(["calling", "", {"x": 1}])
        return step
    if kind < 0.7:
        return {"text": rng.choice(["- a\n- b", "", "thinking", 12, None])}
    if kind < 0.9:
        return {"user": "more detail"}
    return rng.choice(["not a step", 5, ["list"]])


def _random_row(rng: random.Random) -> dict[str, Any]:
    """A flat row of random steps, with a final reply that repeats the last step's text, differs from it, is
    empty, is not text, or is missing (also under TRL's `completion`)."""
    steps = [_random_step(rng) for _ in range(rng.randint(0, 5))]
    row: dict[str, Any] = {"prompt": "p", "steps": steps}
    last = next((step.get("text") for step in reversed(steps) if isinstance(step, dict) and step.get("text")), None)
    final = rng.choice([None, "Done.", "", last if isinstance(last, str) else "Done.", 3])
    if final is not None:
        row[rng.choice(["final_text", "final_text", "completion"])] = final
    return row


def test_the_tables_count_exactly_what_the_trajectory_reader_reads_of_any_steps() -> None:
    rng = random.Random(5)
    rows = [_random_row(rng) for _ in range(3000)]
    assert sum(flat_row_sizes(row) is not None for row in rows) > 1000  # the one-pass count is what is pinned here
    table = read_trajectories(rows)
    lengths, calls, turns = read_sizes(rows)
    for i, row in enumerate(rows):
        rule = read_trajectory(row).parts
        assert read_trajectory(row, events=False, errors=False).parts == rule._replace(errors=0)
        assert table.texts[i] == "\n".join(rule.texts)
        assert (table.n_calls[i], table.turns[i], table.errors[i]) == (len(rule.calls), rule.turns, rule.errors)
        assert (lengths[i], calls[i], turns[i]) == (len(table.texts[i]), len(rule.calls), rule.turns)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(), st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats()),
                       max_size=5))
def test_as_text_writes_what_the_json_rule_writes(value: dict[str, Any]) -> None:
    assert as_text(value) == json.JSONEncoder(ensure_ascii=False, default=str).encode(value)


def test_final_reply_and_agent_turns_are_two_things() -> None:
    row = {"prompt": "p", "steps": [{"text": "let me look"}, {"tool": "lookup", "arguments": {}, "result": "ok"}],
           "final_text": "Done."}
    assert row_rules.final_reply(row) == "Done."
    assert row_rules.agent_turns(row) == ["let me look", "Done."]
    chat = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "first"},
                         {"role": "tool", "content": "r"}, {"role": "assistant", "content": "last"}]}
    assert row_rules.final_reply(chat) == "last" and row_rules.agent_turns(chat) == ["first", "last"]
    trl = {"prompt": "p", "completion": [{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]}
    assert row_rules.final_reply(trl) == "b" and row_rules.agent_turns(trl) == ["a", "b"]


# ---------------------------------------------------------------------------------------------- stamp and reward


def test_the_carried_stamp_is_read_from_the_top_level_or_extra() -> None:
    stamp = {"task_id": "a", "n": 8, "pass_rate": 0.5}
    assert row_rules.carried_stamp({"calibration": stamp}) is stamp
    assert row_rules.carried_stamp({"extra": {"calibration": stamp}}) is stamp
    assert row_rules.carried_stamp({"extra": "not a mapping"}) is None
    typed = wai.calibration_of({"extra": {"calibration": stamp}})
    assert typed is not None and typed.n == 8


@pytest.mark.parametrize("bad", ["1", True, float("nan"), float("inf")])
def test_a_bad_reward_gets_one_error_text_from_every_gate(bad: Any) -> None:
    rows = [{"task_id": "a", "prompt": "p", "final_text": f"reply {i}", "reward": float(i % 2)} for i in range(6)]
    rows[3]["reward"] = bad
    fixes, problems = set(), set()
    for gate in (lambda: row_rules.reward_of(rows[3], 3), lambda: wai.hack_scan(rows), lambda: wai.pass_at(rows),
                 lambda: length_report(rows), lambda: wai.optimize(rows, mode="rl")):
        with pytest.raises(RowError) as caught:
            gate()
        assert caught.value.index == 3 and caught.value.field == "reward"
        fixes.add(caught.value.fix)
        problems.add(caught.value.problem.split(" (")[0])
    assert len(fixes) == 1 and len(problems) == 1


def test_a_reward_outside_the_unit_interval_gets_one_error_text() -> None:
    rows = [{"task_id": "a", "prompt": "p", "final_text": f"reply {i}", "reward": float(i % 2)} for i in range(6)]
    rows[2]["reward"] = 2.5
    fixes = set()
    for gate in (lambda: wai.pass_at(rows), lambda: length_report(rows), lambda: wai.optimize(rows, mode="sft")):
        with pytest.raises(RowError, match=r"outside \[0, 1\]") as caught:
            gate()
        fixes.add(caught.value.fix)
    assert len(fixes) == 1


# ---------------------------------------------------------------------------------------------- the band


def _band_rows() -> list[dict[str, Any]]:
    rows = []
    for task, passes in (("half", 4), ("low", 2), ("high", 6), ("half2", 4)):
        for i in range(8):
            rows.append({"scenario_id": task, "prompt": f"please help with {task}", "rollout_index": i,
                         "final_text": f"reply {i} for {task}", "reward": 1.0 if i < passes else 0.0})
    return rows


def test_a_zero_width_band_is_the_same_closed_interval_in_every_stage() -> None:
    rows = _band_rows()
    kept, report = wai.optimize(rows, mode="rl", band=(0.5, 0.5))
    assert {row["scenario_id"] for row in kept} == {"half", "half2"}
    assert report.dropped_asks.get("out_of_band") == 2
    gate = wai.publish_gate(rows, band=(0.5, 0.5), scan=False)
    assert gate.n_out_of_band == 2
    stages = wai.curriculum(rows, floor=0.5, solved=0.5)
    assert sorted(item.task_id for item in stages.trainable) == ["half", "half2"]


@pytest.mark.parametrize("band", [(0.6, 0.4), "x", (True, 1.0), ("0.2", 0.8), (0.2,), (-0.1, 0.5), (0.5, 1.5)])
def test_a_bad_band_is_refused_the_same_way_by_every_stage(band: Any) -> None:
    with pytest.raises(ConfigError, match="Fix:"):
        check_band(band, who="test")
    rows = _band_rows()
    for call in (lambda: wai.optimize(rows, mode="rl", band=band), lambda: wai.publish_gate(rows, band=band)):
        with pytest.raises(ConfigError, match="band="):
            call()
    if isinstance(band, tuple) and len(band) == 2:
        with pytest.raises(ConfigError, match="floor="):
            wai.curriculum(rows, floor=band[0], solved=band[1])


# ---------------------------------------------------------------------------------------------- process state


def _process_state() -> tuple[bool, float, tuple[int, ...]]:
    return gc.isenabled(), sys.getswitchinterval(), tuple(pool["num_threads"] for pool in threadpool_info()
                                                          if pool.get("user_api") == "blas")


def test_gates_change_nothing_process_wide_while_they_run() -> None:
    """The state is read from inside each gate (a feature function, an embedder, a judge the gate calls)."""
    outside = _process_state()
    seen: list[tuple[bool, float, tuple[int, ...]]] = []

    def feature(row: dict[str, Any]) -> float:
        seen.append(_process_state())
        return float(len(row["final_text"]))

    rng = random.Random(1)
    rows = [{"task_id": f"t{i % 10}", "prompt": f"ask {i % 10}", "final_text": " ".join(rng.choice("abcdef")
             for _ in range(rng.randint(1, 9))), "reward": float(rng.random() < 0.5)} for i in range(200)]
    wai.hack_scan(rows, features={"probe": feature})
    wai.optimize(rows, mode="rl", features={"probe": feature})

    def embedder(texts: list[str]) -> np.ndarray:
        seen.append(_process_state())
        return np.ones((len(texts), 4))

    wai.decontaminate(rows, [{"prompt": "ask 3 please"}], embedder=embedder)

    def judge(row: dict[str, Any]) -> float:
        seen.append(_process_state())
        return float(row["reward"])

    labelled = [{**row, "gold_reward": row["reward"]} for row in rows]
    try:
        wai.publish_gate(labelled, judge=judge)
    except wai.PublishGateError:
        pass  # a refusal is a finished run: what matters is the state the judge saw
    assert len(seen) > 400
    assert set(seen) == {outside}
    assert _process_state() == outside


def test_a_final_text_repeating_the_last_step_is_one_turn_for_every_reader() -> None:
    """The simulator's shape (the last reply both as a step and as final_text) is one turn everywhere; a final_text
    that differs from the reply the steps end on is a second turn everywhere; after a tool call it is the reply."""
    call = {"tool": "lookup", "arguments": {"order_id": "A1"}, "result": {"status": "shipped"}}
    repeated = {"prompt": "Where is A1?", "steps": [call, {"text": "It shipped."}], "final_text": "It shipped."}
    differs = {**repeated, "final_text": "It shipped on Monday."}
    after_call = {"prompt": "Where is A1?", "steps": [call], "final_text": "It shipped."}
    expected_replies = {"repeated": ["It shipped."], "differs": ["It shipped.", "It shipped on Monday."],
                        "after_call": ["It shipped."]}
    rows = {"repeated": repeated, "differs": differs, "after_call": after_call}
    for name, row in rows.items():
        replies = expected_replies[name]
        said = [m["content"] for m in row_rules.conversation(row) if m["role"] == "assistant" and not m.get("tool_calls")]
        assert said == replies, name
        assert row_rules.agent_turns(row) == replies, name
        assert [e[1] for e in read_events(row, 0) if e[0] == SAID] == replies, name
        (texts,) = read_trajectories([row]).texts
        assert texts == "\n".join(replies), name
        assert read_sizes([row])[0][0] == len("\n".join(replies)), name
    last = {"role": "assistant", "content": "It shipped."}
    assert row_rules.final_text_turn(row_rules.steps_end_with_reply(repeated["steps"]), "It shipped.") == \
        row_rules.FINAL_TEXT_REPEATED == final_reply_turn([last], "It shipped.")
    assert row_rules.final_text_turn(row_rules.steps_end_with_reply(differs["steps"]), differs["final_text"]) == \
        row_rules.FINAL_TEXT_DIFFERS == final_reply_turn([last], differs["final_text"])
    assert row_rules.steps_end_with_reply(after_call["steps"]) is None
