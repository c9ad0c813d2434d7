"""The run page in a real browser (headless Chromium, Playwright): TRL's tools/* metrics are a family of their own,
and the holdout's twin of each (tools/holdout_call_frequency beside tools/call_frequency) is drawn on the same chart.
Without Playwright or Chromium it skips with the reason; on CI (CI=true) that skip is a failure (conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.serve_helpers import ServeProcess, chromium

from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.browser



@pytest.fixture()
def site(tmp_path: Path) -> Iterator[dict[str, Any]]:
    store = LocalStore(tmp_path / "runs.db")
    run_id = store.create_run({"name": "grpo tools", "total_steps": 10})
    points = []
    for step in range(1, 11):
        point: dict[str, Any] = {"seq": step - 1, "step": step, "loss": 1.0 / step,
                                 "tools/call_frequency": 1.0 + step / 20, "tools/failure_frequency": 0.1}
        if step % 2 == 0:
            point.update({"tools/holdout_call_frequency": 1.0 + step / 25, "tools/holdout_failure_frequency": 0.05,
                          "proxy_reward": 0.5, "gold_reward": 0.5})
        points.append(point)
    store.add_points(run_id, points, progress=(10, 10))
    store.finish(run_id, "done", {})
    store.close()
    with ServeProcess(tmp_path) as server:
        yield {"url": server.url, "id": run_id}


@pytest.fixture()
def page() -> Iterator[Any]:
    with chromium() as browser:
        opened = browser.new_page(viewport={"width": 1400, "height": 1400})
        errors: list[str] = []
        opened.on("pageerror", lambda exc: errors.append(str(exc)))
        yield opened
    assert errors == []


def test_tools_metrics_are_one_family_with_the_holdout_twin_on_each_chart(page: Any, site: dict[str, Any]) -> None:
    page.goto(site["url"] + f"/#run={site['id']}")
    page.wait_for_selector('details.family[data-family="tools/*"] .chart canvas')
    tools = page.locator('details.family[data-family="tools/*"]')
    charts = tools.locator(".chart").evaluate_all("cs => cs.map(c => c.dataset.chart)")
    assert charts == ["m:tools/call_frequency", "m:tools/failure_frequency"]
    titles = tools.locator(".chart .u-title").all_inner_texts()
    assert titles == ["tools/call_frequency vs tools/holdout_call_frequency",
                      "tools/failure_frequency vs tools/holdout_failure_frequency"]
    legend = tools.locator('.chart[data-chart="m:tools/call_frequency"] .u-legend .u-label').all_inner_texts()
    assert legend[1:] == ["tools/call_frequency", "tools/holdout_call_frequency"]
