"""wai.evaluate and `whileai-train eval`: checkpoint + tasks + reward functions in, rows for delta_report out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.demos.grpo_monitor import exact_answer, make_tasks

# a test here may build the session's warmed-up desk model (conftest.desk_dir, ~100 CPU seconds): a generous
# deadline for a loaded machine
pytestmark = [pytest.mark.trainer, pytest.mark.timeout(1800), pytest.mark.usefixtures("one_thread")]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sums_models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two tiny models on the demo's sums: 5 SFT steps (rarely right) and 80 (right more often), saved."""
    import torch

    from whileai_train.demos.grpo_monitor import warm_up
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out = []
    try:
        for steps in (5, 80):
            target = tmp_path_factory.mktemp(f"sums{steps}")
            tokenizer = build_tiny_tokenizer()
            model = build_tiny_model(tokenizer)
            warm_up(model, tokenizer, make_tasks(20, 0), str(target / "sft"), steps=steps)
            model.save_pretrained(target)
            tokenizer.save_pretrained(target)
            out.append(target)
    finally:
        torch.set_num_threads(threads)
    return out[0], out[1]


def test_rows_go_straight_into_delta_report_and_the_same_call_gives_the_same_rows(
        sums_models: tuple[Path, Path]) -> None:
    before_dir, after_dir = sums_models
    tasks = make_tasks(20, 0)
    before = wai.evaluate(str(before_dir), tasks, exact_answer, k=4, runs=3, max_completion_length=8, progress=False)
    after = wai.evaluate(str(after_dir), tasks, exact_answer, k=4, runs=3, max_completion_length=8, progress=False)
    assert len(before) == len(after) == 20 * 4 * 3
    assert sorted({r["lineage"]["eval_run"] for r in after}) == [0, 1, 2]
    report = wai.delta_report(before, after)
    assert report.not_comparable == {} and report.headline_verdict == "PASS", str(report)
    assert report.eval_runs_before == report.eval_runs_after == 3 and report.k_before == report.k_after == 12
    assert wai.pass_at(after).pass_at_1 > wai.pass_at(before).pass_at_1
    again = wai.evaluate(str(after_dir), tasks, exact_answer, k=4, runs=3, max_completion_length=8, progress=False)
    assert again == after


def test_each_row_carries_what_the_measures_read(sums_models: tuple[Path, Path]) -> None:
    _, after_dir = sums_models
    tasks = make_tasks(3, 0)
    tasks[0]["calibration"] = {"task_id": tasks[0]["task_id"], "n": 8, "pass_rate": 0.5}
    tasks[0]["markers"] = {"old_rollout": 1.0}  # describes an earlier rollout: not carried

    def brevity(completions: list[str], completion_ids: list[list[int]], **kwargs: Any) -> list[float]:
        return [max(0.0, 1.0 - 0.1 * len(ids)) for ids in completion_ids]

    rows = wai.evaluate(str(after_dir), tasks, [exact_answer, brevity], reward_weights=[0.5, 0.5], k=2,
                        seed=3, max_completion_length=8, temperature=0.7, progress=False)
    first = rows[0]
    assert first["task_id"] == tasks[0]["task_id"] and first["answer"] == tasks[0]["answer"]
    assert first["calibration"] == tasks[0]["calibration"] and "markers" not in first
    assert first["prompt"] == tasks[0]["prompt"] and first["final_text"] == first["completion"]
    assert first["steps"] == [] and first["finish_reason"] in ("stop", "length")
    assert 0 < first["completion_tokens"] <= 8
    assert first["reward"] == pytest.approx(0.5 * first["exact_answer"] + 0.5 * first["brevity"])
    assert [r["rollout_index"] for r in rows] == [0, 1] * 3
    assert first["lineage"] == {"eval_run": 0, "source": "eval", "model": str(after_dir), "adapter": None, "seed": 3, "k": 2,
                                "engine": "transformers", "temperature": 0.7, "top_p": 1.0, "top_k": 0,
                                "max_completion_length": 8}
    report = wai.pass_at(rows)
    assert report.config == {"temperature": 0.7, "reply_budget": 8}
    wai.style_markers(rows)  # the marker families read the rows as trajectories


def test_eval_rows_are_eval_sourced_in_every_selector(tmp_path: Path) -> None:
    """evaluate stamps lineage.source = "eval", so a selector handed its rows counts them."""
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer()
    build_tiny_model(tokenizer).save_pretrained(tmp_path)  # untrained: the sampling, not the answers, is tested
    tokenizer.save_pretrained(tmp_path)

    def alternate(completions: list[str], **kwargs: Any) -> list[float]:
        return [float(i % 2) for i in range(len(completions))]  # every group of k=4 is mixed

    rows = wai.evaluate(str(tmp_path), make_tasks(3, 0), alternate, k=4, max_completion_length=6, progress=False)
    assert len(rows) == 12 and {row["lineage"]["source"] for row in rows} == {"eval"}
    kept, report = wai.optimize(rows, mode="rl", truncated="keep")  # 6 tokens of an untrained model: cut off
    assert kept, str(report)
    assert report.eval_sourced == len(kept) and report.eval_sourced_rows == sorted(report.eval_sourced_rows)
    assert any(warning.startswith(f"eval_sourced: {len(kept)} rows") for warning in report.warnings)
    kept, sft = wai.optimize(rows, mode="sft")
    assert kept and sft.eval_sourced == len(kept)


def test_a_killed_evaluation_resumes_and_holds_every_task_rollout_and_run_once(sums_models: tuple[Path, Path],
                                                                                tmp_path: Path) -> None:
    _, after_dir = sums_models
    tasks_path = tmp_path / "tasks.jsonl"
    tasks_path.write_text("".join(json.dumps(t) + "\n" for t in make_tasks(12, 1)), encoding="utf-8")
    out = tmp_path / "after.jsonl"
    script = ("import sys, time, torch\n"
              "torch.set_num_threads(1)\n"
              "import whileai_train as wai\n"
              "from whileai_train.demos.grpo_monitor import exact_answer\n"
              "def slow(completions, **kw):\n"
              "    time.sleep(0.4)\n"
              "    return exact_answer(completions=completions, **kw)\n"
              "wai.evaluate(sys.argv[1], sys.argv[2], [slow], k=2, runs=2, batch_size=4, max_completion_length=8,"
              " output=sys.argv[3], progress=False)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, str(after_dir), str(tasks_path), str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= 12:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        if proc.stderr:
            proc.stderr.close()
    written = out.read_bytes().count(b"\n")
    assert 12 <= written < 48  # killed half way
    with out.open("a", encoding="utf-8") as handle:
        handle.write('{"task_id": "cut by the kil')  # a line the kill left half-written

    def slow(completions: list[str], **kwargs: Any) -> list[float]:
        return exact_answer(completions=completions, **kwargs)

    slow.__name__ = "slow"
    resumed = wai.evaluate(str(after_dir), str(tasks_path), [slow], k=2, runs=2, batch_size=4,
                           max_completion_length=8, output=out, progress=False)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    keys = [(r["task_id"], r["rollout_index"], r["lineage"]["eval_run"]) for r in lines]
    assert len(keys) == len(set(keys)) == 12 * 2 * 2
    whole = wai.evaluate(str(after_dir), str(tasks_path), [slow], k=2, runs=2, batch_size=4,
                         max_completion_length=8, progress=False)
    assert resumed == whole  # a resumed evaluation gives the rows an uninterrupted one gives


def test_bad_input_is_a_typed_error_naming_the_row_or_function_and_written_rows_stay(
        sums_models: tuple[Path, Path], tmp_path: Path) -> None:
    _, after_dir = sums_models
    tasks = make_tasks(6, 2)
    with pytest.raises(wai.RowError, match=r"row 2, field 'prompt'.*Fix: give every task a 'prompt'"):
        wai.evaluate(str(after_dir), [*tasks[:2], {"question": "no prompt here"}], exact_answer, progress=False)
    with pytest.raises(wai.ConfigError, match=r"does not load.*Fix: pass a folder written by save_pretrained"):
        wai.evaluate(str(tmp_path / "no-such-model"), tasks, exact_answer, progress=False)
    with pytest.raises(wai.ConfigError, match="taken by a column of the tasks, which each row carries"):
        def answer(completions: list[str], **kwargs: Any) -> list[float]:
            return [0.0] * len(completions)

        wai.evaluate(str(after_dir), tasks, answer, progress=False)

    calls = []

    def flaky(completions: list[str], **kwargs: Any) -> list[float]:
        calls.append(len(completions))
        if len(calls) > 1:
            raise KeyError("answer_key")
        return [1.0] * len(completions)

    out = tmp_path / "rows.jsonl"
    with pytest.raises(wai.RewardFunctionError, match=r"'flaky' raised KeyError.*scoring rows 2, 3.*Fix:") as caught:
        wai.evaluate(str(after_dir), tasks, flaky, k=2, batch_size=4, max_completion_length=4, output=out,
                     progress=False)
    assert caught.value.function == "flaky" and caught.value.rows == [2, 3]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4  # the first batch's rows stay

    def short(completions: list[str], **kwargs: Any) -> list[float]:
        return [1.0]

    with pytest.raises(wai.RewardFunctionError, match=r"'short' returned 1 rewards for 4 completions.*Fix: return "):
        wai.evaluate(str(after_dir), tasks, short, k=2, batch_size=4, max_completion_length=4, progress=False)
    with pytest.raises(wai.ConfigError, match=r"holds rows of another evaluation \(line 1: seed=0, this call: 1\)"):
        wai.evaluate(str(after_dir), tasks, flaky, k=2, seed=1, batch_size=4, max_completion_length=4, output=out,
                     progress=False)


def test_a_peft_adapter_folder_loads_on_its_base(sums_models: tuple[Path, Path], tmp_path: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    _, base = sums_models
    adapter = get_peft_model(AutoModelForCausalLM.from_pretrained(base),
                             LoraConfig(r=2, target_modules=["q_proj", "v_proj"], init_lora_weights=True))
    adapter.save_pretrained(tmp_path / "adapter")
    tasks = make_tasks(4, 0)
    through = wai.evaluate(str(tmp_path / "adapter"), tasks, exact_answer, k=2, max_completion_length=6,
                           progress=False)
    plain = wai.evaluate(str(base), tasks, exact_answer, k=2, max_completion_length=6, progress=False)
    assert through[0]["lineage"]["adapter"] == str(tmp_path / "adapter")
    assert through[0]["lineage"]["model"] == str(base)
    assert [r["completion"] for r in through] == [r["completion"] for r in plain]  # LoRA starts at zero


def test_tool_calling_tasks_are_sampled_with_the_tool_loop(desk_dir: Path) -> None:
    from whileai_train.demos.refund_desk import TOOLS, correct_refund
    from whileai_train.demos.refund_desk import make_tasks as desk_tasks

    rows = wai.evaluate(str(desk_dir), desk_tasks(6, 0), correct_refund, tools=TOOLS, k=2,
                        max_completion_length=128, progress=False)
    called = [r for r in rows if r["tool_calls_made"]]
    assert called
    row = called[0]
    assert row["messages"][: len(row["prompt"])] == row["prompt"]
    assert row["messages"][len(row["prompt"]):] == row["completion"]
    assert any(m["role"] == "tool" for m in row["completion"])
    assert wai.trace_markers([row])[0]["markers"] is not None


def test_engine_auto_samples_with_vllm_where_it_can_run(sums_models: tuple[Path, Path],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.machinery
    import types

    import torch

    _, model_dir = sums_models
    calls: list[dict[str, Any]] = []

    class SamplingParams:
        def __init__(self, **kwargs: Any) -> None:
            self.kwargs = kwargs

    class LLM:
        def __init__(self, model: str, seed: int, **kwargs: Any) -> None:
            calls.append({"model": model, "seed": seed})
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(model)
            self.ids = tokenizer("five")["input_ids"] + [tokenizer.eos_token_id]

        def generate(self, prompts: list[dict[str, Any]], sampling_params: SamplingParams, use_tqdm: bool) -> Any:
            calls.append({"prompts": len(prompts), **sampling_params.kwargs})
            choice = types.SimpleNamespace(token_ids=self.ids)
            return [types.SimpleNamespace(outputs=[choice] * sampling_params.kwargs["n"]) for _ in prompts]

    fake = types.ModuleType("vllm")
    fake.LLM, fake.SamplingParams = LLM, SamplingParams  # type: ignore[attr-defined]
    fake.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    tasks = make_tasks(5, 0)
    rows = wai.evaluate(str(model_dir), tasks, exact_answer, k=3, max_completion_length=8, progress=False)
    assert rows[0]["lineage"]["engine"] == "vllm" and rows[0]["completion"] == "five"
    assert calls[0] == {"model": str(model_dir), "seed": 0}
    assert calls[1]["prompts"] == 5 and calls[1]["n"] == 3 and calls[1]["top_k"] == -1 and calls[1]["max_tokens"] == 8
    with pytest.raises(wai.ConfigError, match="engine='vllm' cannot run: the model is a loaded module"):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        wai.evaluate(AutoModelForCausalLM.from_pretrained(model_dir), tasks, exact_answer,
                     tokenizer=AutoTokenizer.from_pretrained(model_dir), engine="vllm", progress=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    plain = wai.evaluate(str(model_dir), tasks, exact_answer, k=3, max_completion_length=8, progress=False)
    assert plain[0]["lineage"]["engine"] == "transformers"


def test_the_progress_bar_counts_prompts_and_is_off_when_asked(sums_models: tuple[Path, Path],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _, model_dir = sums_models
    tasks = make_tasks(6, 0)
    wai.evaluate(str(model_dir), tasks, exact_answer, k=2, runs=2, max_completion_length=4, progress=True)
    shown = capsys.readouterr().err
    assert "evaluate" in shown and "12/12" in shown
    wai.evaluate(str(model_dir), tasks, exact_answer, k=2, max_completion_length=4, progress=False)
    wai.evaluate(str(model_dir), tasks, exact_answer, k=2, max_completion_length=4)  # stderr is not a terminal
    assert "evaluate" not in capsys.readouterr().err


def test_the_eval_command_writes_the_rows_delta_reads(sums_models: tuple[Path, Path], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from whileai_train.cli import main

    before_dir, after_dir = sums_models
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in make_tasks(20, 0)), encoding="utf-8")
    reward = "whileai_train.demos.grpo_monitor:exact_answer"
    for name, model in (("before", before_dir), ("after", after_dir)):
        code = main(["eval", str(model), str(tasks), "--reward", reward, "--k", "4", "--runs", "3",
                     "--max-completion-length", "8", "-o", str(tmp_path / f"{name}.jsonl"), "--no-progress"])
        assert code == 0
    printed = capsys.readouterr().out
    assert f"eval: 240 rows (20 tasks x k=4 x runs=3) from {after_dir} -> {tmp_path / 'after.jsonl'}" in printed
    assert "pass_at: pass@1" in printed
    assert main(["delta", str(tmp_path / "before.jsonl"), str(tmp_path / "after.jsonl")]) == 0
    assert "delta: PASS" in capsys.readouterr().out
    assert main(["eval", str(after_dir), str(tasks), "--reward", "no_such_module:f", "-o",
                 str(tmp_path / "x.jsonl")]) == 2
    assert "cannot import 'no_such_module'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def raw_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model as built (no training), saved: enough to sample from."""
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    target = tmp_path_factory.mktemp("raw")
    tokenizer = build_tiny_tokenizer()
    build_tiny_model(tokenizer).save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def test_a_reward_function_named_reward_is_the_reward_column(raw_model: Path) -> None:
    """TRL scripts' most common name: alone at weight 1 its column is the sum column; beside another function
    (or weighted) the sum takes `reward`, and the refusal says so."""
    def reward(completions: list[str], **kwargs: Any) -> list[float]:
        return [float(len(c) % 2) for c in completions]

    tasks = make_tasks(3, 0)
    rows = wai.evaluate(str(raw_model), tasks, reward, k=2, max_completion_length=4, progress=False)
    assert len(rows) == 6 and [r["reward"] for r in rows] == [float(len(r["completion"]) % 2) for r in rows]
    with pytest.raises(wai.ConfigError, match=r"\['reward'\] are taken: `reward` is the weighted sum"):
        wai.evaluate(str(raw_model), tasks, [reward, exact_answer], k=2, max_completion_length=4, progress=False)
    with pytest.raises(wai.ConfigError, match=r"\['reward'\] are taken: `reward` is the weighted sum"):
        wai.evaluate(str(raw_model), tasks, reward, reward_weights=[2.0], progress=False)
    with pytest.raises(wai.ConfigError, match=r"names \['reward'\] repeat"):
        wai.evaluate(str(raw_model), tasks, [reward, reward], progress=False)


def test_the_eval_command_imports_the_reward_module_from_the_working_directory(raw_model: Path,
                                                                                 tmp_path: Path) -> None:
    """`whileai-train eval MODEL tasks.jsonl --reward my_rewards:resolved` from the folder holding my_rewards.py.
    An installed console script's sys.path[0] is its bin folder, not the working directory: the script here
    is one such (it lives in bin/, and imports this checkout through PYTHONPATH)."""
    bin_dir, work = tmp_path / "bin", tmp_path / "work"
    bin_dir.mkdir()
    work.mkdir()
    (bin_dir / "whileai-train").write_text("import sys\nfrom whileai_train.cli import main\nsys.exit(main())\n",
                                           encoding="utf-8")
    (work / "my_rewards.py").write_text(
        "def resolved(completions, **kwargs):\n    return [1.0 for _ in completions]\n", encoding="utf-8")
    (work / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in make_tasks(2, 0)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(bin_dir / "whileai-train"), "eval", str(raw_model), "tasks.jsonl",
                           "--reward", "my_rewards:resolved", "--k", "2", "--max-completion-length", "4",
                           "-o", "rows.jsonl", "--no-progress"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in (work / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 and all(r["resolved"] == 1.0 and r["reward"] == 1.0 for r in rows)
    assert "my_rewards" not in sys.modules  # the test process imported nothing: the command did
