"""Public chat templates of tool-calling models that TRL does not ship (tests/helpers/template_zoo.py: the text of each, its
source and license), through the real trainers, as tests/exporters/test_exporters_templates.py runs the ones TRL ships: the
same four rows, exported with the tokenizer (SFT default, unroll=True, DPO), then SFTTrainer or DPOTrainer builds its
data, we decode what it trains and train one step. What is missing from the trained text, and samples that train
user, system or tool text, must be exactly what the report counts; a refusal names the cause the probe found and a
fix, and the test applies the fix and trains.

What these templates do (measured with trl 1.16, transformers 5.24):
- None but Laguna XS.2 has a {% generation %} block, and trl ships no training variant of them, so SFTTrainer cannot
  train `messages` rows with assistant_only_loss; the default export writes prompt/completion rows, one per agent
  turn, and says so (`rows_chosen`). trl's own check raises TypeError on Hermes 3 (it loops over tools=None).
- Mistral Nemo and Small 3.2 accept only call ids of 9 characters: the probe finds that form by rendering and the
  rows are written with it (`call_ids`). They, and Hermes 3, drop the text beside a tool call. Mistral Nemo renders
  the system text only inside the last user turn, so prompt/completion rows and DPO pairs would train the user turn.
- Qwen3-Coder writes arguments as `<parameter=name>value</parameter>`, GLM-4.6/4.7 and Laguna as
  `<arg_key>`/`<arg_value>` pairs; they take a dict only (a string raises).
- Granite 3.3 and SmolLM3 render no tool call: rows with calls are refused with that cause, the others train.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from tests.helpers.template_zoo import ZOO, zoo_tokenizer
from tests.exporters.test_exporters_templates import (
    AGENT,
    DPO_MARKS,
    FORBIDDEN,
    ROW_TAG,
    SFT_MARKS,
    Case,
    _assert_as_reported,
    _config,
    _export,
    _exported,
    rows_of,
)
from whileai_train.demos.tiny import build_tiny_model
from whileai_train.exporters.inspect import trained_spans

_NO_CALLS = (("parallel", "flat"), r"row 0 carries tool calls, and the tokenizer's chat template \(not one trl "
                                   r"ships\) cannot train them: it renders a tool call without its arguments in any "
                                   r"form.*Fix: .*leave out the rows with tool calls")
_BESIDE = {"lost": {"AGENT-P1", "AGENT-F2"}, "drops": {"text_beside_call": 2}}
_BESIDE_DPO = {"lost": {"AGENT-P1", "AGENT-P1X", "AGENT-F2", "AGENT-F2X"}, "drops": {"text_beside_call": 4}}

# (SFT default export, unroll=True, DPO) per template; "chosen": the default export wrote prompt/completion rows
_CASES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    # the system text is rendered only with the last user turn: the prompt alone renders it, the whole sample does not,
    # so the tokens after the prompt start at that user turn (the system row's sample, each DPO side)
    "mistral_nemo": ({**_BESIDE, "drops": {"text_beside_call": 2, "context_trained": 1}, "chosen": True},
                     {**_BESIDE, "drops": {"text_beside_call": 2, "context_trained": 1}},
                     {**_BESIDE_DPO, "drops": {"text_beside_call": 4, "context_trained": 2}}),
    "mistral_small_3_2": ({**_BESIDE, "chosen": True}, _BESIDE, _BESIDE_DPO),
    "hermes3": ({**_BESIDE, "chosen": True}, _BESIDE, _BESIDE_DPO),
    "qwen3_coder": ({"chosen": True}, {}, {}),
    "granite3_3": ({"chosen": True, "refused_rows": _NO_CALLS}, {"refused_rows": _NO_CALLS},
                   {"refused_rows": _NO_CALLS}),
    "granite4_0": ({"chosen": True}, {}, {}),
    "glm4_6": ({"chosen": True}, {}, {}),
    "glm4_7_flash": ({"chosen": True}, {}, {}),
    "laguna_xs2": ({}, {}, {}),  # its own {% generation %} block: messages rows, assistant_only_loss
    "smollm3": ({"chosen": True, "refused_rows": _NO_CALLS}, {"refused_rows": _NO_CALLS},
                {"refused_rows": _NO_CALLS}),
}
_ID_FORM = {"mistral_nemo": "9 alphanumerics", "mistral_small_3_2": "9 alphanumerics"}
TEMPLATES = sorted(_CASES)
pytestmark = pytest.mark.trainer


_GLUE = r"(?:\W|parameter|arg_key|arg_value)+"  # what separates keys and values in JSON and the XML-style forms


def _check_trained(trained: str, allowed: set[str], leaks: list[str]) -> set[str]:
    """As tests/exporters/test_exporters_templates.py checks it, with the arguments in any form these templates write: each
    trained call's order_id and tag, in order, once encoded."""
    if any(marker in trained for marker in FORBIDDEN):
        leaks.append(trained)
    assert '\\"' not in trained, trained  # an argument object encoded a second time
    for tag in re.findall(r"CALL-[A-Z0-9]+", trained):
        assert re.search(f"order_id{_GLUE}A10\\d{_GLUE}tag{_GLUE}{tag}", trained), (tag, trained)
    marks = set(AGENT.findall(trained))
    assert marks <= allowed, (marks - allowed, trained)
    return marks


def _case(name: str, kind: str) -> Case:
    return Case("custom", **_CASES[name][("sft", "unroll", "dpo").index(kind)])  # a shipped name: "custom"


def _check_ids(name: str, report: wai.ExportReport, path: Path, names: list[str]) -> None:
    """The call ids are written in the form the template demands (found by rendering), the same in calls and results."""
    assert report.call_ids == _ID_FORM.get(name)
    if name not in _ID_FORM or "parallel" not in names:
        return
    ids = re.findall(r'"(?:id|tool_call_id)": ?"([^"]+)"', path.read_text(encoding="utf-8"))
    assert ids and all(len(call_id) == 9 and call_id.isalnum() for call_id in ids), ids


# unroll=True writes what the default export chose for every template but Laguna (checked below without a trainer)
@pytest.mark.parametrize(("kind", "name"), [*(("sft", name) for name in TEMPLATES), ("unroll", "laguna_xs2")])
def test_sft_under_public_templates_trains_what_the_report_says(kind: str, name: str, tmp_path: Path) -> None:
    from trl import SFTConfig, SFTTrainer

    case, tokenizer, path = _case(name, kind), zoo_tokenizer(name), tmp_path / "sft.jsonl"
    report, names = _exported(kind, case, name, tokenizer, path)
    _check_ids(name, report, path, names)
    if case.chosen:  # the rows chosen are those unroll=True writes, and that export says so only by unrolled=True
        unrolled = _export("unroll", names, tokenizer, tmp_path / "unrolled.jsonl", validate=not case.drops)
        assert rows_of(tmp_path / "unrolled.jsonl") == rows_of(path) and unrolled.rows_chosen is None
        assert unrolled.template_drops == report.template_drops and unrolled.unrolled
    assert ("assistant_only_loss" in report.trainer_config) == (name == "laguna_xs2" and kind == "sft")
    dataset = wai.to_dataset(path)
    trainer = SFTTrainer(model=build_tiny_model(tokenizer), processing_class=tokenizer, train_dataset=dataset,
                         args=SFTConfig(**_config(tmp_path, len(dataset)), **report.trainer_config))
    assert trainer.chat_template is None  # the tokenizer's own template trains the rows, as the export rendered them
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
def test_dpo_under_public_templates_scores_what_the_report_says(name: str, tmp_path: Path) -> None:
    from trl import DPOConfig, DPOTrainer

    case, tokenizer, path = _case(name, "dpo"), zoo_tokenizer(name), tmp_path / "dpo.jsonl"
    report, names = _exported("dpo", case, name, tokenizer, path)
    _check_ids(name, report, path, names)
    dataset = wai.to_dataset(path)
    trainer = DPOTrainer(model=build_tiny_model(tokenizer), ref_model=build_tiny_model(tokenizer),
                         processing_class=tokenizer, train_dataset=dataset,
                         args=DPOConfig(**_config(tmp_path, len(dataset)), **report.trainer_config))
    assert len(trainer.train_dataset) == len(names)
    scored: set[str] = set()
    leaks: list[str] = []
    for example in trainer.train_dataset:
        prompt = tokenizer.decode(example["prompt_ids"])
        # Mistral Nemo: the user turn of the system row falls after the cut, into the scored sides (counted)
        row = ROW_TAG.search(prompt + tokenizer.decode(example["chosen_ids"])).group(1)
        chosen, rejected = DPO_MARKS[row], {f"{mark}X" for mark in DPO_MARKS[row]}
        assert not set(AGENT.findall(prompt)) & (chosen | rejected)  # the diverging turn is not in the prompt
        scored |= _check_trained(tokenizer.decode(example["chosen_ids"]), chosen, leaks)
        scored |= _check_trained(tokenizer.decode(example["rejected_ids"]), rejected, leaks)
    expected = set().union(*(DPO_MARKS[row] | {f"{mark}X" for mark in DPO_MARKS[row]} for row in names))
    _assert_as_reported(case, expected, scored, leaks)
    trainer.train()
    assert trainer.state.global_step == 1


def test_every_template_of_the_zoo_is_stored_with_its_source() -> None:
    readme = (Path(__file__).parents[1] / "templates" / "README.md").read_text(encoding="utf-8")
    for name, entry in ZOO.items():
        assert (Path(__file__).parents[1] / "templates" / entry.file).is_file()
        assert entry.file in readme and entry.source in readme and entry.license in readme, name
    assert json.loads(json.dumps(sorted(_CASES))) == sorted(set(_CASES) & set(ZOO))
