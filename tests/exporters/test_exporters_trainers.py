"""Each export mode through the real TRL trainer on the tiny model: only the intended agent turns train.

For every mode the file is loaded both ways (`load_dataset("json")` and `to_dataset`), the trainer builds
its batch, and we decode the tokens that carry loss: every turn is marked with who wrote it (USER-MARK,
TOOL-MARK, SYS-MARK, AGENT-k), so the assertion is on the words TRL will actually train.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.rollouts import REFUND_TOOLS, marked_rollout
from whileai_train.exporters.inspect import trained_spans

pytestmark = pytest.mark.trainer

FORBIDDEN = ("USER-MARK", "TOOL-MARK", "SYS-MARK")
ROWS = [marked_rollout(0), marked_rollout(1, end_on_tool=True), marked_rollout(2, user_turn=False)]
ORDER = re.compile(r"order (A10\d)")


def _load(path: Path, how: str) -> Any:
    if how == "json":
        from datasets import load_dataset

        return load_dataset("json", data_files=str(path), split="train")
    return wai.to_dataset(path)


def _common(tmp_path: Path, batch: int) -> dict[str, Any]:
    return {"output_dir": str(tmp_path / "out"), "max_steps": 2, "per_device_train_batch_size": batch,
            "use_cpu": True, "report_to": "none", "save_strategy": "no", "disable_tqdm": True, "logging_steps": 1,
            "seed": 0}


def _sft_batch(model: Any, tokenizer: Any, dataset: Any, tmp_path: Path, batch: int, *, stamps: tuple[str, ...] = (),
               **config: Any) -> Any:
    """Decode the trained spans of the trainer's first batch, then train 2 steps. `stamps`: columns the trainer's
    prepared data set still holds and its batch does not (remove_unused_columns drops them)."""
    from trl import SFTConfig, SFTTrainer

    trainer = SFTTrainer(model=model, args=SFTConfig(**_common(tmp_path, batch), **config), train_dataset=dataset,
                         processing_class=tokenizer)
    examples = []
    inputs = next(iter(trainer.get_train_dataloader()))
    assert set(stamps) <= set(trainer.train_dataset.column_names) and not set(stamps) & set(inputs)
    for ids, labels in zip(inputs["input_ids"].tolist(), inputs["labels"].tolist()):
        text = tokenizer.decode([i for i in ids if i != tokenizer.pad_token_id])
        spans = trained_spans(tokenizer, ids, [label != -100 for label in labels])
        examples.append((ORDER.search(text).group(1), text, spans))
    trainer.train()
    assert trainer.state.global_step == 2
    return examples


def _assistant_blocks(text: str) -> list[str]:
    return re.findall(r"<\|im_start\|>assistant(.*?<\|im_end\|>\n?)", text, flags=re.DOTALL)


def _check_spans(text: str, spans: list[str]) -> set[str]:
    """No forbidden marker is trained, each span lies inside one assistant turn; returns the AGENT-k trained."""
    trained = "\n".join(spans)
    for marker in FORBIDDEN:
        assert marker not in trained, (marker, spans)
    blocks = _assistant_blocks(text)
    for span in spans:
        assert any(span.strip() in block for block in blocks), (span, blocks)
    return set(re.findall(r"AGENT-\d", trained))


@pytest.mark.parametrize("how", ["json", "to_dataset"])
def test_sft_assistant_only_trains_every_agent_turn_and_nothing_else(tmp_path, tiny_model, tiny_tokenizer, how):
    path = tmp_path / "sft.jsonl"
    report = wai.export_dataset(ROWS, path, format="trl", mask_mode="assistant", system_prompt="SYS-MARK be brief",
                                tools=REFUND_TOOLS, tokenizer=tiny_tokenizer)
    assert report.n_written == 3 and report.trainer_config["assistant_only_loss"] is True
    examples = _sft_batch(tiny_model, tiny_tokenizer, _load(path, how), tmp_path, 3, assistant_only_loss=True)
    expected = {"A100": {"AGENT-1", "AGENT-2", "AGENT-3"}, "A101": {"AGENT-1", "AGENT-2"},
                "A102": {"AGENT-1", "AGENT-2", "AGENT-3"}}
    assert sorted(order for order, _, _ in examples) == ["A100", "A101", "A102"]
    for order, text, spans in examples:
        assert _check_spans(text, spans) == expected[order]
        assert text.count("SYS-MARK") == 1  # one system turn
    # the row that ended on a tool result: that output is not even in the sequence
    assert all("TOOL-MARK-3" not in text for order, text, _ in examples if order == "A101")


@pytest.mark.parametrize("how", ["json", "to_dataset"])
def test_sft_final_trains_only_the_last_agent_turn(tmp_path, tiny_model, tiny_tokenizer, how):
    path = tmp_path / "final.jsonl"
    wai.export_dataset(ROWS, path, format="trl", mask_mode="final", system_prompt="SYS-MARK be brief",
                       tokenizer=tiny_tokenizer)
    examples = _sft_batch(tiny_model, tiny_tokenizer, _load(path, how), tmp_path, 3)  # TRL's default masking
    expected = {"A100": {"AGENT-3"}, "A101": {"AGENT-2"}, "A102": {"AGENT-3"}}
    for order, text, spans in examples:
        assert _check_spans(text, spans) == expected[order]
        assert "TOOL-MARK-3" not in "".join(spans)


@pytest.mark.parametrize("how", ["json", "to_dataset"])
def test_unroll_trains_each_agent_turn_once_with_its_own_context(tmp_path, tiny_model, tiny_tokenizer, how):
    path = tmp_path / "unroll.jsonl"
    report = wai.export_dataset(ROWS, path, format="trl", unroll=True, max_tool_output_chars=16,
                                tokenizer=tiny_tokenizer)
    assert report.n_written == 8 and report.trained_messages == 8
    # "TOOL-MARK-1 A10x paid" (21 chars) once per source row, not once per unrolled sample that shows it
    assert (report.tool_output_truncated, report.tool_output_chars_cut) == (3, 15)
    examples = _sft_batch(tiny_model, tiny_tokenizer, _load(path, how), tmp_path, 8)
    seen = []
    for order, text, spans in examples:
        agents = _check_spans(text, spans)
        assert len(agents) == 1
        (agent,) = agents
        seen.append((order, agent))
        # the trained turn is the last one in its sample: nothing after it
        assert text.rstrip().endswith("<|im_end|>") and agent in _assistant_blocks(text)[-1]
    assert sorted(seen) == sorted([("A100", "AGENT-1"), ("A100", "AGENT-2"), ("A100", "AGENT-3"),
                                   ("A101", "AGENT-1"), ("A101", "AGENT-2"), ("A102", "AGENT-1"),
                                   ("A102", "AGENT-2"), ("A102", "AGENT-3")])


def _pair(task: int) -> dict[str, Any]:
    """A pass/fail pair whose sides use different tool-call ids everywhere (the divergence must ignore them)."""
    order = f"A10{task}"

    def side(tag: str, call_prefix: str, result: str, reply: str) -> dict[str, Any]:
        return {"messages": [
            {"role": "system", "content": "SYS-MARK be brief"},
            {"role": "user", "content": f"USER-MARK-1 refund order {order}"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": f"{call_prefix}1", "type": "function",
             "function": {"name": "lookup", "arguments": {"order_id": order, "tag": "AGENT-1"}}}]},
            {"role": "tool", "tool_call_id": f"{call_prefix}1", "content": f"TOOL-MARK-1 {order} paid"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": f"{call_prefix}2", "type": "function",
             "function": {"name": "refund", "arguments": json_args(order, tag)}}]},
            {"role": "tool", "tool_call_id": f"{call_prefix}2", "content": result},
            {"role": "assistant", "content": reply},
        ], "task_id": f"t{task}", "calibration": {"task_id": f"t{task}", "n": 8, "pass_rate": 0.5 + task / 8}}

    return {"chosen": side("CHOSEN-MARK", "call_", "TOOL-MARK-3 ok", "AGENT-3 done"),
            "rejected": side("REJECTED-MARK", "other_", "TOOL-MARK-4 error", "AGENT-3 sorry")}


def json_args(order: str, tag: str) -> str:
    import json

    return json.dumps({"order_id": order, "tag": tag})  # arguments as a JSON string, as the OpenAI wire has them


@pytest.mark.parametrize("how", ["json", "to_dataset"])
def test_dpo_pairs_score_only_the_diverging_agent_turn(tmp_path, tiny_model, tiny_tokenizer, how):
    from trl import DPOConfig, DPOTrainer

    from whileai_train.demos.tiny import build_tiny_model

    path = tmp_path / "dpo.jsonl"
    report = wai.export_preference([_pair(0), _pair(1)], path, format="trl", tokenizer=tiny_tokenizer)
    assert report.n_written == 2 and report.trl_turns_cut == 2
    dataset = _load(path, how)
    # the stamps ride along as columns DPOTrainer does not read (it drops them before the batch)
    assert [stamp["pass_rate"] for stamp in dataset["calibration"]] == [0.5, 0.625]
    trainer = DPOTrainer(model=tiny_model, ref_model=build_tiny_model(tiny_tokenizer),
                         args=DPOConfig(**_common(tmp_path, 2)), train_dataset=dataset,
                         processing_class=tiny_tokenizer)
    inputs = next(iter(trainer.get_train_dataloader()))
    marks = []
    for ids, mask in zip(inputs["input_ids"].tolist(), inputs["completion_mask"].tolist()):
        spans = trained_spans(tiny_tokenizer, ids, mask)
        scored = "".join(spans)
        context = tiny_tokenizer.decode([i for i, m in zip(ids, mask) if not m])
        for marker in (*FORBIDDEN, "AGENT-1", "AGENT-3"):
            assert marker not in scored, (marker, scored)
        assert "AGENT-1" in context and "TOOL-MARK-1" in context  # the shared prefix is the prompt
        marks.append("CHOSEN" if "CHOSEN-MARK" in scored else "REJECTED" if "REJECTED-MARK" in scored else None)
    assert sorted(marks) == ["CHOSEN", "CHOSEN", "REJECTED", "REJECTED"]
    trainer.train()
    assert trainer.state.global_step == 2


@pytest.mark.parametrize("how", ["json", "to_dataset"])
def test_grpo_prompts_carry_reward_columns_and_no_reply(tmp_path, tiny_model, tiny_tokenizer, how):
    from trl import GRPOConfig, GRPOTrainer

    rows = [dict(marked_rollout(task), privileged={"gold": f"A10{task}"}) for task in range(2) for _ in range(2)]
    path = tmp_path / "prompts.jsonl"
    report = wai.export_prompts(rows, path, system_prompt="SYS-MARK be brief")
    assert report.n_written == 2 and report.dropped == {"duplicate_prompt": 2}
    calls: list[dict[str, Any]] = []

    def refund_reward(prompts, completions, **kwargs):
        calls.append({"prompts": prompts, **kwargs})
        return [1.0 if "A10" in c[0]["content"] else 0.0 for c in completions]

    config = GRPOConfig(**_common(tmp_path, 2), num_generations=2, max_completion_length=6)
    trainer = GRPOTrainer(model=tiny_model, reward_funcs=refund_reward, args=config, train_dataset=_load(path, how),
                          processing_class=tiny_tokenizer)
    trainer.train()
    assert trainer.state.global_step == 2
    assert calls
    for call in calls:
        assert {"task", "task_id", "privileged", "trainer_state"} <= set(call)
        for prompt, task, gold in zip(call["prompts"], call["task"], call["privileged"]):
            assert [m["role"] for m in prompt] == ["system", "user"]
            text = " ".join(m["content"] for m in prompt)
            assert "AGENT-" not in text and "TOOL-MARK" not in text
            assert gold == {"gold": "A10" + task[-1]}  # the column arrives as written, per prompt


def test_a_row_without_an_agent_turn_would_sink_the_whole_set_so_it_is_dropped(tmp_path, tiny_model, tiny_tokenizer):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    config = SFTConfig(**_common(tmp_path, 2), assistant_only_loss=True)
    lonely = {"messages": [{"role": "user", "content": "USER-MARK nobody answered"}]}
    # what TRL does with such a row (docs/trl_facts.md): the whole set is refused
    with pytest.raises(RuntimeError, match="no assistant"):
        SFTTrainer(model=tiny_model, args=config, processing_class=tiny_tokenizer,
                   train_dataset=Dataset.from_list([{"messages": [{"role": "user", "content": "hi"},
                                                                  {"role": "assistant", "content": "yo"}]}, lonely]))
    path = tmp_path / "sft.jsonl"
    report = wai.export_dataset([ROWS[0], lonely], path, format="trl")
    assert report.dropped == {"no_assistant_turn": 1}
    trainer = SFTTrainer(model=tiny_model, args=config, processing_class=tiny_tokenizer, train_dataset=_load(path, "json"))
    assert len(trainer.train_dataset) == 1


def test_messages_rows_without_assistant_only_loss_train_everything(tmp_path, tiny_model, tiny_tokenizer):
    """Why the report says `assistant_only_loss=True`: without it TRL trains tool output, user and system."""
    from trl import SFTConfig, SFTTrainer

    path = tmp_path / "sft.jsonl"
    report = wai.export_dataset([ROWS[0]], path, format="trl", system_prompt="SYS-MARK")
    assert report.trainer_config == {"assistant_only_loss": True}
    trainer = SFTTrainer(model=tiny_model, args=SFTConfig(**_common(tmp_path, 1)), processing_class=tiny_tokenizer,
                         train_dataset=_load(path, "json"))
    example = trainer.train_dataset[0]
    trained = "".join(trained_spans(tiny_tokenizer, example["input_ids"], [l != -100 for l in example["labels"]]))
    assert all(marker in trained for marker in FORBIDDEN)


def test_rows_trl_would_drop_after_truncation_are_counted_exactly(tmp_path, tiny_model, tiny_tokenizer):
    """docs/trl_facts.md: rows with no trained token left after max_length truncation are dropped silently."""
    from trl import SFTConfig, SFTTrainer

    from whileai_train.demos.rollouts import refund_rollouts

    rows = list(refund_rollouts(12, seed=5))  # some with a user turn: prompts of different lengths
    out, _ = wai.training_rows(rows, format="trl", mask_mode="final", check="warn")  # half of them fail
    prompt_tokens = [len(tiny_tokenizer(tiny_tokenizer.apply_chat_template(row["prompt"], tokenize=False,
                                                                         add_generation_prompt=True),
                                        add_special_tokens=False)["input_ids"]) for row in out]
    max_length = sorted(prompt_tokens)[len(prompt_tokens) // 2]
    assert min(prompt_tokens) < max_length <= max(prompt_tokens)
    path = tmp_path / "final.jsonl"
    report = wai.export_dataset(rows, path, format="trl", mask_mode="final", tokenizer=tiny_tokenizer,
                                max_length=max_length, check="warn")
    assert 0 < report.too_long_untrained < report.n_written
    trainer = SFTTrainer(model=tiny_model, args=SFTConfig(**_common(tmp_path, 2), max_length=max_length),
                         processing_class=tiny_tokenizer, train_dataset=_load(path, "json"))
    assert len(trainer.train_dataset) == report.n_written - report.too_long_untrained


def test_pairs_dpo_would_drop_for_a_long_prompt_are_counted_exactly(tmp_path, tiny_model, tiny_tokenizer):
    from trl import DPOConfig, DPOTrainer

    from whileai_train.demos.tiny import build_tiny_model
    from whileai_train.exporters.preference import preference_rows

    rows = []
    for k in range(6):  # prompts of six lengths
        pair = _pair(k)
        for side in ("chosen", "rejected"):
            pair[side]["messages"][1]["content"] += " please help" * (4 * k)
        rows.append(pair)
    out, _ = preference_rows(rows)
    prompt_tokens = sorted(len(tiny_tokenizer(tiny_tokenizer.apply_chat_template(
        row["prompt"], tokenize=False, add_generation_prompt=True), add_special_tokens=False)["input_ids"])
        for row in out)
    max_length = prompt_tokens[len(prompt_tokens) // 2]
    path = tmp_path / "dpo.jsonl"
    report = wai.export_preference(rows, path, tokenizer=tiny_tokenizer, max_length=max_length)
    assert 0 < report.too_long_untrained < report.n_written
    trainer = DPOTrainer(model=tiny_model, ref_model=build_tiny_model(tiny_tokenizer),
                         args=DPOConfig(**_common(tmp_path, 2), max_length=max_length),
                         train_dataset=_load(path, "json"), processing_class=tiny_tokenizer)
    assert len(trainer.train_dataset) == report.n_written - report.too_long_untrained


# --- what the trainer learns from: the final reply, the stamps, the train-step check ------------------------


def _calibration(task: int) -> dict[str, Any]:
    return {"task_id": f"marked-{task}", "student": "tiny", "n": 8, "pass_rate": task / 8, "pass_rate_ci95": None,
            "mean_kl": None}


@pytest.mark.parametrize("how", ["json", "to_dataset"])
def test_sft_trains_a_repeated_final_reply_once_refuses_failing_rows_then_trains_them_on_purpose(
        tmp_path, tiny_model, tiny_tokenizer, how):
    from whileai_train.errors import TrainingSelectionError

    repeated = dict(marked_rollout(0), calibration=_calibration(1))  # steps end with the reply final_text repeats
    repeated["steps"].append({"text": "AGENT-3 refunded A100"})
    differing = dict(marked_rollout(1), calibration=_calibration(2))  # final_text contradicts the last step
    differing["steps"].append({"text": "AGENT-3 refunded A101"})
    differing["final_text"] = "AGENT-4 refund failed for A101"
    failing = dict(marked_rollout(2), reward=0.0, calibration=_calibration(3))
    rows = [repeated, differing, failing]
    path = tmp_path / "sft.jsonl"
    with pytest.raises(TrainingSelectionError, match="1 of 3 rows have a failing reward") as caught:
        wai.export_dataset(rows, path, format="trl", tokenizer=tiny_tokenizer, max_tool_output_chars=200)
    assert caught.value.tasks == {"marked-2": 1} and not path.exists()
    report = wai.export_dataset(rows, path, format="trl", tokenizer=tiny_tokenizer, max_tool_output_chars=200,
                                check="warn")
    assert (report.final_text_repeated, report.final_text_differs, report.selection.failing) == (1, 1, 1)
    dataset = _load(path, how)
    assert [stamp["pass_rate"] for stamp in dataset["calibration"]] == [0.125, 0.25, 0.375]
    assert dataset["reward"] == [1.0, 1.0, 0.0] and dataset["task_id"] == ["marked-0", "marked-1", "marked-2"]
    examples = _sft_batch(tiny_model, tiny_tokenizer, dataset, tmp_path, 3, assistant_only_loss=True,
                          stamps=("calibration", "reward", "task_id", "markers", "tool_output_chars_cut"))
    trained = {order: "\n".join(spans) for order, _text, spans in examples}
    texts = {order: text for order, text, _spans in examples}
    assert texts["A100"].count("AGENT-3 refunded A100") == 1 and trained["A100"].count("AGENT-3") == 1
    assert "AGENT-3 refunded A101" in trained["A101"] and "AGENT-4 refund failed" in trained["A101"]
    assert "AGENT-3 refunded A102" in trained["A102"]  # the failing row, trained because check="warn" said so
    for _order, text, spans in examples:
        _check_spans(text, spans)  # nothing but agent turns trained, in every row


def test_unroll_trains_a_repeated_final_reply_in_one_sample(tmp_path, tiny_model, tiny_tokenizer):
    repeated = marked_rollout(0)
    repeated["steps"].append({"text": "AGENT-3 refunded A100"})
    path = tmp_path / "unroll.jsonl"
    report = wai.export_dataset([repeated], path, format="trl", unroll=True, tokenizer=tiny_tokenizer)
    assert report.n_written == 3 and report.final_text_repeated == 1
    examples = _sft_batch(tiny_model, tiny_tokenizer, _load(path, "json"), tmp_path, 3)
    assert sorted(agent for _order, text, spans in examples for agent in _check_spans(text, spans)) == [
        "AGENT-1", "AGENT-2", "AGENT-3"]


@pytest.mark.parametrize("how", ["json", "to_dataset"])
def test_grpo_reward_functions_receive_calibration_and_the_group(tmp_path, tiny_model, tiny_tokenizer, how):
    from trl import GRPOConfig, GRPOTrainer

    rows = []
    for task, rewards in ((0, [1.0, 0.0, 0.0]), (1, [1.0, 1.0])):
        for reward in rewards:
            rows.append(dict(marked_rollout(task), reward=reward, calibration=_calibration(3 if task == 0 else 8),
                             reference=f"refund A10{task}"))
    path = tmp_path / "prompts.jsonl"
    report = wai.export_prompts(rows, path, columns=["task_id", "reference"])
    assert report.selection.tasks_used == 1 and report.selection.tasks_given == 2
    calls: list[dict[str, Any]] = []

    def refund_reward(prompts, completions, **kwargs):
        calls.append(kwargs)
        return [float(len(c[0]["content"]) % 2) for c in completions]

    config = GRPOConfig(**_common(tmp_path, 2), num_generations=2, max_completion_length=6)
    trainer = GRPOTrainer(model=tiny_model, reward_funcs=refund_reward, args=config, train_dataset=_load(path, how),
                          processing_class=tiny_tokenizer)
    trainer.train()
    assert trainer.state.global_step == 2 and calls
    expected = {"marked-0": (_calibration(3), 8, 1, 2, "refund A100"), "marked-1": (_calibration(8), 8, 2, 0,
                                                                                  "refund A101")}
    seen = set()
    for call in calls:
        assert {"task", "calibration", "k", "passes", "fails", "task_id", "reference"} <= set(call)
        for task, stamp, k, passes, fails, reference in zip(call["task"], call["calibration"], call["k"],
                                                           call["passes"], call["fails"], call["reference"]):
            assert (stamp, k, passes, fails, reference) == expected[task]
            seen.add(task)
    assert seen == {"marked-0", "marked-1"}
