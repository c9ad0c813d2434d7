"""The trace flags' quick ways are pinned to the rule they stand for.

flags_in remembers, per distinct call written as text, what the call is and the flags it raises alone (a
CallMemo for the rows of one pass), looks for an admitted failure only where a word starts, and searches a gate's
pieces in one search: each test reads the same rows without the memo, or the same texts with FAILURE_ADMITTED
itself or passes_gate, and asserts the two agree. The scan reads the rows it reads for their parts only (rows left
out, rows carrying their flags) as read_trajectories reads them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.one_reading_sample import sample
from tests.markers.test_markers_fast import TEXTS, rows
from whileai_train.gates.features import read_scan
from whileai_train.markers.defaults import FAILURE_ADMITTED, GATES, passes_gate
from whileai_train.markers.trace_flags import (
    _ADMITS_FAILURE,
    CallMemo,
    _gate_search,
    flags_in,
    flags_of,
    stamped_flags,
    trace_markers,
)
from whileai_train.markers.trajectory import read_events
from whileai_train.tables.trajectories import read_trajectories


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of `pattern` (one enclosing group opened), split where `|` stands outside any
    group, class or escape."""
    if pattern.startswith("(?:") and pattern.endswith(")"):
        pattern = pattern[3:-1]
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    assert depth == 0 and not in_class
    return [*parts, pattern[start:]]


def _group_end(text: str) -> int:
    """Where the group `text` opens with ends (the index after its closing parenthesis)."""
    depth, i = 0, 0
    while True:
        if text[i] == "\\":
            i += 2
            continue
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i


def _first_atoms(pattern: str, outer: bool = True) -> list[str]:
    """What each alternative of `pattern` can start with: past its leading lookbehinds and (`outer`: a form of the
    pattern) its \\b, a group opened into its own alternatives, down to a character, a class or an escape."""
    firsts = []
    for alternative in _alternatives(pattern):
        rest = alternative
        while rest.startswith(("(?<!", "(?<=")):  # a lookbehind reads what precedes, not where a match starts
            rest = rest[_group_end(rest):]
        if outer:
            assert rest.startswith(r"\b"), alternative
            rest = rest[2:]
        if rest.startswith("(?:"):
            end = _group_end(rest)
            assert rest[end:end + 1] not in ("?", "*"), alternative  # a group that may be skipped: read past it
            firsts += _first_atoms(rest[:end], outer=False)
        elif rest.startswith("["):
            firsts.append(rest[:rest.index("]") + 1])
        else:
            firsts.append(rest[:2] if rest.startswith("\\") else rest[:1])
    return firsts


def test_every_form_of_an_admitted_failure_starts_a_word() -> None:
    # what lets _ADMITS_FAILURE try FAILURE_ADMITTED only where a word starts: each form opens with \b and then a
    # word character (a letter, a digit, a class of them)
    firsts = _first_atoms(FAILURE_ADMITTED.pattern)
    assert len(firsts) > 20
    for first in firsts:
        assert re.fullmatch(r"[A-Za-z0-9]|\[[A-Za-z0-9]+\]|\\d", first), first


def _corpus_replies() -> list[str]:
    path = Path(__file__).parents[1] / "corpus" / "ignored_failure.jsonl"
    replies = []
    for line in path.read_text().splitlines():
        for message in json.loads(line)["row"].get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                replies.append(content)
            elif isinstance(content, list):
                replies += [block["text"] for block in content if isinstance(block, dict) and "text" in block]
    return replies


def test_the_word_start_search_finds_an_admission_where_the_pattern_does() -> None:
    replies = _corpus_replies() + TEXTS + [
        "404 not found", "returned 503", "x404 error", "it's no longer there", "don't have it", "_failed_", "(failed)",
        "n't sent", "nothing was sent", "-unable-", "I'm afraid not", "errors: none", "no errors", "fallo", "falló"]
    assert len(replies) > 300
    admitted = [bool(_ADMITS_FAILURE.search(text)) for text in replies]
    assert admitted == [bool(FAILURE_ADMITTED.search(text)) for text in replies]
    assert 50 < sum(admitted) < len(replies) - 50  # both answers occur


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="a nt'fodueilsr45\n0-_.", max_size=40))
def test_the_word_start_search_agrees_on_any_text(text: str) -> None:
    assert bool(_ADMITS_FAILURE.search(text)) == bool(FAILURE_ADMITTED.search(text))


@settings(max_examples=150, deadline=None)
@given(st.lists(rows, min_size=1, max_size=6), st.sampled_from([None, {"frobnicate": "write", "bash": "read"}]))
def test_a_pass_remembering_its_calls_flags_what_each_row_flags_alone(batch: list[dict[str, Any]],
                                                                     kinds: dict[str, str] | None) -> None:
    memo: CallMemo = {}
    for row in batch * 2:  # every call seen again, from the memo
        events = read_events(row)
        assert list(flags_in(events, kinds, memo=memo).items()) == list(flags_in(events, kinds).items())


def test_the_samples_flag_the_same_with_and_without_the_memo() -> None:
    for name in ("flat/markers", "messages/markers", "messages/gen_rows"):
        batch = sample(name)
        memo: CallMemo = {}
        alone = [list(flags_of(row, i).items()) for i, row in enumerate(batch)]
        assert [list(flags_of(row, i, memo=memo).items()) for i, row in enumerate(batch)] == alone
        if name.startswith("messages"):  # messages write each call's arguments as text: the memo's key
            assert len(memo) > 100
        else:  # a flat row's arguments are an object: each call is found afresh
            assert memo == {}
        stamped = trace_markers(batch)
        assert [[(f["flag"], f["fragment"]) for f in row["trace_flags"]] for row in stamped] == alone


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["VERIFY_CLAIM", "EDIT_CLAIM", "SECRET_VALUE", "BYPASS"]),
       st.text(alphabet="aikspc-_ghx'\tbenr ywot\n", max_size=30))
def test_a_gate_searched_at_once_admits_what_its_pieces_admit(name: str, text: str) -> None:
    for low in (text, *GATES[name]):  # each piece alone is in the text
        assert (_gate_search(name)(low) is not None) == passes_gate(low, GATES[name])


def test_rows_read_for_their_parts_only_read_as_read_trajectories_reads_them() -> None:
    # rows the scan leaves out and rows carrying their flags: parts only, under the scan's memo for messages
    for name in ("flat/markers", "messages/markers"):
        batch = trace_markers(sample(name)[:600])
        wanted = np.arange(len(batch)) % 3 == 0
        plain = read_trajectories(batch)
        for scanned in (read_scan(batch), read_scan(batch, wanted=wanted),
                        read_scan([{k: v for k, v in row.items() if k != "trace_flags"} for row in batch], wanted=wanted)):
            assert scanned.texts == plain.texts
            for column in ("n_calls", "turns", "errors", "hashes"):
                assert (getattr(scanned, column) == getattr(plain, column)).all(), (name, column)
        assert read_scan(batch).flags == [tuple(stamped_flags(row) or ()) for row in batch]
        unstamped = read_scan([{k: v for k, v in row.items() if k != "trace_flags"} for row in batch], wanted=wanted)
        assert unstamped.flags is not None
        assert all(flags == () for flags, scan in zip(unstamped.flags, wanted, strict=True) if not scan)
        assert sum(1 for flags in unstamped.flags if flags) > 20
