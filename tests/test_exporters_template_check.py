"""The template check without a trainer: which template renders the rows, the encoding read off it, the lazy tool
probe, and what a template loses or trains by mistake, counted by cause (tests/test_exporters_templates.py runs
the real trainers over every template trl ships)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.errors import ChatTemplateError, TemplateDropError
from whileai_train.exporters.preference import preference_rows
from whileai_train.exporters.synthetic import marked_rollout
from whileai_train.tiny import template_tokenizer

PLAIN = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def _parallel() -> dict[str, Any]:
    """An OpenAI chat row: two parallel calls with text beside them, then the reply."""
    calls = [{"id": f"c{k}", "type": "function",
              "function": {"name": "lookup", "arguments": json.dumps({"order_id": f"A10{k}"})}} for k in (1, 2)]
    return {"messages": [
        {"role": "user", "content": "check A101 and A102"},
        {"role": "assistant", "content": "checking both", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "paid"},
        {"role": "tool", "tool_call_id": "c2", "content": "paid"},
        {"role": "assistant", "content": "both are paid"}]}


def test_deepseek_v3_arguments_follow_the_template_each_trainer_renders_with():
    tokenizer = template_tokenizer("deepseekv3")
    rows = [marked_rollout(0)]
    # SFT messages rows: TRL swaps in its training variant, which applies | tojson: objects
    out, report = wai.training_rows(rows, format="trl", tokenizer=tokenizer)
    assert (report.chat_template, report.tool_call_roundtrip.encoding) == ("deepseekv3_training", "dict")
    assert out[0]["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"order_id": "A100", "tag": "AGENT-1"}
    # prompt/completion rows and DPO pairs keep the original template, which concatenates a string
    out, report = wai.training_rows(rows, format="trl", mask_mode="final", tokenizer=tokenizer)
    assert (report.chat_template, report.tool_call_roundtrip.encoding) == ("deepseekv3", "json_string")
    assert json.loads(out[0]["prompt"][1]["tool_calls"][0]["function"]["arguments"])["tag"] == "AGENT-1"
    pair = {"chosen": marked_rollout(0), "rejected": dict(marked_rollout(0), final_text="AGENT-3 sorry")}
    written, report = preference_rows([pair], tokenizer=tokenizer)
    assert (report.chat_template, report.tool_call_roundtrip.encoding) == ("deepseekv3", "json_string")
    assert isinstance(written[0]["prompt"][1]["tool_calls"][0]["function"]["arguments"], str)
    # the same rows without tokenizer= are written as objects (the trainer's template is not known)
    assert wai.training_rows(rows, format="trl")[1].tool_call_roundtrip.encoding == "dict"


def test_a_template_without_a_tool_role_exports_rows_that_need_none():
    tokenizer = template_tokenizer("gemma3")
    system = {"messages": [{"role": "system", "content": "be brief"}, *PLAIN["messages"]]}
    out, report = wai.training_rows([PLAIN, system], format="trl", tokenizer=tokenizer)
    assert len(out) == 2 and report.chat_template == "gemma3_training" and report.tool_call_roundtrip.checked == 0
    with pytest.raises(ChatTemplateError, match="row 2 carries tool calls, and the gemma3_training chat template"):
        wai.training_rows([PLAIN, system, marked_rollout(0)], format="trl", tokenizer=tokenizer)


def test_what_a_template_drops_is_refused_then_counted_by_cause(tmp_path: Path):
    tokenizer = template_tokenizer("gptoss")
    path = tmp_path / "sft.jsonl"
    with pytest.raises(TemplateDropError, match="gptoss_training chat template would not train what 1 rows hold "
                                                "\\(rows 1\\).*validate=False") as caught:
        wai.export_dataset([PLAIN, _parallel()], path, format="trl", tokenizer=tokenizer)
    assert caught.value.rows == [1] and not path.exists()
    assert caught.value.drops == {"calls_after_first": 1, "text_beside_call": 1}
    report = wai.export_dataset([PLAIN, _parallel()], path, format="trl", tokenizer=tokenizer, validate=False)
    assert report.template_drops == {"calls_after_first": 1, "text_beside_call": 1} and not report.ok
    assert "1 tool calls lost: the template renders one call per turn" in str(report)
    assert "1 agent texts lost: the template drops text beside a tool call" in str(report)
    assert "did not survive the arguments round trip" not in str(report)  # a dropped call is not a bad argument
    assert report.tool_call_roundtrip.invalid == 0


# A template with generation markers (TRL uses it as it is) that leaves tool calls and the end of turn untrained.
_CALLS_OUTSIDE = (
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n"
    "{%- if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
    "{%- for c in m.tool_calls or [] %}<call>{{ c.function.arguments | tojson }}</call>{% endfor %}"
    "{%- else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
# One whose generation block takes in every turn: user and tool text would be trained.
_TRAINS_ALL = ("{% generation %}{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
               "{%- for c in m.tool_calls or [] %}<call>{{ c.function.arguments | tojson }}</call>{% endfor %}"
               "<|im_end|>\n{% endfor %}{% endgeneration %}")


def test_the_assistant_mask_of_the_template_decides_what_counts_as_trained():
    tokenizer = template_tokenizer("qwen2_5")
    tokenizer.chat_template = _CALLS_OUTSIDE
    row = marked_rollout(0)  # two calls with no text beside them, then the reply
    _out, report = wai.training_rows([row], format="trl", tokenizer=tokenizer, validate=False)
    assert report.chat_template == "custom" and report.template_drops == {"untrained": 2}
    assert any("end-of-turn token out of the assistant mask" in warning for warning in report.warnings)
    tokenizer.chat_template = _TRAINS_ALL
    with pytest.raises(TemplateDropError, match="user, system or tool text the trainer would train"):
        wai.training_rows([row, PLAIN], format="trl", tokenizer=tokenizer)
    _out, report = wai.training_rows([row, PLAIN], format="trl", tokenizer=tokenizer, validate=False)
    assert report.template_drops == {"context_trained": 2}


def test_each_shape_of_conversation_is_rendered_once_for_the_survival_check(monkeypatch):
    from whileai_train.exporters.template import TemplateCheck

    tokenizer = template_tokenizer("qwen2_5")
    shapes: list[int] = []
    survival_of = TemplateCheck._survival_of
    monkeypatch.setattr(TemplateCheck, "_survival_of",
                        lambda self, messages, *rest: shapes.append(len(messages)) or survival_of(self, messages, *rest))
    rows = [dict(marked_rollout(task), task_id=f"t{task}") for task in range(6)]
    _out, report = wai.training_rows(rows, format="trl", tokenizer=tokenizer)
    assert report.n_written == 6 and shapes == [7]  # six rows of one shape: one skeleton rendered
