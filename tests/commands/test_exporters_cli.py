"""`whileai-train export`: writes and prints the report; exit 1 on a refusal, 2 on unusable input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai_train.cli import main
from whileai_train.demos.rollouts import REFUND_TOOLS, refund_rollouts
from whileai_train.exporters.defaults import STAMP_COLUMNS


@pytest.fixture()
def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in refund_rollouts(16)))
    return path


def test_export_sft_final_refuses_failing_rows_then_writes_them_with_check_warn(tmp_path, rows_file, capsys):
    out = tmp_path / "sft.jsonl"
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(REFUND_TOOLS))
    command = ["export", str(rows_file), str(out), "--mask-mode", "final", "--tools", str(tools),
               "--max-tool-output-chars", "20"]
    failing = sum(1 for row in refund_rollouts(16) if row["reward"] < 0.5)
    assert main(command) == 1 and not out.exists()
    err = capsys.readouterr().err
    assert f"{failing} of 16 rows have a failing reward" in err and "--check warn" in err
    assert f"selection (sft, check=refuse): 16 rows to learn from: {16 - failing} passing, {failing} failing" in err
    assert main([*command, "--check", "warn"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("export check the warnings: 16 training rows") and "completion_only_loss=True" in text
    assert f"selection (sft, check=warn): 16 rows to learn from: {16 - failing} passing, {failing} failing" in text
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    columns = {"prompt", "completion", "prompt_text", "task", "tools", *STAMP_COLUMNS, "tool_output_truncated",
               "tool_output_chars_cut"}  # the cap counts: this export caps tool output
    assert len(rows) == 16 and all(set(row) == columns for row in rows)
    assert json.loads(rows[0]["tools"]) == REFUND_TOOLS


def test_export_preference_and_prompts_as_json(tmp_path, rows_file, capsys):
    assert main(["export", str(rows_file), str(tmp_path / "p.jsonl"), "--kind", "preference", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kind"] == "preference" and report["n_written"] > 0 and "trl_turns_cut" in report
    assert main(["export", str(rows_file), str(tmp_path / "g.jsonl"), "--kind", "prompts", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_written"] == 4


def test_a_leak_exits_1_and_writes_nothing(tmp_path, capsys):
    rows = list(refund_rollouts(4))
    rows[1]["final_text"] = "noted: internal risk code RC-0000"
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["export", str(source), str(tmp_path / "o.jsonl")]) == 1
    assert "privileged_leak" in capsys.readouterr().err and not (tmp_path / "o.jsonl").exists()
    assert main(["export", str(source), str(tmp_path / "o.jsonl"), "--no-validate", "--check", "warn"]) == 0


def test_unusable_input_exits_2(tmp_path, capsys):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"prompt": "x", "final_text": "y"}\n{"prompt": "cut')
    assert main(["export", str(broken), str(tmp_path / "o.jsonl")]) == 2
    assert "row 1" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "missing.jsonl"), str(tmp_path / "o.jsonl")]) == 2
    assert not (tmp_path / "o.jsonl").exists()


def test_what_the_chat_template_drops_exits_1_and_writes_nothing(tmp_path, capsys):
    from whileai_train.demos.tiny import template_tokenizer

    template_tokenizer("gptoss").save_pretrained(tmp_path / "tokenizer")
    calls = [{"id": f"c{k}", "type": "function", "function": {"name": "lookup", "arguments": f'{{"order_id": "A{k}"}}'}}
             for k in (1, 2)]  # two parallel calls: the gpt-oss template renders the first only
    row = {"messages": [{"role": "user", "content": "check A1 and A2"},
                        {"role": "assistant", "content": "", "tool_calls": calls},
                        {"role": "tool", "tool_call_id": "c1", "content": "paid"},
                        {"role": "tool", "tool_call_id": "c2", "content": "paid"},
                        {"role": "assistant", "content": "both paid"}]}
    source, out = tmp_path / "rows.jsonl", tmp_path / "o.jsonl"
    source.write_text(json.dumps(row) + "\n")
    command = ["export", str(source), str(out), "--tokenizer", str(tmp_path / "tokenizer")]
    assert main(command) == 1 and not out.exists()
    assert "export refused: the gptoss_training chat template would not train" in capsys.readouterr().err
    assert main([*command, "--no-validate", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["template_drops"] == {"calls_after_first": 1} and report["chat_template"] == "gptoss_training"
