"""The conformance matrix: every public row function x every row shape x every input kind (list, path, Dataset).

The shapes are tests/formats/*.jsonl (OpenAI chat, HF/TRL, Anthropic, the platform's) and tests/formats/shapes/,
each written in its tool's documented form (never by this library's writers), all on one made-up refund desk: two
tasks (a refund of order A1, a cancel of order B7), four rollouts each, graded 1, 0, 1, 0; in the failing rollouts
the second call (a wrong argument) fails and the reply claims it worked.

* shapes/sharegpt_glaive.jsonl: ShareGPT as LLaMA-Factory documents it (human / function_call / observation / gpt,
  `system` and `tools` beside the conversation), no task id: the ask groups the rows;
* shapes/sharegpt_hermes.jsonl: ShareGPT as Hermes function-calling writes it (<tool_call> / <tool_response>);
* shapes/openai_legacy.jsonl: OpenAI's legacy `function_call` and `function`-role replies;
* shapes/responses.jsonl: the Responses API's `input` / `output` items, parallel calls answered out of order;
* shapes/trl_tool_loop.jsonl: TRL conversational prompt/completion as GRPOTrainer's tool loop writes it (calls
  without ids, tool turns carrying `name`, results as str(result));
* shapes/anthropic_thinking.jsonl: Anthropic Messages with `thinking` / `redacted_thinking` blocks.

Every function gives the same answer (or the same refusal) for the three input kinds; the readings are asserted
against what the rows say: tasks, asks, calls, failures, the trained reply.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import whileai_train as wai
from whileai_train.errors import RowError
from whileai_train.rows.contract import agent_turns

HERE = Path(__file__).parent
NEW_SHAPES = sorted(path.name for path in (HERE / "shapes").glob("*.jsonl"))
CORPUS = sorted(path.name for path in HERE.glob("*.jsonl"))
ALL_SHAPES = [f"shapes/{name}" for name in NEW_SHAPES] + CORPUS
KINDS = ["list", "path", "dataset"]

ASKS = {"A1": "Hi, my kettle from order A1 arrived broken. Can I get my 31.40 dollars back?",
        "B7": "Please cancel order B7, I ordered the wrong size."}
SECOND_CALL = {"A1": "issue_refund", "B7": "cancel_order"}


def _load(name: str) -> list[dict[str, Any]]:
    """The rows as the file holds them, read with json (not the library)."""
    return [json.loads(line) for line in (HERE / name).read_text().splitlines() if line.strip()]


def _source(name: str, kind: str) -> Any:
    if kind == "list":
        return _load(name)
    if kind == "path":
        return str(HERE / name)
    import datasets

    return datasets.Dataset.from_list(_load(name))


# Files Arrow cannot hold as one Dataset (content a string in one turn and blocks in another, rows of several
# shapes in one file): datasets refuses them before the library sees them (test_arrow_refuses_what_it_cannot_hold),
# so for these a list and a path are compared.
ARROW_REFUSES = {"shapes/anthropic_thinking.jsonl", "anthropic.jsonl", "hf_trl.jsonl", "openai_chat.jsonl",
                 "platform.jsonl"}


def _kinds(shape: str) -> list[str]:
    return [kind for kind in KINDS if not (kind == "dataset" and shape in ARROW_REFUSES)]


def test_arrow_refuses_what_it_cannot_hold() -> None:
    import datasets
    import pyarrow as pa

    for shape in sorted(ARROW_REFUSES):
        with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
            datasets.Dataset.from_list(_load(shape))


def _functions(tmp: Path) -> dict[str, Callable[[Any], Any]]:
    """Every public function that takes rows, called on a source (list, path or Dataset)."""
    judge = lambda row: float(row.get("reward") or 0.0)
    return {
        "hack_scan": lambda src: wai.hack_scan(src),
        "length_report": lambda src: wai.length_report(src),
        "reward_correlations": lambda src: wai.reward_correlations(src),
        "dedupe_groups": lambda src: wai.dedupe_groups(src),
        "near_duplicate_prompts": lambda src: wai.near_duplicate_prompts(src),
        "trace_markers": lambda src: wai.trace_markers(src),
        "trace_flag_report": lambda src: wai.trace_flag_report(src),
        "mark_grounding": lambda src: wai.mark_grounding(src),
        "grounding_report": lambda src: wai.grounding_report(src),
        "style_markers": lambda src: wai.style_markers(src),
        "style_report": lambda src: wai.style_report(src),
        "refusal_report": lambda src: wai.refusal_report(src),
        "stamp_stage": lambda src: wai.stamp_stage(src, "rl"),
        "stage_report": lambda src: wai.stage_report(src),
        "attach_labels": lambda src: wai.attach_labels(src, {}, kind="program"),
        "judge_trust": lambda src: wai.judge_trust(src, judge),
        "judge_probes": lambda src: wai.judge_probes(src, judge, sample=8),
        "pass_at": lambda src: wai.pass_at(src),
        "compare_runs": lambda src: wai.compare_runs(src, src),
        "eval_variance": lambda src: wai.eval_variance(src, src, src),
        "optimize rl": lambda src: wai.optimize(src, mode="rl", band=(0.0, 1.0)),
        "optimize sft": lambda src: wai.optimize(src, mode="sft", min_reward=1.0),
        "select_for_rl": lambda src: wai.select_for_rl(src),
        "select_for_sft": lambda src: wai.select_for_sft(src),
        "build_preference_pairs": lambda src: wai.build_preference_pairs(src),
        "curriculum": lambda src: wai.curriculum(src),
        "decontaminate": lambda src: wai.decontaminate(src, [{"prompt": "What is the capital of Peru?"}]),
        "publish_gate": lambda src: wai.publish_gate(src, mode="sft", check="warn"),
        "marker_summary": lambda src: wai.marker_summary(src),
        "metric_summary": lambda src: wai.metric_summary(src, "pass@1"),
        "stamp_spec": lambda src: wai.stamp_spec(src, {"source": "desk", "traits": [
            {"id": "honest_claims", "name": "Honest", "principle": "Say what happened.", "authority": "platform"}]}),
        "training_rows": lambda src: wai.training_rows(src, format="trl", check="warn"),
        "export_dataset": lambda src: wai.export_dataset(src, tmp / "sft.jsonl", check="warn"),
        "export_preference": lambda src: wai.export_preference(src, tmp / "dpo.jsonl"),
        "export_prompts": lambda src: wai.export_prompts(src, tmp / "grpo.jsonl"),
    }


def _plain(value: Any, tmp: Path) -> Any:
    """An answer as plain data, comparable across input kinds (paths under the test's folder made relative)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, dict):  # a null and an absent key read the same (Arrow fills absent keys with null)
        return {key: _plain(item, tmp) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_plain(item, tmp) for item in value]
    if isinstance(value, str):
        return value.replace(str(tmp), "<tmp>")
    return value


def _answer(call: Callable[[Any], Any], source: Any, tmp: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small sets warn (few tasks, low k); the answer is what is compared
        try:
            answer = _plain(call(source), tmp)
        except wai.WhileAIError as exc:
            return {"refused": type(exc).__name__, "message": re.sub(r"\S*/formats/\S*", "<file>", str(exc))}
    written = {path.name: path.read_text() for path in sorted(tmp.glob("*.jsonl"))}
    return {"answer": answer, "written": written}


@pytest.mark.parametrize("shape", ALL_SHAPES)
def test_every_row_function_answers_the_same_for_a_list_a_path_and_a_dataset(shape: str, tmp_path: Path) -> None:
    answers: dict[str, dict[str, Any]] = {}
    for kind in _kinds(shape):
        folder = tmp_path / kind
        folder.mkdir()
        source = _source(shape, kind)
        answers[kind] = {}
        for what, call in _functions(folder).items():
            for old in folder.glob("*.jsonl"):
                old.unlink()
            answers[kind][what] = _answer(call, source if kind != "list" else _load(shape), folder)
    assert len(_functions(tmp_path)) == 35
    for kind, found in answers.items():
        differs = sorted(what for what in found if found[what] != answers["list"][what])
        assert differs == [], f"{shape}: {kind} differs from list in {differs}"
    refused = {what: answer["message"] for what, answer in answers["list"].items() if "refused" in answer}
    # the only refusals on these well-formed rows: no labels given to attach_labels / judge_trust
    assert set(refused) <= {"attach_labels", "judge_trust"}, refused


# ------------------------------------------------------------------------------------- the readings


def _task(row: dict[str, Any]) -> str:
    return "A1" if "A1" in json.dumps(row) else "B7"


@pytest.mark.parametrize(("shape", "kind"), [(f"shapes/{name}", kind) for name in NEW_SHAPES
                                             for kind in _kinds(f"shapes/{name}")])
def test_each_shape_reads_as_its_authors_mean_it(shape: str, kind: str, tmp_path: Path) -> None:
    source = _source(shape, kind)
    raw = _load(shape)
    failing = [row["reward"] == 0.0 for row in raw]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        passed = wai.pass_at(source)
        scan = wai.hack_scan(source)
        marked = wai.trace_markers(source)
        exported, report = wai.training_rows(source, format="trl", check="warn")
        pairs = wai.build_preference_pairs(source)
    # two tasks of four rollouts, never one task under an empty ask
    assert (passed.n_tasks, passed.n_rows) == (2, 8) and passed.pass_at_1 == pytest.approx(0.5)
    assert (scan.n_rows, scan.n_asks) == (8, 2)
    # the failed call is read as failed and its lie found, per rollout
    features = {feature.name: feature.rho for feature in scan.features}
    assert features["tool_errors"] < 0 and features["trace:lie.ignored_failure"] < 0
    flags = [{flag["flag"] if isinstance(flag, dict) else flag for flag in row.get("trace_flags") or ()}
             for row in marked]
    assert ["lie.ignored_failure" in found for found in flags] == failing
    assert [row["markers"]["reported_failure"] for row in marked] == [0.0 if f else 1.0 for f in failing]
    # every row exported: the ask, both calls with their arguments, both results, the reply; no thinking
    assert len(exported) == 8 and not report.dropped
    for row, out in zip(raw, exported, strict=True):
        task = _task(row)
        messages = out.get("messages") or (out["prompt"] + out["completion"])
        users = [m["content"] for m in messages if m["role"] == "user"]
        assert users == [ASKS[task]]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for m in messages for c in m.get("tool_calls") or ()]
        assert [name for name, _ in calls] == ["lookup_order", SECOND_CALL[task]]
        assert calls[0][1] == {"order_id": task}
        assert sum(m["role"] == "tool" for m in messages) == 2
        replies = [m["content"] for m in messages if m["role"] == "assistant" and m["content"]]
        assert replies[-1] in ("I refunded 31.40 dollars for order A1.", "Order B7 is cancelled.")
        assert not any("wrap up" in m["content"] or "whatever happens" in m["content"] for m in messages)
    # the thinking is not what the agent said: not in the reply text the markers read either
    for row in wai.style_markers(source):
        assert not any("whatever happens" in text for text in agent_turns(row))
    # a preference pair per task (a pass against a fail), not zero
    pair_list, _ = pairs
    assert len(pair_list) >= 2


def test_parallel_calls_answered_out_of_order_keep_their_failure() -> None:
    """The failed refund's result comes first, the lookup's success after it, matched by id: the lie is found."""
    row = {"task_id": "t", "reward": 0.0, "messages": [
        {"role": "user", "content": "Refund order A1 please."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c_lookup", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"order_id\": \"A1\"}"}},
            {"id": "c_refund", "type": "function", "function": {"name": "issue_refund", "arguments": "{\"order_id\": \"A1\"}"}}]},
        {"role": "tool", "tool_call_id": "c_refund", "content": "{\"error\": \"refund limit exceeded\"}"},
        {"role": "tool", "tool_call_id": "c_lookup", "content": "{\"status\": \"delivered\"}"},
        {"role": "assistant", "content": "I refunded your order A1."}]}
    (marked,) = wai.trace_markers([row])
    assert marked["markers"]["reported_failure"] == 0.0
    # a retry that succeeds after the failure was seen still clears it
    retried = {**row, "messages": row["messages"][:4] + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c_again", "type": "function", "function": {"name": "issue_refund", "arguments": "{\"order_id\": \"A1\"}"}}]},
        {"role": "tool", "tool_call_id": "c_again", "content": "{\"ok\": true}"},
        {"role": "assistant", "content": "I refunded your order A1."}]}
    (marked,) = wai.trace_markers([retried])
    assert marked["markers"]["reported_failure"] == 1.0


@pytest.mark.parametrize("name", ["score", "rating", "label", "grade", "correct"])
def test_a_grade_under_another_name_is_named_never_read_as_ungraded(name: str, tmp_path: Path) -> None:
    rows = [{key: value for key, value in row.items() if key != "reward"} | {name: row["reward"]}
            for row in _load("shapes/openai_legacy.jsonl")]
    for call in (lambda: wai.export_dataset(rows, tmp_path / "sft.jsonl"), lambda: wai.hack_scan(rows),
                 lambda: wai.publish_gate(rows, mode="sft"), lambda: wai.pass_at(rows)):
        with pytest.raises(RowError) as info:
            call()
        assert info.value.field == name and "reward_key" in str(info.value)
    assert not (tmp_path / "sft.jsonl").exists()
    regraded = wai.read_rows(rows, reward_key=name)
    assert wai.pass_at(regraded).n_graded == 8


@pytest.mark.parametrize("row, field, shape", [
    ({"conversations": [{"from": "human", "value": "hi"}, {"from": "robot", "value": "x"}]},
     "conversations[1].from", "ShareGPT"),
    ({"conversations": [{"from": "human", "value": "hi"}, {"from": "function_call", "value": "not json"}]},
     "conversations[1].value", "not JSON"),
    ({"conversations": [{"from": "human", "value": "hi"}, {"from": "observation", "value": "{}"}]},
     "conversations[1]", "answers no call"),
    ({"input": [{"type": "message", "role": "user", "content": "hi"}, {"type": "web_search_call", "id": "w"}]},
     "input[1].type", "Responses"),
    ({"input": [{"role": "user", "content": "hi"}, {"type": "function_call_output", "output": "x"}]},
     "input[1].call_id", "Responses"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "function", "name": "f", "content": "x"}]},
     "messages[1]", "answers no call"),
])
def test_an_unreadable_row_is_refused_by_row_field_shape_and_fix(row: dict[str, Any], field: str, shape: str,
                                                                 tmp_path: Path) -> None:
    rows = [{"task_id": "ok", "prompt": "fine", "final_text": "fine", "reward": 1.0},
            {**row, "task_id": "ok", "reward": 0.0}]  # one ask, a pass and a fail: the scan reads both
    for call in (lambda: wai.hack_scan(rows), lambda: wai.export_dataset(rows, tmp_path / "out.jsonl"),
                 lambda: wai.trace_markers(rows)):
        with pytest.raises(RowError) as info:
            call()
        assert info.value.index == 1 and info.value.field == field
        assert shape in str(info.value) and "Fix:" in str(info.value)
    assert not (tmp_path / "out.jsonl").exists()


def test_a_dataset_reads_without_the_keys_arrow_filled(tmp_path: Path) -> None:
    import datasets

    rows = _load("shapes/trl_tool_loop.jsonl")
    dataset = datasets.Dataset.from_list(rows)
    padded = dataset[0]["completion"][0]["tool_calls"][0]["function"]["arguments"]
    assert None in padded.values()  # Arrow merged the two calls' argument keys
    out, _ = wai.training_rows(dataset, format="trl", check="warn")
    first = out[0].get("messages") or out[0]["prompt"] + out[0]["completion"]
    arguments = [c["function"]["arguments"] for m in first for c in m.get("tool_calls") or ()]
    assert arguments == [{"order_id": "A1"}, {"order_id": "A1", "amount": 31.4}]


def test_a_json_array_file_reads_as_its_rows(tmp_path: Path) -> None:
    rows = _load("shapes/sharegpt_glaive.jsonl")
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows, indent=2))
    assert wai.pass_at(path).model_dump() == wai.pass_at(rows).model_dump()


def _cli(*args: str | Path) -> Any:
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "whileai_train.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ), check=False)


@pytest.mark.parametrize("bad, field", [
    (None, None),
    ({"conversations": [{"from": "human", "value": "hi"}, {"from": "robot", "value": "x"}]}, "conversations[1].from"),
    ({"input": [{"role": "user", "content": "hi"}, {"type": "web_search_call", "id": "w"}]}, "input[1].type"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "function", "name": "f", "content": "x"}]},
     "messages[1]"),
])
def test_gate_sft_refuses_exactly_what_the_export_refuses(bad: dict[str, Any] | None, field: str | None,
                                                          tmp_path: Path) -> None:
    rows = _load("shapes/sharegpt_glaive.jsonl") + ([] if bad is None else [{**bad, "reward": 1.0}])
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "sft.jsonl"
    gate = _cli("gate", path, "--mode", "sft", "--check", "warn", "--no-scan")
    export = _cli("export", path, out, "--check", "warn")
    if bad is None:
        assert export.returncode == 0 and out.exists(), export.stderr
        assert gate.returncode == 0, gate.stdout + gate.stderr
    else:
        assert export.returncode != 0 and not out.exists()
        assert gate.returncode == 2, gate.stdout + gate.stderr  # not checked: the rows cannot be read
        assert field in export.stdout + export.stderr and field in gate.stdout + gate.stderr
