"""The template check without a trainer: which template renders the rows, the encoding read off it, the lazy tool
probe, and what a template loses or trains by mistake, counted by cause (tests/exporters/test_exporters_templates.py runs
the real trainers over every template trl ships)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import marked_rollout
from whileai_train.demos.tiny import template_tokenizer
from whileai_train.errors import ChatTemplateError, TemplateDropError
from whileai_train.exporters.preference import preference_rows

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


# --- the probe and the round trip under public templates TRL does not ship (tests/helpers/template_zoo.py) ----------------

_SCHEMAS = [{"type": "function", "function": {"name": name, "description": f"{name} an order", "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}, "tag": {"type": "string"}}}}}
    for name in ("lookup", "refund")]


@pytest.mark.parametrize(("text", "form"), [
    ('{"order_id": "A1", "n": 2, "ok": true}', "JSON object"),
    ('{\n    "order_id": "A1",\n    "n": 2,\n    "ok": true\n}', "JSON object"),  # Command R+: tojson(indent=4)
    ("<parameter=order_id>\nA1\n</parameter>\n<parameter=n>\n2\n</parameter>\n<parameter=ok>\nTrue\n</parameter>",
     "<parameter=name>value</parameter> pairs"),  # Qwen3-Coder writes a value with `| string`
    ("<arg_key>order_id</arg_key>\n<arg_value>A1</arg_value>\n<arg_key>n</arg_key>\n<arg_value>2</arg_value>"
     "<arg_key>ok</arg_key><arg_value>true</arg_value>", "<arg_key>/<arg_value> pairs"),  # GLM, Laguna
    ('[lookup(order_id="A1", n=2, ok=true)]', "Python call"),  # Llama 3.2 / Llama 4 pythonic calls
    ("[lookup(order_id='A1', n=2, ok=True)]", "Python call"),
])
def test_arguments_are_read_in_every_form_templates_write(text: str, form: str):
    from whileai_train.exporters.template import _argument_form

    arguments = {"order_id": "A1", "n": 2, "ok": True}
    assert _argument_form(text, arguments) == form
    assert _argument_form(text, json.dumps(arguments)) == form  # a JSON string: the object it encodes
    assert _argument_form(text, {**arguments, "order_id": "A2"}) is None  # another value is not these arguments
    assert _argument_form(text, {"n": 2, "order_id": "A1", "ok": True}) is None  # nor the pairs in another order


# A template writing Python-call syntax (as Llama 4 does), and one that writes only the first argument of a call.
_PYTHONIC = ("{%- for m in messages %}<|im_start|>{{ m.role }}\n{%- if m.tool_calls %}[{% for c in m.tool_calls %}"
             "{{ c.function.name }}({% for k, v in c.function.arguments.items() %}{{ k }}={{ v | tojson }}"
             "{% if not loop.last %}, {% endif %}{% endfor %}){% if not loop.last %}, {% endif %}{% endfor %}]"
             "{%- else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
             "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
_FIRST_ONLY = _PYTHONIC.replace("c.function.arguments.items()", "(c.function.arguments.items() | list)[:1]")


def test_the_round_trip_reads_python_calls_and_counts_arguments_a_template_loses():
    tokenizer = template_tokenizer("qwen2_5")
    tokenizer.chat_template = _PYTHONIC  # no {% generation %} block: one prompt/completion row per agent turn
    _out, report = wai.training_rows([marked_rollout(0)], format="trl", tokenizer=tokenizer)
    assert report.unrolled and report.tool_call_roundtrip.checked == 2 and report.tool_call_roundtrip.invalid == 0
    tokenizer.chat_template = _FIRST_ONLY  # the probe's one argument is shown; the rows' second (tag) is not
    _out, report = wai.training_rows([marked_rollout(0)], format="trl", tokenizer=tokenizer)
    assert report.tool_call_roundtrip.invalid == 2 and "did not survive the arguments round trip" in str(report)


def test_mistral_call_ids_are_found_by_rendering_and_written_in_that_form():
    from tests.helpers.template_zoo import zoo_tokenizer

    tokenizer = zoo_tokenizer("mistral_nemo")
    rows = [marked_rollout(0, user_turn=False)]  # two calls, ids as the flat rollout names them (not 9 characters)
    out, report = wai.training_rows(rows, format="trl", mask_mode="final", tokenizer=tokenizer, tools=_SCHEMAS)
    assert report.call_ids == "9 alphanumerics" and "tool-call ids written as 9 alphanumerics" in str(report)
    calls = [call["id"] for message in out[0]["prompt"] for call in message.get("tool_calls") or ()]
    results = [message["tool_call_id"] for message in out[0]["prompt"] if message["role"] == "tool"]
    assert calls == results == ["call00000", "call00001"]
    tokenizer.apply_chat_template(out[0]["prompt"] + out[0]["completion"], tools=_SCHEMAS, tokenize=False)  # renders


def test_no_raw_exception_from_a_template_or_trl_reaches_the_user():
    from tests.helpers.template_zoo import zoo_tokenizer

    # Hermes 3 loops over tools: trl's get_training_chat_template raises TypeError, the rendering without tools too
    hermes = zoo_tokenizer("hermes3")
    _out, report = wai.training_rows([PLAIN], format="trl", tokenizer=hermes, tools=_SCHEMAS)
    assert report.unrolled and "get_training_chat_template fails on it (TypeError" in report.rows_chosen
    with pytest.raises(ChatTemplateError, match="renders a conversation only with tool schemas.*Fix: pass tools="):
        wai.training_rows([PLAIN], format="trl", tokenizer=hermes)
    # Command R+ reads fields of a tool schema that JSON schema leaves optional; with them, it appends an
    # instruction after every conversation, which prompt/completion rows would train
    command = zoo_tokenizer("command_r_plus")
    with pytest.raises(ChatTemplateError, match="raises on the tool schemas given \\(UndefinedError.*Fix: give each "
                                                "tool schema the fields the template reads"):
        wai.training_rows([marked_rollout(0)], format="trl", tokenizer=command, tools=_SCHEMAS)
    complete = [{**schema, "function": {**schema["function"], "parameters": {"type": "object", "properties": {
        key: {"type": "string", "description": key} for key in ("order_id", "tag")}, "required": ["order_id"]}}}
        for schema in _SCHEMAS]
    with pytest.raises(TemplateDropError, match="user, system or tool text the trainer would train") as caught:
        wai.training_rows([marked_rollout(0)], format="trl", tokenizer=command, tools=complete)
    assert caught.value.drops == {"context_trained": 3}  # each of the three agent turns' samples
    # Kimi K2's template uses list.append, which transformers' sandbox refuses: its cause, not a crash
    kimi = zoo_tokenizer("kimi_k2")
    with pytest.raises(ChatTemplateError, match="raises on every tool call it is given \\(SecurityError"):
        wai.training_rows([marked_rollout(0)], format="trl", tokenizer=kimi, tools=_SCHEMAS)
    assert wai.training_rows([PLAIN], format="trl", tokenizer=kimi)[1].n_written == 1
