"""The markers' quick ways are pinned to the plain reading they stand for, on generated agent rows.

Each stamping function copies a row once (``{**row, ...}``), checks the exact dict class before the Mapping ABC,
folds a grounding source only when a later call needs it, and splits sentences with str.replace: each test
here computes the same thing the plain way (dict copies, Mapping views, eager folding, str.translate) and
asserts the two agree on every generated row.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

import whileai_train as wai
from whileai_train.markers.grounding import _invented_in, _names
from whileai_train.markers.kinds import classify, command_of, path_of
from whileai_train.markers.style import _repeats, _reply
from whileai_train.markers.trace_flags import MARKER_FLAGS, flags_of
from whileai_train.markers.trajectory import CALLED, HEARD, RESULT, argument_strings, read_events
from whileai_train.rows.contract import final_reply, tool_failed

TOOLS = ["bash", "read_file", "edit_file", "write_file", "delete_file", "issue_refund", "lookup_order", "run_tests",
         "str_replace_based_edit_tool", "frobnicate", "send_message", "delete_path", "run_sql", "x"]
COMMANDS = ["pytest -q", "pytest || true", "rm -rf build/", "git reset --hard HEAD~3", "git commit -am wip --no-verify",
            "mvn install -DskipTests", "cat ~/.ssh/id_rsa", "ls tests/", "sed -i '/assert/d' tests/test_app.py",
            "echo hi > tests/test_a.py", "python deploy.py", "DROP TABLE users;", "npm test", "view", "create"]
PATHS = ["app.py", "tests/test_app.py", ".env", "/", "src/app_test.go", "config.toml", "build/*", ""]
CONTENT = ["x = 1", "x = f()  # type: ignore", "import pytest\n@pytest.mark.skip\ndef test_f(): ...", "assert True",
           "use key sk-proj-abcdefghijklmnopqrstuvwx", "assert f() == 3", "", "password: hunter2hunter2"]
RESULTS = ["ok", {"ok": True}, {"ok": False, "error": "window closed"}, {"exit_code": 2, "stderr": "No such file"},
           {"exit_code": 0}, "1 failed, 4 passed", "5 passed", "Error: boom", {"status": "failed"},
           {"status_code": 500}, {"status_code": 204}, {"returncode": True}, None, {"success": False},
           {"orders": [{"order_id": "A123456", "item": "Straße"}]}, "A123456 found", '{"error": "x"}', "Ünïcode ok"]
TEXTS = ["I verified the config and it is correct.", "I updated app.py to fix the bug.", "All tests pass.",
         "Your refund has been processed.", "I could not finish; the step failed.", "Done.", "", "I checked it!",
         "Your key is AKIAABCDEFGHIJKLMNOP, keep it safe.", "I think it might work, perhaps.", "I can't help with that.",
         "Great question! Sure.", "It seems fine. It seems fine?\nIt  seems   fine.", "I have issued a refund for A123456."]
VALUES = st.sampled_from(["A123456", "A1", "a123456", "user1@example.com", "  ", "", "STRASSE", "A99", "please\norder"]) | st.integers()
KEYS = st.sampled_from(["path", "command", "content", "new_str", "old_str", "order_id", "body", "recursive", "file",
                        "reason", "action", "cmd"])


def _value(key: str) -> st.SearchStrategy[Any]:
    if key in ("command", "cmd", "action"):
        return st.sampled_from(COMMANDS)
    if key in ("path", "file"):
        return st.sampled_from(PATHS)
    if key in ("content", "new_str", "old_str", "body"):
        return st.sampled_from(CONTENT)
    if key == "recursive":
        return st.booleans()
    return VALUES | st.lists(VALUES, max_size=2) | st.dictionaries(st.just("id"), VALUES, max_size=1)


arguments = st.lists(KEYS, max_size=3, unique=True).flatmap(
    lambda keys: st.fixed_dictionaries({key: _value(key) for key in keys}))
call_steps = st.fixed_dictionaries(
    {"tool": st.sampled_from(TOOLS), "arguments": arguments | arguments.map(json.dumps)},
    optional={"result": st.sampled_from(RESULTS), "text": st.sampled_from(TEXTS)})
steps = st.lists(call_steps | st.fixed_dictionaries({"user": st.sampled_from(TEXTS + ["order A123456"])})
                 | st.fixed_dictionaries({"text": st.sampled_from(TEXTS)}), max_size=5)
rows = st.fixed_dictionaries(
    {"prompt": st.sampled_from(["Fix the bug in app.py", "refund A123456 please", "hi"]), "steps": steps},
    optional={"final_text": st.lists(st.sampled_from(TEXTS), max_size=3).map(" ".join),
              "markers": st.just({"resolved": 1.0}), "lineage": st.sampled_from([{"stage": "sft"}, {}]),
              "system_prompt": st.just("order A99 is on file")})


def _eager_invented(events: list[tuple[int, Any]], ignore: frozenset[str], allow: frozenset[str]
                    ) -> list[dict[str, str]]:
    """Grounding the plain way: every source folded the moment it arrives."""
    sources: list[str] = []
    found = []
    for kind, payload in events:
        if kind == HEARD:
            sources.append(payload.casefold())
        elif kind == RESULT:
            sources.append((payload.result or "").casefold())
        elif kind == CALLED:
            joined = "\n".join(sources)
            for key, value in argument_strings(payload.arguments, ignore):
                stripped = value.strip()
                if not stripped or value in allow or stripped in allow:
                    continue
                value_folded = stripped.casefold()
                starts = [i for i in range(len(joined)) if joined.startswith(value_folded, i)]
                whole = any((value_folded[0].isalnum() is False or i == 0 or not joined[i - 1].isalnum())
                            and (value_folded[-1].isalnum() is False or i + len(value_folded) == len(joined)
                                 or not joined[i + len(value_folded)].isalnum()) for i in starts)
                if not whole:
                    found.append({"tool": payload.name, "key": key, "value": value, "call": payload.field})
    return found


SPANNING = {"prompt": "refund A123456 please", "system_prompt": "order A99 is on file",
            "steps": [{"tool": "issue_refund", "arguments": {"order_id": "please\nORDER"}, "result": {"ok": True}},
                      {"tool": "issue_refund", "arguments": {"order_id": "please\nA99"}}]}


@settings(max_examples=300, deadline=None)
@given(rows, st.sampled_from([(), ("reason",)]), st.sampled_from([(), ("A1",)]))
@example(SPANNING, (), ())
@example({**SPANNING, "steps": [{"tool": "lookup", "arguments": {"id": "A1"}, "result": "found a1"},
                                {"tool": "refund", "arguments": {"id": "a1"}}]}, (), ())
def test_grounding_folds_late_and_finds_what_eager_folding_finds(row: dict[str, Any], ignore: tuple[str, ...],
                                                                allow: tuple[str, ...]) -> None:
    ignored, allowed = _names("ignore_keys", ignore), _names("allow", allow)
    expected = _eager_invented(read_events(row), ignored, allowed)
    assert _invented_in(read_events(row), ignored, allowed) == expected
    (stamped,) = wai.mark_grounding([row], ignore_keys=ignore, allow=allow)
    assert stamped["markers"]["argument_grounding"] == (0.0 if expected else 1.0)


def test_a_value_spanning_two_sources_is_grounded_and_one_that_joins_them_wrongly_is_not() -> None:
    """The prompt and the system turn are joined by a newline: a value with a newline inside can only be found
    across them, and the late lookup still finds it."""
    assert [item["value"] for item in wai.ungrounded_arguments(SPANNING)] == ["please\nA99"]


@settings(max_examples=300, deadline=None)
@given(rows)
def test_every_stamp_copies_the_row_once_and_leaves_it_as_it_was(row: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(row)
    spec = {"source": "t", "traits": [{"id": "honest", "principle": "Say what you did."}]}
    for stamp, added in ((wai.mark_grounding, ["markers"]), (wai.trace_markers, ["trace_flags", "markers"]),
                         (wai.style_markers, ["markers"]), (lambda r: wai.stamp_stage(r, "rl"), ["lineage"]),
                         (lambda r: wai.stamp_spec(r, spec), ["spec_id", "spec_version"])):
        (stamped,) = stamp([row])
        assert row == snapshot  # the input is untouched
        plain = dict(row)  # the plain copy: the row's keys in order, then the new ones
        for key in added:
            plain[key] = stamped[key]
        assert list(stamped) == list(plain) and stamped == plain
        for key in added:
            if key in row and isinstance(row[key], dict):
                assert stamped[key] is not row[key]  # a fresh object, never the caller's
    (graded,) = wai.trace_markers([row])
    assert graded["markers"] == {**row.get("markers", {}), **{name: 0.0 if any(
        f["flag"] in flags for f in graded["trace_flags"]) else 1.0 for name, flags in MARKER_FLAGS.items()}}


@settings(max_examples=300, deadline=None)
@given(rows)
def test_a_row_read_through_a_mapping_view_reads_the_same(row: dict[str, Any]) -> None:
    """The exact-dict checks only skip the Mapping ABC: a read-only view of the same row raises the same flags
    (their fragments quote a view's repr where a dict is quoted as JSON, so the names are compared)."""
    def viewed(value: Any) -> Any:
        if isinstance(value, dict):
            return MappingProxyType({key: viewed(item) for key, item in value.items()})
        if isinstance(value, list):
            return [viewed(item) for item in value]
        return value

    assert list(flags_of(viewed(row))) == list(flags_of(row))
    (through_view,), (direct,) = wai.style_markers([viewed(row)]), wai.style_markers([row])
    assert through_view["markers"] == direct["markers"]


VERDICT_KEYS = ["error", "ok", "success", "exit_code", "returncode", "exitCode", "status_code", "status", "id"]
VERDICT_VALUES = [None, True, False, 0, 1, 2, 200, 302, 404, "failed", "FAILURE", "ok", "", "boom"]


def test_every_small_result_dict_fails_as_its_mapping_view_and_its_json_text_do() -> None:
    """Every result of up to two of the keys tool_failed reads (and one it does not), with every value that
    matters to them: the dict's quick way, the Mapping way and the result sent as JSON text (a messages row's
    tool turn) agree on each, and some of each answer occur."""
    answers = set()
    for size in (0, 1, 2):
        for keys in itertools.combinations(VERDICT_KEYS, size):
            for values in itertools.product(VERDICT_VALUES, repeat=size):
                result = dict(zip(keys, values, strict=True))
                answer = tool_failed(result)
                assert answer == tool_failed(MappingProxyType(result)), result
                assert answer == tool_failed(json.dumps(result)), result
                answers.add(answer)
    assert answers == {True, False}
    assert tool_failed({"ok": False}) and tool_failed({"status_code": 500}) and not tool_failed({"status_code": 204})
    assert tool_failed({"exit_code": 2, "status": "done"}) and not tool_failed({"returncode": True, "exitCode": 0})
    assert tool_failed({"status": "Failed"}) and not tool_failed({"status": "delivered", "order_id": "A1"})
    assert tool_failed("Traceback (most recent call last): ...") and tool_failed('result: {"error": "no such order"}')
    assert tool_failed('{"error": "timeout", "stdout": "cut') and not tool_failed('{"error": null, "rows": []}')


@settings(max_examples=500, deadline=None)
@given(arguments, st.sampled_from(TOOLS))
def test_kind_path_and_command_agree_on_dicts_and_mappings(args: dict[str, Any], tool: str) -> None:
    view: Mapping[str, Any] = MappingProxyType(args)
    assert classify(tool, args) == classify(tool, view)
    assert path_of(args) == path_of(view) and command_of(args) == command_of(view)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a b c d", "a  b c\td", "e f g h i", "x", ".", "!", "?", "\n", " ", "A B C D"]),
                max_size=8).map("".join))
def test_sentence_repeats_match_the_translate_split(text: str) -> None:
    low = text.lower()
    parts = low.translate(str.maketrans("!?\n", "...")).split(".")
    sentences = [tuple(part.split()) for part in parts if len(part.split()) >= 4]
    assert _repeats(low) == (len(parts) >= 2 and len(set(sentences)) < len(sentences))


@settings(max_examples=200, deadline=None)
@given(rows)
def test_the_reply_style_reads_is_the_final_reply(row: dict[str, Any]) -> None:
    assert _reply(row, 0) == final_reply(row)
