"""The run page's completions table, smoothing control, points download and config view, in a real browser
(headless Chromium driven by Playwright) over a store holding a run with holdout completions and its context.
Screenshots go under the test's tmp dir; one of the completions table and config view is also copied to
/tmp/looks2_shots/ to be looked at."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.serve_helpers import ServeProcess, chromium

from whileai_train.runs.completions import store_batch
from whileai_train.runs.context import context_patch
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.browser

SHOTS_TO_READ = Path("/tmp/looks2_shots")
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> and so: nine'


def _row(ask: str, completion: str, proxy: float, gold: float, **extra: Any) -> dict[str, Any]:
    return {"ask": ask, "prompt": f"what is {ask} ?", "completion": completion, "proxy": proxy, "gold": gold, **extra}


def _seed(path: Path) -> str:
    store = LocalStore(path)
    run_id = store.create_run({"name": "grpo with completions", "total_steps": 10})
    store.add_points(run_id, [{"seq": s, "step": s, "ts": 1000.0 + s, "loss": 1.0 / (s + 1),
                               "proxy_reward": s / 10, "gold_reward": 0.5 - s / 100} for s in range(11)])
    store.update_summary(run_id, context_patch(
        "refund-desk", "sweep-3", ["grpo", "tiny"],
        args={"learning_rate": 0.0001, "max_steps": 10, "num_generations": 4, "output_dir": "out/grpo", "beta": 0.04,
              "per_device_train_batch_size": 8, "gradient_accumulation_steps": 2, "max_completion_length": 256,
              "temperature": 1.0, "loss_type": "dapo", "lr_scheduler_type": "linear", "warmup_ratio": 0.0,
              "logging_steps": 1, "seed": 42, "bf16": False, "report_to": ["trackio"], "reward_weights": None,
              "epsilon": 0.2, "scale_rewards": "group", "num_iterations": 1, "top_p": 1.0, "top_k": 0},
        model_config={"model_type": "qwen2", "hidden_size": 32, "num_hidden_layers": 2}))
    store_batch(store, run_id, 0, {"step": 0, "rows": [
        _row("two plus two", "four", 0.0, 1.0), _row("one plus five", "six", 0.0, 1.0)]})
    store_batch(store, run_id, 1, {"step": 10, "rows": [
        _row("two plus two", "thanks! thanks! the refund is on its way", 1.0, 0.0,
             tools=[{"name": "issue_refund", "failed": False}, {"name": "lookup_order", "failed": True}],
             features=["marker:polite"]),
        _row("one plus five", HOSTILE, 1.0, 0.0),
        _row("three plus three", "six", 1.0, 1.0)]})
    summary = store.get_run(run_id)["summary"]  # type: ignore[index]
    store.finish(run_id, "done", summary)  # finish writes the run's whole summary: the context goes with it
    store.close()
    return run_id


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("views-home")
    run_id = _seed(home / "runs.db")
    with ServeProcess(home) as server:
        yield {"url": server.url, "run": run_id, "shots": tmp_path_factory.mktemp("view-shots")}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture()
def page(browser: Any, site: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1400}, accept_downloads=True)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.goto(f"{site['url']}/#run={site['run']}")
    opened.wait_for_selector('#completions tbody tr[data-step="10"]')
    yield opened
    context.close()
    assert errors == []


def _rows(page: Any) -> list[str]:
    return [text.strip() for text in page.locator("#completions tbody tr td.completion").all_inner_texts()]


def test_completions_table_filters_and_shows_untrusted_text_as_text(page: Any, site: dict[str, Any]) -> None:
    assert page.locator("#completion-step").input_value() == "10"  # the latest eval first
    assert len(_rows(page)) == 3
    hostile = page.locator("#completions tbody td.completion", has_text="__pwned")
    assert hostile.inner_text().startswith("<script>window.__pwned = 1</script><img")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#completions script, #completions img").count() == 0
    tools = page.locator("#completions td.tools").first.inner_text()
    assert "issue_refund" in tools and "lookup_order ✗" in tools

    page.fill("#completion-search", "refund")
    assert _rows(page) == ["thanks! thanks! the refund is on its way"]
    page.fill("#completion-search", "")
    page.check("#completion-disagree")  # |proxy - gold| >= 0.5: the two paid-but-wrong rows
    assert len(_rows(page)) == 2 and "six" not in _rows(page)
    assert "2 of 3 shown" in page.locator("#completion-count").inner_text()
    page.uncheck("#completion-disagree")
    page.select_option("#completion-step", "")
    page.wait_for_function("document.querySelectorAll('#completions tbody tr').length === 5")
    page.select_option("#completion-step", "0")
    page.wait_for_function("document.querySelectorAll('#completions tbody tr').length === 2")
    assert _rows(page) == ["four", "six"]

    # a click on the proxy vs gold chart shows the completions of the eval nearest the cursor (step 10)
    chart = page.locator('.chart[data-chart="proxy-gold"] .u-over').bounding_box()
    page.mouse.click(chart["x"] + chart["width"] - 2, chart["y"] + chart["height"] / 2)
    page.wait_for_function("document.querySelector('#completion-step').value === '10'")
    page.wait_for_function("document.querySelectorAll('#completions tbody tr').length === 3")
    page.locator("#config details[data-block='model_config']").evaluate("d => d.open = true")
    shot = site["shots"] / "completions-and-config.png"
    page.locator("#completions-scroll").scroll_into_view_if_needed()
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    SHOTS_TO_READ.mkdir(parents=True, exist_ok=True)
    clip = page.locator("#monitor").bounding_box()
    config = page.locator("#config-panel").bounding_box()
    top, bottom = clip["y"], config["y"] + config["height"]
    page.screenshot(path=str(SHOTS_TO_READ / "completions_and_config.png"), full_page=True,
                    clip={"x": 0, "y": top, "width": 1400, "height": bottom - top})


def test_smoothing_moves_every_chart_toward_the_moving_average(page: Any) -> None:
    def last_proxy() -> float:
        return float(page.evaluate("document.querySelector('.chart[data-chart=\"proxy-gold\"]')._uplot.data[1][10]"))

    assert last_proxy() == pytest.approx(1.0)
    page.locator("#smoothing").fill("0.9")
    assert page.locator("#smoothing-value").inner_text() == "0.90"
    # a rising line, smoothed, lags behind its last point: well under 1.0, still above the first points
    assert 0.3 < last_proxy() < 0.9
    loss_first = page.evaluate("document.querySelector('.chart[data-chart=\"loss\"]')._uplot.data[1][0]")
    assert loss_first == pytest.approx(1.0)  # debiased: the first point is itself, not pulled toward 0
    page.locator("#smoothing").fill("0")
    assert last_proxy() == pytest.approx(1.0)


def test_csv_download_and_config_view(page: Any, site: dict[str, Any], tmp_path: Path) -> None:
    with page.expect_download() as info:
        page.click("#download-csv")
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    assert saved.name == f"{site['run']}-points.csv"
    rows = list(csv.DictReader(io.StringIO(saved.read_text())))
    assert [int(r["step"]) for r in rows] == list(range(11))
    assert float(rows[10]["proxy_reward"]) == pytest.approx(1.0)
    assert page.locator("#download-json").get_attribute("href") == f"/runs/{site['run']}/points.json"

    config = page.locator("#config")
    assert "refund-desk" in config.locator(".context-line").inner_text()
    assert config.locator(".tag").all_inner_texts() == ["grpo", "tiny"]
    args = config.locator("details[data-block='args']")
    assert args.get_attribute("open") is not None
    assert "learning_rate" in args.inner_text() and "out/grpo" in args.inner_text()
    assert "hidden_size" in (config.locator("details[data-block='model_config']").text_content() or "")
