"""Each shape of tests/formats/shapes/ exported for SFT and put through TRL's SFTTrainer on the tiny model: the
tokens that carry loss are the agent's own (its calls and replies), never the ask, the system prompt, a tool's
result or the model's thinking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.exporters.inspect import trained_spans

pytestmark = pytest.mark.trainer

SHAPES = sorted(path.name for path in (Path(__file__).parent / "shapes").glob("*.jsonl"))
NEVER_TRAINED = ("Can I get my", "Please cancel order", "refund desk of Kettle", "delivered", "refund limit exceeded",
                 "processing", "whatever happens", "wrap up")


@pytest.mark.parametrize("shape", SHAPES)
def test_only_the_agents_turns_train_in_every_shape(shape: str, tmp_path: Path, tiny_model: Any,
                                                    tiny_tokenizer: Any) -> None:
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    path = tmp_path / "sft.jsonl"
    report = wai.export_dataset(Path(__file__).parent / "shapes" / shape, path, format="trl", mask_mode="assistant",
                                tokenizer=tiny_tokenizer, check="warn")
    assert report.n_written == 8 and report.trainer_config["assistant_only_loss"] is True
    config = SFTConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=8, use_cpu=True,
                       report_to="none", save_strategy="no", disable_tqdm=True, seed=0, assistant_only_loss=True)
    trainer = SFTTrainer(model=tiny_model, args=config, processing_class=tiny_tokenizer,
                         train_dataset=load_dataset("json", data_files=str(path), split="train"))
    inputs = next(iter(trainer.get_train_dataloader()))
    replies = 0
    for ids, labels in zip(inputs["input_ids"].tolist(), inputs["labels"].tolist(), strict=True):
        trained = "\n".join(trained_spans(tiny_tokenizer, ids, [label != -100 for label in labels]))
        for text in NEVER_TRAINED:
            assert text not in trained, (text, trained)
        assert "lookup_order" in trained  # the agent's call is trained
        replies += "I refunded 31.40 dollars" in trained or "Order B7 is cancelled" in trained
    assert replies == 8
