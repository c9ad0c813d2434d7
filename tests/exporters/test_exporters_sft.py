"""SFT export without a trainer: shapes, masks, counts, and each exporter mistake in docs/trl_facts.md."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import REFUND_TOOLS, marked_rollout, refund_rollouts
from whileai_train.errors import ChatTemplateError, ConfigError, ExportRefusedError, PrivilegedLeakError


def _demonstrations(n: int, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Generated rollouts graded as passes: these tests are about the rows' shape, not the train-step check."""
    return (dict(row, reward=1.0) for row in refund_rollouts(n, **kwargs))


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    """A clean folder of its own (the autouse isolated home lives in the default tmp_path)."""
    work = tmp_path / "work"
    work.mkdir()
    return work


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_training_rows_writes_nothing_and_matches_the_file(work, monkeypatch):
    monkeypatch.chdir(work)
    rows = list(_demonstrations(6))
    out, report = wai.training_rows(rows, format="trl")
    assert list(work.iterdir()) == []
    assert report.path is None and report.n_written == len(out) == 6
    written = wai.export_dataset(rows, work / "x.jsonl", format="trl")
    assert _read(work / "x.jsonl") == json.loads(json.dumps(out))
    assert written.model_dump(exclude={"path"}) == report.model_dump(exclude={"path"})


def test_default_path_is_in_the_current_directory(work, monkeypatch):
    monkeypatch.chdir(work)
    report = wai.export_dataset(list(_demonstrations(2)), format="trl", mask_mode="final")
    assert Path(report.path) == work / "export-trl-final.jsonl" and Path(report.path).exists()


def test_openai_rows_carry_a_loss_mask_per_message_and_json_string_arguments(work):
    report = wai.export_dataset([marked_rollout(0)], work / "o.jsonl", system_prompt="SYS-MARK", format="openai")
    (row,) = _read(work / "o.jsonl")
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user", "assistant", "tool", "assistant"]
    assert row["loss_mask"] == [1 if role == "assistant" else 0 for role in roles]
    assert row["prompt"] == "USER-MARK-1 refund order A100"
    arguments = row["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert isinstance(arguments, str) and json.loads(arguments) == {"order_id": "A100", "tag": "AGENT-1"}
    assert "privileged" not in row and row["task_id"] == "marked-0"
    assert (report.trained_messages, report.masked_messages) == (3, 5)
    assert report.tool_call_roundtrip.encoding == "json_string" and report.tool_call_roundtrip.checked == 2


def test_openai_final_masks_all_but_the_last_agent_turn(work):
    out, report = wai.training_rows([marked_rollout(0)], mask_mode="final", format="openai")
    assert out[0]["loss_mask"] == [0, 0, 0, 0, 0, 0, 1]
    assert (report.trained_messages, report.masked_messages) == (1, 6)


def test_trl_rows_have_no_prompt_string_and_one_key_set(work):
    rows = [marked_rollout(0), {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
                                "scenario_id": "s1", "tools": REFUND_TOOLS}]
    for mode, unroll in (("assistant", False), ("final", False), ("assistant", True)):
        out, _report = wai.training_rows(rows, format="trl", mask_mode=mode, unroll=unroll)
        keys = {tuple(sorted(row)) for row in out}
        assert len(keys) == 1, keys
        for row in out:
            assert all(isinstance(row[k], list) for k in ("messages", "prompt", "completion") if k in row)
            assert "loss_mask" not in row
            # the rollout has no tools: a null in the shared column; the messages row keeps its own
            expected_tools = REFUND_TOOLS if row["prompt_text"] == "hi" else None
            assert (json.loads(row["tools"]) if row["tools"] is not None else None) == expected_tools
        assert {row["prompt_text"] for row in out} == {"USER-MARK-1 refund order A100", "hi"}


def test_trl_arguments_are_dicts_without_a_tokenizer():
    out, report = wai.training_rows([marked_rollout(0)], format="trl")
    call = out[0]["messages"][1]["tool_calls"][0]
    assert call["function"]["arguments"] == {"order_id": "A100", "tag": "AGENT-1"}
    assert report.tool_call_roundtrip.encoding == "dict" and not report.tool_call_roundtrip.rendered


# --- docs/trl_facts.md "Exporter" mistakes, one test each ---------------------------------------------------


def test_a_row_ending_on_a_tool_result_never_trains_that_output():
    row = marked_rollout(0, end_on_tool=True)
    for mode in ("final", "assistant"):
        out, _ = wai.training_rows([row], format="trl", mask_mode=mode)
        text = json.dumps(out)
        assert "TOOL-MARK-3" not in text  # cut: neither context nor completion
        if mode == "final":
            assert out[0]["completion"][0]["tool_calls"][0]["function"]["arguments"]["tag"] == "AGENT-2"
    out, _ = wai.training_rows([row], mask_mode="final", format="openai")  # openai keeps the whole conversation, masked
    assert out[0]["messages"][-1]["content"] == "TOOL-MARK-3 ok" and out[0]["loss_mask"][-1] == 0
    assert out[0]["loss_mask"][-2] == 1


def test_rows_with_no_agent_turn_are_dropped_and_counted_never_written(work):
    rows = [marked_rollout(0), {"prompt": "only an ask"}, {"messages": [{"role": "user", "content": "x"}]}]
    for fmt in ("openai", "trl"):
        report = wai.export_dataset(rows, work / f"{fmt}.jsonl", format=fmt)
        assert report.dropped == {"no_assistant_turn": 2} and report.n_written == 1
        assert len(_read(work / f"{fmt}.jsonl")) == 1
        assert any("no agent turn" in w for w in report.warnings)


def test_a_set_with_nothing_to_train_is_refused_and_leaves_no_file(work):
    with pytest.raises(ExportRefusedError):
        wai.export_dataset([{"prompt": "only an ask"}], work / "none.jsonl", format="trl")
    assert list(work.iterdir()) == []


def test_tool_output_cap_appends_the_marker_and_counts_once_under_unroll():
    row = marked_rollout(0)  # TOOL-MARK-1 A100 paid = 21 chars, TOOL-MARK-3 ok = 14 chars
    for unroll in (False, True):
        out, report = wai.training_rows([row], format="trl", unroll=unroll, max_tool_output_chars=10)
        assert (report.tool_output_truncated, report.tool_output_chars_cut) == (2, 11 + 4)
    first_tool = next(m for m in out[-1]["prompt"] if m["role"] == "tool")
    assert first_tool["content"] == "TOOL-MARK-\n[... 11 chars of tool output truncated]"
    out, report = wai.training_rows([row], unroll=True, max_tool_output_chars=10)
    assert report.tool_output_chars_cut == 15 and len(out) == 3
    assert {sample["tool_output_chars_cut"] for sample in out} == {15}  # the row's figure, not a per-sample sum


def test_at_most_one_system_message():
    own = {"messages": [{"role": "system", "content": "own"}, {"role": "user", "content": "hi"},
                        {"role": "system", "content": "late"}, {"role": "assistant", "content": "yo"}]}
    out, report = wai.training_rows([own], format="trl", system_prompt="given")
    assert [m["content"] for m in out[0]["messages"] if m["role"] == "system"] == ["given"]
    assert any("replaced" in w for w in report.warnings)
    out, report = wai.training_rows([own], format="trl")
    assert [m["content"] for m in out[0]["messages"] if m["role"] == "system"] == ["own"]
    assert out[0]["messages"][0]["role"] == "system"
    flat, _ = wai.training_rows([marked_rollout(0)], format="trl", system_prompt="S")
    assert [m["role"] for m in flat[0]["messages"]].count("system") == 1


def test_a_reply_to_a_trailing_user_step_is_kept():
    row = {"prompt": "refund A1", "steps": [{"tool": "lookup", "arguments": {"order_id": "A1"}, "result": "paid"},
                                            {"user": "and the other one?"}],
           "final_text": "Only A1 was paid."}
    for mode in ("assistant", "final"):
        out, _ = wai.training_rows([row], format="trl", mask_mode=mode)
        messages = out[0]["messages"] if mode == "assistant" else out[0]["prompt"] + out[0]["completion"]
        assert [m["role"] for m in messages][-2:] == ["user", "assistant"]
        assert messages[-1]["content"] == "Only A1 was paid."
    out, _ = wai.training_rows([row], format="trl", unroll=True)
    assert [s["completion"][0].get("content") for s in out] == ["", "Only A1 was paid."]


# --- tokenizer checks ---------------------------------------------------------------------------------------


def test_tokenizer_chooses_dict_for_qwen_and_checks_every_call(tiny_tokenizer):
    _out, report = wai.training_rows(list(_demonstrations(4)), format="trl", tokenizer=tiny_tokenizer)
    rt = report.tool_call_roundtrip
    assert (rt.encoding, rt.rendered, rt.checked, rt.invalid) == ("dict", True, 8, 0)
    assert report.max_length == 1024 and report.too_long == 0


def test_tokenizer_whose_template_wants_a_string_gets_json_strings(tiny_tokenizer):
    # a DeepSeek-V3-like template: writes arguments as they are (a dict would print as a Python repr)
    tiny_tokenizer.chat_template = (
        "{% for m in messages %}{{ m.role }}: {{ m.content }}"
        "{% for c in m.tool_calls or [] %}<call>{{ c.function.name }} {{ c.function.arguments }}</call>{% endfor %}"
        "\n{% endfor %}")
    # prompt/completion rows: SFT renders them with the tokenizer's own template (no training template swapped in)
    out, report = wai.training_rows([marked_rollout(0)], format="trl", mask_mode="final", tokenizer=tiny_tokenizer)
    arguments = out[0]["prompt"][1]["tool_calls"][0]["function"]["arguments"]
    assert report.tool_call_roundtrip.encoding == "json_string" and isinstance(arguments, str)
    assert report.tool_call_roundtrip.invalid == 0 and report.chat_template == "custom"


def test_template_without_tool_calls_is_a_typed_error_for_rows_with_calls_only(tiny_tokenizer):
    tiny_tokenizer.chat_template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    plain = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    with pytest.raises(ChatTemplateError, match="row 1 carries tool calls.*renders a tool call without its arguments"):
        wai.training_rows([plain, marked_rollout(0)], format="trl", mask_mode="final", tokenizer=tiny_tokenizer)
    out, report = wai.training_rows([plain], format="trl", mask_mode="final", tokenizer=tiny_tokenizer)
    assert len(out) == 1 and report.template_drops == {}


def test_a_template_trl_cannot_train_messages_rows_with_gets_prompt_completion_rows(tiny_tokenizer, tmp_path):
    # no {% generation %} block and no trl training variant: SFTTrainer(assistant_only_loss=True) would raise, so
    # the default export writes the rows TRL trains exactly, one prompt/completion row per agent turn, and says so
    tiny_tokenizer.chat_template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    path = tmp_path / "sft.jsonl"
    turns = [("user", "hi"), ("assistant", "a"), ("user", "and?"), ("assistant", "b")]
    row = {"messages": [{"role": role, "content": content} for role, content in turns]}
    report = wai.export_dataset([row], path, format="trl", tokenizer=tiny_tokenizer)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [row["completion"][0]["content"] for row in rows] == ["a", "b"] and "messages" not in rows[0]
    assert report.unrolled and report.trainer_config == {"completion_only_loss": True, "max_length": 1024}
    assert "no {% generation %} block and trl 1.16 ships no training template" in report.rows_chosen
    assert report.ok and "rows chosen: prompt/completion rows, one per agent turn" in str(report)


def test_rows_longer_than_max_length_are_counted(tiny_tokenizer):
    _out, report = wai.training_rows(list(_demonstrations(3)), format="trl", tokenizer=tiny_tokenizer, max_length=30)
    assert report.too_long == 3 and report.max_length == 30
    assert any("max_length=30" in w for w in report.warnings)
    assert report.trainer_config == {"assistant_only_loss": True, "max_length": 30}


# --- privileged leaks ---------------------------------------------------------------------------------------


def _leaky() -> list[dict]:
    rows = list(_demonstrations(4))
    rows[2] = dict(rows[2], final_text="Done. Internal risk code RC-0000 noted.")
    return rows


def test_a_reply_quoting_its_privileged_context_is_refused_naming_the_row(work):
    path = work / "leak.jsonl"
    with pytest.raises(PrivilegedLeakError, match="privileged_leak") as caught:
        wai.export_dataset(_leaky(), path, format="trl")
    assert caught.value.rows == [2]
    assert list(work.iterdir()) == []  # no file, no temp file
    report = wai.export_dataset(_leaky(), path, format="trl", validate=False)
    assert report.privileged_leaks == [2] and path.exists() and "validate=False" in str(report)


def test_a_value_the_agent_was_shown_is_not_a_leak():
    row = dict(_demonstrations(1).__next__(), final_text="Your note says internal risk code RC-0000.")
    row["steps"] = [dict(row["steps"][0], result="internal risk code RC-0000")] + row["steps"][1:]
    _out, report = wai.training_rows([row], format="trl")
    assert report.privileged_leaks == []


# --- inputs and arguments ------------------------------------------------------------------------------------


def test_streams_from_an_iterator_and_a_jsonl_path(work):
    source = work / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in _demonstrations(5)))
    from_path = wai.export_dataset(source, work / "a.jsonl", format="trl")
    from_iter = wai.export_dataset(_demonstrations(5), work / "b.jsonl", format="trl")
    assert from_path.n_written == from_iter.n_written == 5
    assert (work / "a.jsonl").read_text() == (work / "b.jsonl").read_text()


@pytest.mark.parametrize("kwargs", [
    {"format": "hf"}, {"mask_mode": "last"}, {"unroll": True, "mask_mode": "final"}, {"tools": "lookup"},
    {"max_tool_output_chars": -1}, {"system_prompt": 3}, {"unroll": "yes"}, {"max_length": 0},
])
def test_arguments_that_cannot_work_raise_config_error_before_reading(work, kwargs):
    with pytest.raises(ConfigError):
        wai.export_dataset(_demonstrations(2), work / "x.jsonl", **kwargs)
    assert list(work.iterdir()) == []


def test_report_reads_verdict_first(work):
    report = wai.export_dataset(list(_demonstrations(3)) + [{"prompt": "x"}], work / "r.jsonl", format="trl")
    text = str(report)
    assert text.splitlines()[0].startswith("export check the warnings: 3 training rows from 4 input rows")
    assert "no_assistant_turn 1" in text and "assistant_only_loss=True" in text
    clean = wai.export_dataset(list(_demonstrations(3)), work / "c.jsonl", format="trl")
    assert str(clean).startswith("export ok: 3 training rows") and clean.ok
    assert set(report.model_dump()) >= {"n", "format", "mask_mode", "unrolled", "trained_messages",
                                        "masked_messages", "tool_output_truncated", "tool_output_chars_cut",
                                        "tool_call_roundtrip", "privileged_leaks", "dropped", "warnings", "path",
                                        "n_written"}


def test_leak_report_names_the_rows_the_export_refuses(work):
    """leak_report is public, and the refusal names it as wai.leak_report, not a module path."""
    with pytest.raises(PrivilegedLeakError) as caught:
        wai.training_rows(_leaky(), format="trl")
    assert "wai.leak_report(rows) names" in str(caught.value) and "exporters.leaks" not in str(caught.value)
    report = wai.leak_report(_leaky())
    assert isinstance(report, wai.LeakReport) and not report.ok
    assert report.leaks == {2: ["internal risk code rc-0000"]} and report.rows == [2] and report.n_rows == 4
    assert str(report).startswith("leak_report: PRIVILEGED LEAK in 1 of 4 rows")
    assert "row 2: 'internal risk code rc-0000'" in str(report)
    clean = [row for index, row in enumerate(_leaky()) if index not in report.leaks]
    assert wai.training_rows(clean, format="trl")[1].privileged_leaks == []
    path = work / "leaky.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _leaky()))
    assert wai.leak_report(path).leaks == report.leaks  # a path reads the same
    clean_report = wai.leak_report(clean)
    assert clean_report.ok and str(clean_report) == "leak_report: ok, none of 3 rows quotes its own privileged context"


def test_trl_is_the_default_shape_in_python_as_on_the_command_line(work):
    import subprocess
    import sys

    rows = [marked_rollout(0)]
    report = wai.export_dataset(rows, work / "py.jsonl")
    assert report.format == "trl" and report.trainer_config["assistant_only_loss"] is True
    (work / "src.jsonl").write_text(json.dumps(rows[0]) + "\n")
    done = subprocess.run([sys.executable, "-m", "whileai_train.cli", "export", str(work / "src.jsonl"),
                           str(work / "cli.jsonl")], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    python_rows = (work / "py.jsonl").read_text()
    assert python_rows == (work / "cli.jsonl").read_text() and '"loss_mask"' not in python_rows
    asked = wai.export_dataset(rows, work / "openai.jsonl", format="openai")
    assert asked.format == "openai" and '"loss_mask"' in (work / "openai.jsonl").read_text()
