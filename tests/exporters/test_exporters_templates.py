"""Every chat template TRL 1.16 ships for a tool-using family, through the real trainers: trained as the report says,
or refused with the fix.

For each template a tiny tokenizer with that family's special tokens carries TRL's own template text
(whileai_train.demos.tiny.template_tokenizer). Four rows in the shapes other tools write: an OpenAI chat row with two
parallel calls and text beside them, a flat platform rollout (text beside its second call), a plain TRL
`messages` row and one with a system turn. Every turn is marked with who wrote it: AGENT-* and CALL-* (a call's
`tag` argument) may be trained, USER-MARK, SYS-MARK and TOOL-MARK not. The export runs with the tokenizer (SFT
`messages` rows, unrolled prompt/completion rows, DPO pairs); then SFTTrainer (with the report's trainer_config)
or DPOTrainer builds its data, we decode what it trains, and train one step. What is missing from the trained
text, and the samples that train user, system or tool text, must be exactly what the report counts (only ever
written with validate=False, after a TemplateDropError without it); a refusal must name the template and the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.tiny import build_tiny_model, template_tokenizer
from whileai_train.errors import ChatTemplateError, TemplateDropError
from whileai_train.exporters.inspect import trained_spans

TOOLS = [{"type": "function", "function": {"name": name, "description": f"{name} an order",
                                           "parameters": {"type": "object", "properties": {
                                               "order_id": {"type": "string"}, "tag": {"type": "string"}}}}}
         for name in ("lookup", "refund")]
MAX_LENGTH = 2048  # the tiny model's positions: Llama's tool schemas (indented JSON) take ~900 tiny-BPE tokens
FORBIDDEN = ("USER-MARK", "SYS-MARK", "TOOL-MARK")
AGENT = re.compile(r"\b(?:AGENT|CALL)-[A-Z0-9]+")
ROW_TAG = re.compile(r"USER-MARK (\w+):")


def _call(call_id: str, name: str, order: str, tag: str) -> dict[str, Any]:
    arguments = json.dumps({"order_id": order, "tag": tag})  # the OpenAI wire form: a JSON string
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _rows(v: str = "") -> dict[str, dict[str, Any]]:
    """The four rows by name; `v` marks the agent's diverging turn of a rejected side ("X")."""
    parallel = {"task_id": "parallel", "messages": [  # OpenAI chat completions
        {"role": "user", "content": "USER-MARK parallel: check A100 and A101"},
        {"role": "assistant", "content": f"AGENT-P1{v} checking both", "tool_calls": [
            _call("c1", "lookup", "A100", f"CALL-P1A{v}"), _call("c2", "lookup", "A101", f"CALL-P1B{v}")]},
        {"role": "tool", "tool_call_id": "c1", "content": "TOOL-MARK-P1A paid"},
        {"role": "tool", "tool_call_id": "c2", "content": "TOOL-MARK-P1B paid"},
        {"role": "assistant", "content": "AGENT-P2 both are paid"}]}
    flat = {"task_id": "flat", "prompt": "USER-MARK flat: refund A102", "steps": [  # the platform's flat rollout
        {"tool": "lookup", "arguments": {"order_id": "A102", "tag": "CALL-F1"}, "result": "TOOL-MARK-F1 paid"},
        {"tool": "refund", "arguments": {"order_id": "A102", "tag": f"CALL-F2{v}"}, "text": f"AGENT-F2{v} refunding",
         "result": "TOOL-MARK-F2 ok"}], "final_text": "AGENT-F3 refunded"}
    plain = {"task_id": "plain", "messages": [  # a TRL / HF conversational row
        {"role": "user", "content": "USER-MARK plain: hi"}, {"role": "assistant", "content": f"AGENT-PL{v} hello"}]}
    system = {"task_id": "system", "messages": [
        {"role": "system", "content": "SYS-MARK be brief"}, {"role": "user", "content": "USER-MARK system: hi"},
        {"role": "assistant", "content": f"AGENT-S{v} ok"}]}
    return {"parallel": parallel, "flat": flat, "plain": plain, "system": system}


# What SFT may train of each row (every agent turn), and what DPO scores of each side (the diverging turn).
SFT_MARKS = {"parallel": {"AGENT-P1", "CALL-P1A", "CALL-P1B", "AGENT-P2"},
             "flat": {"CALL-F1", "AGENT-F2", "CALL-F2", "AGENT-F3"}, "plain": {"AGENT-PL"}, "system": {"AGENT-S"}}
DPO_MARKS = {"parallel": {"AGENT-P1", "CALL-P1A", "CALL-P1B"}, "flat": {"AGENT-F2", "CALL-F2"},
             "plain": {"AGENT-PL"}, "system": {"AGENT-S"}}


@dataclass
class Case:
    """What one template does with the rows, for one trainer (measured with trl 1.16; docs/trl_facts.md)."""

    template: str  # the template that renders the rows for the report's trainer_config
    encoding: str = "dict"
    lost: set[str] = field(default_factory=set)  # marks the template drops (counted in template_drops)
    drops: dict[str, int] = field(default_factory=dict)
    chosen: bool = False  # SFT's default export chose prompt/completion rows: TRL cannot train messages rows with it
    refused_rows: tuple[str, str] | None = None  # (rows refused, why): the template cannot render them


# the cause the probe finds: Gemma 3 raises on a tool turn (its roles must alternate), Phi-3.5 renders no call
_NO_TOOL_ROLE = (("parallel", "flat"), r"row 0 carries tool calls, and the {} chat template cannot train them: it "
                                       r"raises on every tool call it is given \(TemplateError: Conversation roles "
                                       r"must alternate.*Fix: .*leave out the rows with tool calls")
_NO_CALLS = (("parallel", "flat"), r"row 0 carries tool calls, and the {} chat template cannot train them: it renders "
                                   r"a tool call without its arguments in any form.*leave out the rows with tool calls")
# Llama 3.1/3.2 have no {% generation %} block and trl ships no training variant of them: the default export writes
# the rows TRL trains exactly, prompt/completion rows one per agent turn (the report says so), checked like unroll=True
_LLAMA_SFT = Case("{}", lost={"AGENT-F2"}, drops={"text_beside_call": 1}, chosen=True,
                  refused_rows=(("parallel",), r"row 0: the {} chat template cannot render this row \(This model "
                                               r"only supports single tool-calls.*one tool call per agent turn"))
SFT = {
    "qwen2_5": Case("qwen2_5_training"),
    "qwen3": Case("qwen3_training"),
    "llama3_1": _LLAMA_SFT,
    "llama3_2": _LLAMA_SFT,
    "gptoss": Case("gptoss_training", lost={"CALL-P1B", "AGENT-P1", "AGENT-F2"},
                   drops={"calls_after_first": 1, "text_beside_call": 2}),
    # TRL's training variant applies | tojson: the arguments are written as objects
    "deepseekv3": Case("deepseekv3_training", lost={"AGENT-F2"}, drops={"text_beside_call": 1}),
    "gemma3": Case("gemma3_training", refused_rows=_NO_TOOL_ROLE),
    "phi3_5": Case("phi3_5_training", refused_rows=_NO_CALLS),
}
_LLAMA_UNROLLED = Case("{}", lost={"AGENT-F2"}, drops={"text_beside_call": 1}, refused_rows=_LLAMA_SFT.refused_rows)
UNROLLED = {  # prompt/completion rows, trained with completion_only_loss: the tokenizer's own template renders them
    "qwen2_5": Case("qwen2_5"),
    "qwen3": Case("qwen3"),
    "llama3_1": _LLAMA_UNROLLED,
    "llama3_2": _LLAMA_UNROLLED,
    # the last turn's sample: its prompt alone renders the text beside the first call (no final reply follows
    # yet), the whole sample does not, so the tokens after the prompt start at that call and take in the tool
    # results: two samples would train tool output
    "gptoss": Case("gptoss", lost={"CALL-P1B"}, drops={"calls_after_first": 1, "context_trained": 2}),
    "deepseekv3": Case("deepseekv3", encoding="json_string", lost={"AGENT-F2"}, drops={"text_beside_call": 1}),
    "gemma3": Case("gemma3", refused_rows=_NO_TOOL_ROLE),
    "phi3_5": Case("phi3_5", refused_rows=_NO_CALLS),
}
_LLAMA_DPO = Case("{}", lost={"AGENT-F2", "AGENT-F2X"}, drops={"text_beside_call": 2},
                  refused_rows=(("parallel",), r"row 0: the {} chat template cannot render this row"))
DPO = {
    "qwen2_5": Case("qwen2_5"),
    "qwen3": Case("qwen3"),
    "llama3_1": _LLAMA_DPO,
    "llama3_2": _LLAMA_DPO,
    # the original template, kept by DPO, renders text beside the call of a turn that ends the conversation
    "gptoss": Case("gptoss", lost={"CALL-P1B", "CALL-P1BX"}, drops={"calls_after_first": 2}),
    # DPO keeps the original template, which concatenates the arguments: they are written as a JSON string
    "deepseekv3": Case("deepseekv3", encoding="json_string", lost={"AGENT-F2", "AGENT-F2X"},
                       drops={"text_beside_call": 2}),
    "gemma3": Case("gemma3", refused_rows=_NO_TOOL_ROLE),
    "phi3_5": Case("phi3_5", refused_rows=_NO_CALLS),
}


def _config(tmp_path: Path, batch: int) -> dict[str, Any]:
    return {"output_dir": str(tmp_path / "out"), "max_steps": 1, "per_device_train_batch_size": batch,
            "use_cpu": True, "report_to": "none", "save_strategy": "no", "disable_tqdm": True, "seed": 0}


def _export(kind: str, names: list[str], tokenizer: Any, path: Path, **options: Any) -> wai.ExportReport:
    if kind == "dpo":
        chosen, rejected = _rows(), _rows("X")
        pairs = [{"chosen": chosen[name], "rejected": rejected[name]} for name in names]
        return wai.export_preference(pairs, path, tokenizer=tokenizer, tools=TOOLS, max_length=MAX_LENGTH, **options)
    if kind == "unroll":
        options.setdefault("unroll", True)
    rows = _rows()
    return wai.export_dataset([rows[name] for name in names], path, format="trl", tokenizer=tokenizer, tools=TOOLS,
                              max_length=MAX_LENGTH, **options)


def _exported(kind: str, case: Case, name: str, tokenizer: Any, path: Path) -> tuple[wai.ExportReport, list[str]]:
    """Export as a user would: the refusals the case expects, each naming the template and the fix, then the rows
    and options the refusals leave; validate=False only after a TemplateDropError that counted what is lost."""
    names, options = list(_rows()), {}
    if case.refused_rows:
        refused, why = case.refused_rows
        with pytest.raises(ChatTemplateError, match=why.format(case.template.format(name))):
            _export(kind, names, tokenizer, path, **options)
        assert not path.exists()
        names = [row for row in names if row not in refused]
    if case.drops:
        label = ("the tokenizer's chat template \\(not one trl ships\\)" if case.template == "custom" else
                 f"the {case.template.format(name)} chat template")
        with pytest.raises(TemplateDropError, match=label) as caught:
            _export(kind, names, tokenizer, path, **options)
        assert caught.value.drops == case.drops and not path.exists()
        options["validate"] = False
    report = _export(kind, names, tokenizer, path, **options)
    assert report.chat_template == case.template.format(name)
    if case.chosen:  # the rows TRL trains exactly, said in the report
        assert report.unrolled and report.trainer_config["completion_only_loss"] and "messages" not in rows_of(path)[0]
        assert "prompt/completion rows, one per agent turn" in report.rows_chosen and "rows chosen" in str(report)
    else:
        assert report.rows_chosen is None
    assert report.template_drops == case.drops
    assert report.tool_call_roundtrip.invalid == 0
    assert report.too_long == 0  # nothing here is cut by max_length: every difference below is the template's
    if any(row in names for row in ("parallel", "flat")):
        assert report.tool_call_roundtrip.encoding == case.encoding
    return report, names


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _check_trained(trained: str, allowed: set[str], leaks: list[str]) -> set[str]:
    """Every argument object is written once, only the row's agent marks are trained (returned); a sample that
    trains user, system or tool text is added to `leaks`."""
    if any(marker in trained for marker in FORBIDDEN):
        leaks.append(trained)
    assert '\\"' not in trained, trained  # an argument object encoded a second time
    for tag in re.findall(r"CALL-[A-Z0-9]+", trained):
        assert re.search(r'\{"order_id": ?"A10\d", ?"tag": ?"' + tag + '"\\}', trained), (tag, trained)
    marks = set(AGENT.findall(trained))
    assert marks <= allowed, (marks - allowed, trained)
    return marks


def _assert_as_reported(case: Case, expected: set[str], trained: set[str], leaks: list[str]) -> None:
    """What is missing from the trained text, and the samples that train context, are what the report counts."""
    assert expected - trained == case.lost
    lost = {cause: count for cause, count in case.drops.items() if cause != "context_trained"}
    assert len(case.lost) == sum(lost.values())  # each lost mark is one item the report counted
    assert len(leaks) == case.drops.get("context_trained", 0), leaks


TEMPLATES = sorted(SFT)
pytestmark = pytest.mark.trainer


@pytest.mark.parametrize("name", TEMPLATES)
@pytest.mark.parametrize("kind", ["sft", "unroll"])
def test_sft_trains_what_the_report_says_or_is_refused_with_the_fix(kind: str, name: str, tmp_path: Path) -> None:
    from trl import SFTConfig, SFTTrainer

    case, tokenizer, path = (SFT if kind == "sft" else UNROLLED)[name], template_tokenizer(name), tmp_path / "sft.jsonl"
    report, names = _exported(kind, case, name, tokenizer, path)
    dataset = wai.to_dataset(path)
    trainer = SFTTrainer(model=build_tiny_model(tokenizer), processing_class=tokenizer, train_dataset=dataset,
                         args=SFTConfig(**_config(tmp_path, len(dataset)), **report.trainer_config))
    # the template the export rendered with is the one SFTTrainer trains with (TRL's own choice)
    swapped = resources.files("trl").joinpath(f"chat_templates/{report.chat_template}.jinja").read_text("utf-8")
    assert trainer.chat_template == (swapped if report.trainer_config.get("assistant_only_loss") else None)
    marks: set[str] = set()
    leaks: list[str] = []
    batch = next(iter(trainer.get_train_dataloader()))
    for ids, labels in zip(batch["input_ids"].tolist(), batch["labels"].tolist()):
        row = ROW_TAG.search(tokenizer.decode(ids)).group(1)
        trained = "\n".join(trained_spans(tokenizer, ids, [label != -100 for label in labels]))
        marks |= _check_trained(trained, SFT_MARKS[row], leaks)
    _assert_as_reported(case, set().union(*(SFT_MARKS[row] for row in names)), marks, leaks)
    trainer.train()
    assert trainer.state.global_step == 1


@pytest.mark.parametrize("name", TEMPLATES)
def test_dpo_scores_what_the_report_says_or_is_refused_with_the_fix(name: str, tmp_path: Path) -> None:
    from trl import DPOConfig, DPOTrainer

    case, tokenizer, path = DPO[name], template_tokenizer(name), tmp_path / "dpo.jsonl"
    report, names = _exported("dpo", case, name, tokenizer, path)
    dataset = wai.to_dataset(path)
    trainer = DPOTrainer(model=build_tiny_model(tokenizer), ref_model=build_tiny_model(tokenizer),
                         processing_class=tokenizer, train_dataset=dataset,
                         args=DPOConfig(**_config(tmp_path, len(dataset)), **report.trainer_config))
    assert len(trainer.train_dataset) == len(names)
    scored: set[str] = set()
    leaks: list[str] = []
    for example in trainer.train_dataset:
        prompt = tokenizer.decode(example["prompt_ids"])
        row = ROW_TAG.search(prompt).group(1)
        chosen, rejected = DPO_MARKS[row], {f"{mark}X" for mark in DPO_MARKS[row]}
        assert not set(AGENT.findall(prompt)) & (chosen | rejected)  # the diverging turn is not in the prompt
        scored |= _check_trained(tokenizer.decode(example["chosen_ids"]), chosen, leaks)
        scored |= _check_trained(tokenizer.decode(example["rejected_ids"]), rejected, leaks)
    expected = set().union(*(DPO_MARKS[row] | {f"{mark}X" for mark in DPO_MARKS[row]} for row in names))
    _assert_as_reported(case, expected, scored, leaks)
    trainer.train()
    assert trainer.state.global_step == 1
