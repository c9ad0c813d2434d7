"""The run's context: the trainer's arguments, the model and PEFT configs, the library versions, project, group
and tags, kept on the run and returned by get_run; list_runs filters on the tags (local store and the real serve)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from tests.helpers.serve_helpers import ServeProcess
from whileai_train.errors import ConfigError
from whileai_train.runs.config import SenderConfig

KEY = "context-key-0123456789"


@pytest.mark.trainer
def test_a_peft_trainer_run_keeps_its_arguments_configs_versions_project_and_tags(tiny_model: Any,
                                                                                  tiny_tokenizer: Any,
                                                                                  tmp_path: Path) -> None:
    import trl
    from peft import LoraConfig, get_peft_model
    from tests.callbacks.test_callback import lm_dataset, trainer_args
    from transformers import Trainer

    model = get_peft_model(tiny_model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    cb = wai.WhileCallback(tags=["ablation", "lora"], group="sweep-1")
    args = trainer_args(tmp_path, project="desk-agents", run_name="lora-r4", learning_rate=3e-4)
    trainer = Trainer(model=model, args=args, train_dataset=lm_dataset(tiny_tokenizer), callbacks=[cb])
    wai.track(trainer).train()

    record = wai.get_run(cb.run.id)
    assert record["name"] == "lora-r4" and record["project"] == "desk-agents" and record["group"] == "sweep-1"
    assert record["tags"] == ["ablation", "lora"]
    context = record["context"]
    assert context["args"]["learning_rate"] == 3e-4 and context["args"]["run_name"] == "lora-r4"
    assert context["model_config"]["hidden_size"] == tiny_model.config.hidden_size
    assert context["peft_config"]["default"]["r"] == 4
    assert sorted(context["peft_config"]["default"]["target_modules"]) == ["q_proj", "v_proj"]
    import peft
    import torch
    import transformers

    assert {k: context["versions"][k] for k in ("torch", "transformers", "trl", "peft")} == {
        "torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__,
        "peft": peft.__version__}
    assert "whileai_train" in context["versions"]
    assert [r["id"] for r in wai.list_runs(tag="lora")] == [cb.run.id]
    assert wai.list_runs(tag="full-finetune") == []


def test_tags_reach_the_platform_and_list_runs_filters_them_there(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with ServeProcess(tmp_path / "server-home", env={"WHILEAI_SERVER_KEY": KEY}) as server:
        monkeypatch.setenv("WHILEAI_API_KEY", KEY)
        monkeypatch.setenv("WHILEAI_API_URL", server.url)
        fast = SenderConfig(flush_interval_s=0.05)
        with wai.run(name="tagged", tags=["nightly"], project="p", config=fast) as tagged:
            tagged.log(1, loss=0.5)
        with wai.run(name="plain", config=fast) as plain:
            plain.log(1, loss=0.5)
        assert [r["id"] for r in wai.list_runs(tag="nightly")] == [tagged.id]
        assert {r["id"] for r in wai.list_runs()} == {tagged.id, plain.id}
        record = wai.get_run(tagged.id)
        assert record["where"] == "platform" and record["tags"] == ["nightly"] and record["project"] == "p"
        assert wai.get_run(plain.id)["tags"] == []


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"tags": "nightly"}, "tags='nightly' is a string; a list is expected"),
    ({"tags": ["ok", 3]}, "tags has 3; every entry must be a non-empty string"),
    ({"project": ""}, "project='' must be a non-empty string"),
])
def test_context_mistakes_raise_with_the_fix(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        wai.run(name="x", **kwargs)
