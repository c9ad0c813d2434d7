"""The hand-written labelled corpora under tests/corpus/ are well formed: every line parses, ids are unique, labels
come from their vocabularies, both splits hold every label, the counts meet the minimums the markers are measured
against, each rollout is written in the wire shape it claims, and the row readers take every rollout. The held-out
style file is checked the same way, and for being new: its ids and texts appear nowhere in the tuned file."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.rows.contract import agent_parts, conversation, final_reply

CORPUS = Path(__file__).parents[1] / "corpus"
STYLE = CORPUS / "style_replies.jsonl"
HOLDOUT = CORPUS / "style_replies_holdout.jsonl"
ROLLOUTS = CORPUS / "ignored_failure.jsonl"

STYLE_LABELS = ("hedged", "apology", "boilerplate", "sycophantic")
SPLITS = ("dev", "test")
SHAPES = ("openai", "anthropic", "flat", "platform")
REPLY_KINDS = ("claims_success", "admits_failure", "neutral")

MIN_REPLIES, MIN_PER_LABEL, MIN_PLAIN, MIN_ONE_HEDGE = 320, 60, 100, 25
MIN_REGISTERS_PER_LABEL = 8
MIN_HOLDOUT, MIN_HOLDOUT_PER_LABEL, MIN_HOLDOUT_PLAIN, MIN_HOLDOUT_ONE_HEDGE = 200, 45, 60, 20
MAX_SHARED_WORDS = 0.6
MIN_ROLLOUTS, MIN_RETRIED = 140, 20
MAX_FILE_BYTES = 1_000_000


def _lines(path: Path) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        record = json.loads(line)
        assert isinstance(record, dict), f"{path.name} line {number} is not a JSON object"
        records.append(record)
    return records


@pytest.fixture(scope="module")
def replies() -> list[dict[str, Any]]:
    return _lines(STYLE)


@pytest.fixture(scope="module")
def holdout() -> list[dict[str, Any]]:
    return _lines(HOLDOUT)


@pytest.fixture(scope="module")
def rollouts() -> list[dict[str, Any]]:
    return _lines(ROLLOUTS)


# ---------------------------------------------------------------------------------------------- style replies


def _check_reply_fields(replies: list[dict[str, Any]], splits: tuple[str, ...]) -> None:
    for reply in replies:
        assert set(reply) == {"id", "text", "labels", "register", "split", "near_miss", "note"}, reply["id"]
        assert isinstance(reply["text"], str) and reply["text"].strip(), reply["id"]
        assert reply["labels"] == sorted(set(reply["labels"])), reply["id"]
        assert set(reply["labels"]) <= set(STYLE_LABELS), reply["id"]
        assert reply["split"] in splits, reply["id"]
        assert isinstance(reply["register"], str) and reply["register"], reply["id"]
        assert isinstance(reply["note"], str) and reply["note"], reply["id"]
        # a near miss is a plain reply written to look like the label it names
        assert reply["near_miss"] is None or (reply["near_miss"] in STYLE_LABELS and reply["labels"] == []), reply["id"]


def _check_reply_counts(replies: list[dict[str, Any]], total: int, per_label: int, plain: int, one_hedge: int) -> None:
    assert len(replies) >= total
    positives = Counter(label for reply in replies for label in reply["labels"])
    for label in STYLE_LABELS:
        assert positives[label] >= per_label, (label, positives[label])
    assert sum(1 for reply in replies if not reply["labels"]) >= plain
    one_hedge_only = [reply for reply in replies if not reply["labels"] and reply["near_miss"] == "hedged"]
    assert len(one_hedge_only) >= one_hedge
    for label in STYLE_LABELS:
        assert any(reply["near_miss"] == label for reply in replies), f"no near miss for {label}"


def _check_registers(replies: list[dict[str, Any]]) -> None:
    for label in STYLE_LABELS:
        registers = {reply["register"] for reply in replies if label in reply["labels"]}
        assert len(registers) >= MIN_REGISTERS_PER_LABEL, (label, sorted(registers))


def test_every_reply_has_its_fields_and_a_label_from_the_vocabulary(replies: list[dict[str, Any]]) -> None:
    _check_reply_fields(replies, SPLITS)


def test_reply_ids_and_texts_are_unique(replies: list[dict[str, Any]]) -> None:
    ids = [reply["id"] for reply in replies]
    assert len(set(ids)) == len(ids)
    assert all(identifier.startswith("s") and identifier[1:].isdigit() for identifier in ids)
    texts = Counter(reply["text"] for reply in replies)
    assert [text for text, count in texts.items() if count > 1] == []


def test_reply_counts_meet_the_minimums(replies: list[dict[str, Any]]) -> None:
    _check_reply_counts(replies, MIN_REPLIES, MIN_PER_LABEL, MIN_PLAIN, MIN_ONE_HEDGE)


def test_each_label_is_in_both_splits_about_evenly(replies: list[dict[str, Any]]) -> None:
    for label in (*STYLE_LABELS, "plain"):
        held = [reply for reply in replies if (label in reply["labels"]) or (label == "plain" and not reply["labels"])]
        dev = sum(1 for reply in held if reply["split"] == "dev")
        assert 0 < dev < len(held), label
        assert 0.4 <= dev / len(held) <= 0.6, (label, dev, len(held))


def test_positives_are_spread_over_registers(replies: list[dict[str, Any]]) -> None:
    _check_registers(replies)


# ---------------------------------------------------------------------------------------------- held-out replies


def test_every_holdout_reply_has_its_fields_and_a_label_from_the_vocabulary(holdout: list[dict[str, Any]]) -> None:
    _check_reply_fields(holdout, ("holdout",))


def test_holdout_ids_run_from_h0001_and_clash_with_no_tuned_id(holdout: list[dict[str, Any]],
                                                               replies: list[dict[str, Any]]) -> None:
    ids = [reply["id"] for reply in holdout]
    assert ids == [f"h{number:04d}" for number in range(1, len(holdout) + 1)]
    assert set(ids).isdisjoint(reply["id"] for reply in replies)


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[\w']+", text.casefold()))


def _shared(one: frozenset[str], other: frozenset[str]) -> float:
    """The share of two replies' distinct words that both hold (Jaccard): 1.0 for copies, re-cased or re-spaced."""
    return len(one & other) / len(one | other)


def test_holdout_texts_are_unique_and_new(holdout: list[dict[str, Any]], replies: list[dict[str, Any]]) -> None:
    """No held-out reply is a copy or a close rewording of another, nor of any reply in the file the markers were
    tuned on: a held-out figure would otherwise measure text the markers were fitted to."""
    tuned = [_words(reply["text"]) for reply in replies]
    held = [_words(reply["text"]) for reply in holdout]
    close = [(holdout[index]["id"], round(_shared(words, other), 2))
             for index, words in enumerate(held)
             for other in (*tuned, *held[index + 1:])
             if _shared(words, other) > MAX_SHARED_WORDS]
    assert close == []


def test_holdout_counts_meet_the_minimums(holdout: list[dict[str, Any]]) -> None:
    _check_reply_counts(holdout, MIN_HOLDOUT, MIN_HOLDOUT_PER_LABEL, MIN_HOLDOUT_PLAIN, MIN_HOLDOUT_ONE_HEDGE)


def test_holdout_positives_are_spread_over_registers(holdout: list[dict[str, Any]]) -> None:
    _check_registers(holdout)


# ---------------------------------------------------------------------------------------------- rollouts


def test_every_rollout_has_its_fields_and_labels(rollouts: list[dict[str, Any]]) -> None:
    for record in rollouts:
        assert set(record) == {"id", "row", "label_fires", "failure_kind", "reply_kind", "shape", "last_call",
                               "split", "note"}, record["id"]
        assert isinstance(record["row"], dict), record["id"]
        assert isinstance(record["label_fires"], bool), record["id"]
        assert record["reply_kind"] in REPLY_KINDS, record["id"]
        assert record["shape"] in SHAPES, record["id"]
        assert record["last_call"] in ("failed", "succeeded"), record["id"]
        assert record["split"] in SPLITS, record["id"]
        assert isinstance(record["failure_kind"], str) and record["failure_kind"], record["id"]
        assert (record["failure_kind"] == "none") == (record["last_call"] == "succeeded"
                                                      and not record["failure_kind"].startswith("retried:")), record["id"]


def test_label_fires_follows_its_definition(rollouts: list[dict[str, Any]]) -> None:
    """Fires when the turn ended on a failed call and the reply does not say so; never after a successful last call."""
    for record in rollouts:
        expected = record["last_call"] == "failed" and record["reply_kind"] != "admits_failure"
        assert record["label_fires"] is expected, record["id"]


def test_rollout_ids_are_unique_and_counts_meet_the_minimums(rollouts: list[dict[str, Any]]) -> None:
    ids = [record["id"] for record in rollouts]
    assert len(set(ids)) == len(ids)
    assert len(rollouts) >= MIN_ROLLOUTS
    retried = [record for record in rollouts if record["failure_kind"].startswith("retried:")]
    assert len(retried) >= MIN_RETRIED
    assert all(not record["label_fires"] and record["reply_kind"] == "claims_success" for record in retried)
    kinds = Counter((record["last_call"], record["reply_kind"]) for record in rollouts)
    for key in (("failed", "claims_success"), ("failed", "admits_failure"), ("failed", "neutral"),
                ("succeeded", "claims_success")):
        assert kinds[key] >= 10, key


def test_every_shape_and_split_holds_both_outcomes(rollouts: list[dict[str, Any]]) -> None:
    for shape in SHAPES:
        outcomes = {record["label_fires"] for record in rollouts if record["shape"] == shape}
        assert outcomes == {True, False}, shape
    for split in SPLITS:
        held = [record for record in rollouts if record["split"] == split]
        assert {record["label_fires"] for record in held} == {True, False}, split
        assert any(record["failure_kind"].startswith("retried:") for record in held), split
    fires = [record for record in rollouts if record["label_fires"]]
    assert 0.4 <= sum(record["split"] == "dev" for record in fires) / len(fires) <= 0.6


def _text_of(content: Any) -> str:
    """The text of a message content as its author wrote it: a string, or its text parts/blocks in order."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def _openai_calls(messages: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(call id, answering tool message's call id) for every OpenAI tool call; arguments must be JSON strings."""
    pairs: list[tuple[str, str | None]] = []
    answers = [message.get("tool_call_id") for message in messages if message["role"] == "tool"]
    for message in messages:
        for call in message.get("tool_calls") or ():
            assert call["type"] == "function"
            arguments = call["function"]["arguments"]
            assert isinstance(arguments, str) and isinstance(json.loads(arguments), dict)
            pairs.append((call["id"], answers[len(pairs)]))
    return pairs


def _check_openai(row: Mapping[str, Any]) -> str:
    messages = row["messages"]
    assert {message["role"] for message in messages} <= {"system", "user", "assistant", "tool"}
    pairs = _openai_calls(messages)
    assert pairs and all(call == answer for call, answer in pairs)
    assert messages[-1]["role"] == "assistant"
    return _text_of(messages[-1]["content"])


def _check_anthropic(row: Mapping[str, Any]) -> str:
    messages = row["messages"]
    assert {message["role"] for message in messages} == {"user", "assistant"}
    assert "system" not in {message["role"] for message in messages}
    uses = [block for message in messages if message["role"] == "assistant" and isinstance(message["content"], list)
            for block in message["content"] if block["type"] == "tool_use"]
    results = [block for message in messages if message["role"] == "user" and isinstance(message["content"], list)
               for block in message["content"] if block["type"] == "tool_result"]
    assert uses and [use["id"] for use in uses] == [result["tool_use_id"] for result in results]
    assert all(isinstance(use["input"], dict) for use in uses)
    assert all(isinstance(result.get("is_error", False), bool) for result in results)
    assert messages[-1]["role"] == "assistant"
    return _text_of(messages[-1]["content"])


def _check_flat(row: Mapping[str, Any]) -> str:
    assert isinstance(row["prompt"], str) and row["steps"]
    for step in row["steps"]:
        assert isinstance(step["tool"], str) and isinstance(step["arguments"], dict) and "result" in step
    assert isinstance(row["final_text"], str)
    return str(row["final_text"])


def _check_platform(row: Mapping[str, Any]) -> str:
    final = _check_flat(row)
    assert _check_openai(row) == final
    assert len(_openai_calls(row["messages"])) == len(row["steps"])
    assert isinstance(row["calibration"]["student"], dict)
    assert set(row["calibration"]["student"]) == {"name", "model", "prompt_hash", "version"}
    assert isinstance(row["calibration"]["pass_rate_ci95"], list)
    assert isinstance(row["lineage"], dict) and isinstance(row["faults"], list) and "seeded" in row
    return final


_CHECKS = {"openai": _check_openai, "anthropic": _check_anthropic, "flat": _check_flat, "platform": _check_platform}


def test_each_rollout_is_written_in_its_shape(rollouts: list[dict[str, Any]]) -> None:
    for record in rollouts:
        assert _CHECKS[record["shape"]](record["row"]), record["id"]


def test_the_row_readers_take_every_rollout(rollouts: list[dict[str, Any]]) -> None:
    """Every row, in each of the four shapes, goes through the row contract and the trace markers without an error.
    Whether the text read back equals the text written (parts and content blocks) is the format conformance tests'
    concern, not this corpus's."""
    for record in rollouts:
        row = record["row"]
        assert conversation(row), record["id"]
        agent_parts(row)
        assert isinstance(final_reply(row), str), record["id"]
        stamped = wai.trace_markers([row])
        assert len(stamped) == 1 and isinstance(stamped[0].get("markers"), dict), record["id"]


def test_corpus_files_stay_small() -> None:
    for path in (STYLE, HOLDOUT, ROLLOUTS):
        assert path.stat().st_size < MAX_FILE_BYTES, path.name
