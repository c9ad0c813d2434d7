"""The holdout completions the reward monitor keeps: from a real GRPOTrainer run into SQLite and back through the
runs HTTP API and wai.get_completions; the caps (a 1 MB completion is cut and counted, rows past the per-run cap
counted); the platform path (HttpSink to a real server); the points downloads."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from tests.helpers.serve_helpers import ServeProcess, call
from whileai_train.callbacks.holdout_completions import CompletionsKeeper, add_texts
from whileai_train.runs.completions import COMPLETIONS_MARKER
from whileai_train.runs.defaults import MAX_COMPLETION_CHARS
from whileai_train.runs.store import LocalStore, default_store_path
from whileai_train.sampling.samples import Sample, Samples

ONE_MB = 1_000_000


def _samples(completions: list[Any], prompt: Any = "What is 6 times 7?") -> Samples:
    return Samples(rows=[{"prompt": prompt}], samples=[
        Sample(row_index=0, repeat=i, prompt=prompt, completion=c, completion_ids=[], length=1, finish_reason="stop",
               tool_calls=sum(1 for m in c if isinstance(m, dict) and m.get("tool_calls")) if isinstance(c, list) else 0)
        for i, c in enumerate(completions)])


def _scored(samples: Samples, proxy: float, gold: float, markers: dict[str, float] | None = None
            ) -> list[dict[str, Any]]:
    scored = [{"ask": "six-times-seven", "proxy": proxy, "gold": gold, "markers": markers or {}} for _ in samples.samples]
    add_texts(samples, scored)
    return scored


def test_a_1mb_completion_is_cut_to_the_cap_and_counted_on_the_run_and_in_the_summary() -> None:
    samples = _samples(["42", "x" * ONE_MB])
    keeper = CompletionsKeeper()
    with wai.run(name="cap") as run:
        warnings = keeper.keep(3, _scored(samples, 1.0, 0.0, {"answer_given": 1.0, "polite": 0.0}), run)
        run_id = run.id
    assert run_id is not None
    assert len(warnings) == 1 and f"longer than {MAX_COMPLETION_CHARS} characters" in warnings[0]
    assert keeper.totals()["cut"] == 1 and keeper.totals()["kept"] == 2

    kept = wai.get_completions(run_id)
    assert (kept["kept"], kept["cut"], kept["dropped"]) == (2, 1, 0)
    short, long = kept["completions"]
    assert short["completion"] == "42" and not short["cut"]
    assert len(long["completion"]) == MAX_COMPLETION_CHARS and long["cut"]
    assert short["features"] == ["marker:answer_given"]  # the markers that fired, not those at 0
    assert (short["proxy"], short["gold"], short["step"]) == (1.0, 0.0, 3)
    # carried apart from the notes: the run's notes never show the batch
    notes = LocalStore(default_store_path()).get_run(run_id)["notes"]  # type: ignore[index]
    assert not [n for n in notes if COMPLETIONS_MARKER in n["markdown"]]


def test_rows_past_the_per_run_cap_are_counted_not_kept_and_tool_calls_are_named() -> None:
    called = [{"role": "assistant", "content": "",
               "tool_calls": [{"type": "function", "function": {"name": "lookup", "arguments": "{\"id\": 7}"}}]},
              {"role": "tool", "name": "lookup", "content": json.dumps({"error": "no such order"})},
              {"role": "assistant", "content": "sorry"}]
    samples = _samples([called, [{"role": "assistant", "content": "42"}]], prompt=[{"role": "user", "content": "6*7?"}])
    keeper = CompletionsKeeper(max_rows=3)
    with wai.run(name="rows cap") as run:
        assert keeper.keep(0, _scored(samples, 0.0, 1.0), run) == []
        (warning,) = keeper.keep(2, _scored(samples, 0.0, 1.0), run)
        run_id = run.id
    assert run_id is not None
    assert "at most 3 holdout completions" in warning
    kept = wai.get_completions(run_id)
    assert (kept["kept"], kept["dropped"], kept["steps"]) == (3, 1, [0, 2])
    first = kept["completions"][0]
    assert first["tools"] == [{"name": "lookup", "failed": True}]
    assert "-> lookup(" in first["completion"] and first["prompt"] == "user: 6*7?"
    assert [r["step"] for r in wai.get_completions(run_id, step=2)["completions"]] == [2]


@pytest.fixture()
def server(isolated_home: Path) -> Iterator[ServeProcess]:
    with ServeProcess(Path(os.environ["WHILEAI_HOME"])) as started:
        yield started


def test_the_platform_path_posts_batches_that_the_server_cuts_and_keeps_once(server: ServeProcess,
                                                                               tmp_path: Path) -> None:
    samples = _samples(["a", "b"])
    with wai.run(name="to the platform", api_key="k-test", url=server.url) as run:
        CompletionsKeeper().keep(1, _scored(samples, 0.5, 0.5), run)
        run_id = run.id
    status, page = call(f"{server.url}/runs/{run_id}/completions")
    assert status == 200 and [r["completion"] for r in page["completions"]] == ["a", "b"]
    # a sender's re-send of the same batch is stored once; a 1 MB text from any client is cut by the server
    body = {"batch": 900, "step": 5, "rows": [{"ask": "q", "prompt": "p", "completion": "y" * ONE_MB}]}
    status, refused = call(f"{server.url}/runs/{run_id}/completions", "POST", body)
    assert status == 409 and refused["code"] == "run_finished"  # a finished run is final
    open_run = call(f"{server.url}/runs", "POST", {"name": "api client"})[1]["runId"]
    assert call(f"{server.url}/runs/{open_run}/completions", "POST", body) == (200, {"new": 1})
    assert call(f"{server.url}/runs/{open_run}/completions", "POST", body) == (200, {"new": 0})
    status, page = call(f"{server.url}/runs/{open_run}/completions?step=5")
    assert status == 200 and (page["kept"], page["cut"]) == (1, 1)
    assert len(page["completions"][0]["completion"]) == MAX_COMPLETION_CHARS
    status, refused = call(f"{server.url}/runs/{open_run}/completions", "POST", {"batch": 1, "rows": [{"proxy": "x"}]})
    assert status == 400 and "proxy" in refused["error"]


def test_points_download_as_csv_and_json(server: ServeProcess) -> None:
    store = LocalStore(default_store_path())
    run_id = store.create_run({"name": "download"})
    store.add_points(run_id, [{"seq": i, "step": i, "ts": 1.0 + i, "loss": 1.0 / (i + 1), "=cmd()": 1.0}
                              for i in range(3)])
    status, text = call(f"{server.url}/runs/{run_id}/points.csv")
    assert status == 200
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["step", "seq", "ts", "'=cmd()", "loss"]  # a formula-like name never runs in a sheet
    assert [float(r[4]) for r in rows[1:]] == [1.0, 0.5, 1.0 / 3]
    status, record = call(f"{server.url}/runs/{run_id}/points.json")
    assert status == 200 and record["name"] == "download" and len(record["points"]) == 3
    assert call(f"{server.url}/runs/no-such-run/points.csv")[0] == 404


@pytest.mark.trainer
def test_a_grpo_run_keeps_its_holdout_completions_in_sqlite_and_serves_them(server: ServeProcess,
                                                                           tmp_path: Path) -> None:
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from whileai_train.demos.grpo_monitor import exact_answer, keyword_reward, make_tasks
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        tasks = make_tasks(12, seed=0)
        tokenizer = build_tiny_tokenizer()
        model = build_tiny_model(tokenizer, hidden_size=32)
        monitor = wai.monitor(holdout=tasks[8:], gold=exact_answer, every=2, n_prompts=4, k=2, verbose=False,
                              name="completions")
        config = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=2, learning_rate=1e-4,
                            per_device_train_batch_size=4, num_generations=2, max_completion_length=6,
                            logging_steps=1, use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0,
                            report_to=[])
        trainer = GRPOTrainer(model=model, reward_funcs=[monitor.wrap(keyword_reward)], args=config,
                              train_dataset=Dataset.from_list(tasks[:8]), processing_class=tokenizer,
                              callbacks=[monitor])
        trainer.train()
    finally:
        torch.set_num_threads(threads)
    summary = monitor.summary()
    run_id = summary.run_id
    assert run_id is not None
    assert summary.completions["kept"] == 16 and summary.completions["dropped"] == 0  # 2 evals x 4 asks x 2
    assert "holdout completions kept on the run: 16" in str(summary)

    status, page = call(f"{server.url}/runs/{run_id}/completions")
    assert status == 200 and page["steps"] == [0, 2] and page["kept"] == 16
    asks = {t["task_id"] for t in tasks[8:]}
    for row in page["completions"]:
        assert row["ask"] in asks and row["prompt"] and isinstance(row["completion"], str)
        assert row["gold"] in (0.0, 1.0) and isinstance(row["proxy"], float)
    # the same rows, by eval step, from the store itself
    at_two = wai.get_completions(run_id, step=2)["completions"]
    assert at_two == [r for r in page["completions"] if r["step"] == 2] and len(at_two) == 8


def test_a_nan_score_is_kept_as_null_and_a_failing_record_is_a_warning_not_an_error() -> None:
    samples = _samples(["nan-scored"])
    with wai.run(name="nan") as run:
        assert CompletionsKeeper().keep(0, _scored(samples, float("nan"), 1.0), run) == []
        run_id = run.id
    assert run_id is not None
    assert wai.get_completions(run_id)["completions"][0]["proxy"] is None

    class BrokenRun:
        def note(self, markdown: str) -> None:
            raise OSError("disk full")

    (warning,) = CompletionsKeeper().keep(4, _scored(samples, 1.0, 1.0), BrokenRun())
    assert "could not be kept (OSError: disk full)" in warning
