"""The dashboard in a real browser (headless Chromium driven by Playwright) over a store holding a stopped
hacked run, a clean done run, a failed run, and a running run a separate process streams to: what a person
checks on the page. A screenshot of each page is saved under the test's tmp dir (its path is printed).
Without Playwright or Chromium these tests skip with the reason; on CI (CI=true) that skip is a failure."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.helpers.serve_helpers import (
    ALARM_STEPS,
    HACKED_NAME,
    STOP_REASON,
    ServeProcess,
    chromium,
    seed_store,
    seeded_delta_report,
    start_stream,
)

from whileai_train.alarm_event import AlarmEvent
from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.browser




def _js(value: float) -> str:
    """A number as the page prints it: four significant digits, no trailing zeros (JavaScript's +v.toPrecision(4))."""
    rounded = float(f"{value:.4g}")
    return str(int(rounded)) if rounded.is_integer() else repr(rounded)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("browser-home")
    ids = seed_store(home / "runs.db")
    with ServeProcess(home) as server:
        stream, live_id = start_stream(server.url)
        try:
            yield {"url": server.url, "ids": {**ids, "live": live_id}, "shots": tmp_path_factory.mktemp("shots")}
        finally:
            stream.kill()
            stream.communicate(timeout=10)  # reaps it and closes its stdout pipe


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert errors == []


def _shot(page: Any, site: dict[str, Any], name: str) -> None:
    path = site["shots"] / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


def _row(page: Any, run_id: str) -> Any:
    return page.locator(f'#runs tbody tr[data-id="{run_id}"]')


def test_runs_table_shows_status_reason_cost_and_names_as_text(page: Any, site: dict[str, Any]) -> None:
    ids = site["ids"]
    page.goto(site["url"] + "/")
    page.wait_for_selector(f'#runs tbody tr[data-id="{ids["live"]}"]')
    assert page.locator("#runs tbody tr").count() == 4
    statuses = {role: _row(page, ids[role]).locator("td.status .badge").inner_text() for role in ids}
    assert statuses == {"hacked": "stopped", "done": "done", "failed": "failed", "live": "running"}
    hacked = _row(page, ids["hacked"])
    assert hacked.locator("td.status .reason").inner_text() == STOP_REASON
    assert "CUDA out of memory" in _row(page, ids["failed"]).locator("td.status .reason").inner_text()
    assert hacked.locator("td.cost").inner_text() == "about $0.42"
    assert _row(page, ids["done"]).locator("td.cost").inner_text() == "about $0.07"
    assert hacked.locator("td.alarms").inner_text() == "2"
    assert hacked.locator("td.progress").inner_text().strip() == "30/40"
    assert _row(page, ids["done"]).locator("td.loss").inner_text() == "0.1"
    # the name is text: its markup is shown, not run, and its bidi override stays inside the name
    assert hacked.locator("td.name").inner_text() == HACKED_NAME
    assert hacked.locator("td.name b, td.name img").count() == 0
    assert page.title() == "whileai_train runs"
    assert hacked.locator("td.name bdi").evaluate("e => getComputedStyle(e).unicodeBidi") == "isolate"
    # sortable and filterable
    page.click('#runs th[data-sort="name"]')
    names = page.locator("#runs tbody td.name").all_inner_texts()
    assert names == sorted(names, key=str.lower)
    page.fill("#filter", "crash")
    assert page.locator("#runs tbody tr").count() == 1
    page.fill("#filter", "")
    page.select_option("#status-filter", "stopped")
    assert [r.get_attribute("data-id") for r in page.locator("#runs tbody tr").all()] == [ids["hacked"]]
    page.select_option("#status-filter", "")
    _shot(page, site, "runs-table")


def test_hacked_run_page_in_order_with_alarm_markers_at_their_steps(page: Any, site: dict[str, Any]) -> None:
    run_id = site["ids"]["hacked"]
    page.goto(site["url"] + f"/#run={run_id}")
    page.wait_for_selector('.chart[data-chart="proxy-gold"] .alarm-marker')
    assert page.locator("#run-title").inner_text() == HACKED_NAME
    assert page.locator("#run-status").inner_text() == "stopped"
    assert page.locator("#stop-reason").inner_text() == "stop reason: " + STOP_REASON
    assert page.locator("#cost").inner_text() == "about $0.42 (estimate: A10G at $1.10/h, modal.com/pricing 2026-09-20)"
    # the page's order: status, loss and lr, the monitor, TRL families, notes, holdout/delta
    order = page.evaluate("""() => ['#status-line', '#training', '#monitor', '#families', '#notes-panel',
        '#holdout-panel'].map(s => document.querySelector(s).getBoundingClientRect().top)""")
    assert order == sorted(order)
    # proxy and gold on one chart
    labels = page.locator('.chart[data-chart="proxy-gold"] .u-legend .u-label').all_inner_texts()
    assert labels[1:] == ["proxy_reward", "gold_reward"]
    # each alarm a marker at its step on that chart: its x is the step's x on the chart's own scale
    markers = page.evaluate("""() => {
        const holder = document.querySelector('.chart[data-chart="proxy-gold"]');
        const u = holder._uplot, over = u.over.getBoundingClientRect();
        return [...holder.querySelectorAll('.alarm-marker')].map(m => ({
            step: +m.dataset.step, name: m.dataset.name,
            x: m.getBoundingClientRect().left - over.left,
            expected: (+m.dataset.step - u.scales.x.min) / (u.scales.x.max - u.scales.x.min) * over.width}));
    }""")
    assert [(m["step"], m["name"]) for m in markers] == [(ALARM_STEPS[0], "divergence"), (ALARM_STEPS[1], "length")]
    for marker in markers:
        assert abs(marker["x"] - marker["expected"]) < 2.5, marker
    page.hover(f'.chart[data-chart="proxy-gold"] .alarm-marker[data-step="{ALARM_STEPS[0]}"] span')
    assert page.locator("#tip").inner_text() == \
        f"divergence alarm at step {ALARM_STEPS[0]}: divergence one-line text for step {ALARM_STEPS[0]}"
    listed = page.locator("#alarm-list li").all_inner_texts()
    assert listed == [f"step {s} · {n}: {n} one-line text for step {s}"
                      for s, n in zip(ALARM_STEPS, ("divergence", "length"))]
    for chart in ("loss", "lr", "holdout_length", "kl"):
        assert page.locator(f'.chart[data-chart="{chart}"] canvas').count() == 1, chart
    families = page.locator("details.family").evaluate_all("ds => ds.map(d => d.dataset.family)")
    assert families == ["clip_ratio/*", "completions/*", "eval_*", "rewards/accuracy/*"]
    rewards = page.locator('details.family[data-family="rewards/accuracy/*"]')
    assert rewards.locator(".chart").count() == 2
    rewards.locator("summary").click()
    assert rewards.evaluate("d => d.open") is False
    # the after-training verdict reads as a sentence and a table (the report's numbers at 4 significant digits)
    report = seeded_delta_report()
    b, a = report.before, report.after

    def ci(pair: Any) -> str:
        return f" [{_js(pair[0])}, {_js(pair[1])}]"

    line = page.locator('#holdout [data-block="holdout"] .verdict-line').inner_text()
    assert line == (f"PASS: moved_unreplicated \u2014 pass_rate {_js(b)}{ci(report.before_ci95)} (40 tasks, k=4) -> "
                    f"{_js(a)}{ci(report.after_ci95)} (40 tasks, k=4), delta +{_js(report.delta)}{ci(report.target_ci95)}")
    table = page.locator('#holdout [data-block="delta"] table.delta-table tbody tr')
    cells = table.evaluate_all("rows => rows.map(r => [...r.cells].map(c => c.innerText))")
    assert cells == [[m.name, _js(m.before), _js(m.after), f"+{_js(m.delta)}{ci(m.ci95)}", m.verdict, role]
                     for m, role in ((report.metrics["pass@1"], "target"),
                                     (report.metrics["argument_grounding"], "must not regress"))]
    assert page.locator('#holdout [data-block="delta"] .delta-warnings li').all_inner_texts() == report.warnings
    raw = page.locator('#holdout [data-block="holdout"] details.raw')
    assert raw.evaluate("d => d.open") is False  # the record itself is one click away
    assert '"headline_verdict": "PASS"' in raw.locator("pre").text_content()
    assert page.locator("#notes .note").count() == 2
    _shot(page, site, "hacked-run")


def test_failed_and_done_runs(page: Any, site: dict[str, Any]) -> None:
    page.goto(site["url"] + f"/#run={site['ids']['failed']}")
    page.wait_for_selector("#run-error")
    assert page.locator("#run-error").inner_text() == "error: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert page.locator("#cost").inner_text() == "no cost estimate (cpu)"
    _shot(page, site, "failed-run")
    page.click(f'#runs tbody tr[data-id="{site["ids"]["done"]}"]')
    page.wait_for_function("() => document.querySelector('#run-status')?.textContent === 'done'")
    assert page.locator("#stop-reason").count() == 0 and page.locator("#run-error").count() == 0
    assert page.locator("#holdout-panel").is_hidden()
    assert page.locator("#alarm-list").inner_text() == "no alarms"
    _shot(page, site, "done-run")


def test_live_run_advances_and_keeps_selection_and_zoom(page: Any, site: dict[str, Any]) -> None:
    live = site["ids"]["live"]
    page.goto(site["url"] + f"/#run={live}")
    page.wait_for_selector('.chart[data-chart="loss"] canvas')

    def last_step() -> int:
        return int(page.locator("#last-step").inner_text().split()[1])

    first = last_step()
    page.wait_for_function(f"() => +document.querySelector('#last-step').textContent.split(' ')[1] > {first + 2}",
                           timeout=15000)
    # zoom the loss chart by dragging across it, then let more points arrive: the zoom stays
    box = page.locator('.chart[data-chart="loss"] .u-over').bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    zoom = page.evaluate("() => { const u = document.querySelector('.chart[data-chart=\"loss\"]')._uplot;"
                         " return [u.scales.x.min, u.scales.x.max, u.data[0].length]; }")
    page.wait_for_function(f"() => document.querySelector('.chart[data-chart=\"loss\"]')._uplot.data[0].length"
                           f" > {zoom[2] + 2}", timeout=15000)
    after = page.evaluate("() => { const u = document.querySelector('.chart[data-chart=\"loss\"]')._uplot;"
                          " return [u.scales.x.min, u.scales.x.max]; }")
    assert after == zoom[:2]
    assert page.locator("#runs tbody tr.sel").get_attribute("data-id") == live
    _shot(page, site, "live-run")


def test_selection_survives_refreshes_and_reloads(page: Any, site: dict[str, Any]) -> None:
    hacked, done = site["ids"]["hacked"], site["ids"]["done"]
    page.goto(site["url"] + "/")
    page.wait_for_selector(f'#runs tbody tr[data-id="{hacked}"]')
    page.click(f'#runs tbody tr[data-id="{hacked}"]')
    page.wait_for_function(f"() => location.hash.includes('{hacked}')")
    stamp = page.locator("#live").inner_text()
    page.wait_for_function(f"() => document.querySelector('#live').textContent !== {stamp!r}", timeout=10000)
    page.wait_for_function("() => document.querySelector('#live').textContent.startsWith('live')")
    assert page.locator("#runs tbody tr.sel").get_attribute("data-id") == hacked
    assert page.locator("#run-title").inner_text() == HACKED_NAME
    page.reload()
    page.wait_for_selector("#runs tbody tr.sel")
    assert page.locator("#runs tbody tr.sel").get_attribute("data-id") == hacked
    page.wait_for_function("() => document.querySelector('#run-title').textContent.length > 0")
    assert page.locator("#run-title").inner_text() == HACKED_NAME
    # overlay: tick the done run; the loss chart carries both runs
    page.locator(f'#runs tbody tr[data-id="{done}"] input.overlay').check()
    page.wait_for_function("() => document.querySelector('.chart[data-chart=\"loss\"]')._uplot.series.length === 3")
    labels = page.locator('.chart[data-chart="loss"] .u-legend .u-label').all_inner_texts()
    assert labels[1:] == [f"loss · {HACKED_NAME}", "loss · sft clean"]
    assert page.locator("#runs tbody tr.sel").get_attribute("data-id") == hacked
    page.reload()
    page.wait_for_function("() => document.querySelector('.chart[data-chart=\"loss\"]')?._uplot?.series.length === 3")
    _shot(page, site, "overlay")


# -- names from the data that a plain object would mistake, alarms of value 0, a run with 10k metric names --
ODD_NAMES = ("constructor", "__proto__", "toString", "hasOwnProperty", "valueOf")
WIDE_NAMES = 10_000


@pytest.fixture(scope="module")
def odd_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("browser-odd")
    store = LocalStore(home / "runs.db")
    odd = store.create_run({"name": "odd names", "total_steps": 10})
    store.add_points(odd, [{"seq": s, "step": s + 1, "loss": 1.0 / (s + 1), "alarm/divergence": 0.0,
                            "alarm/length": 1.0 if s == 6 else 0.0, **{n: s * (i + 1.0) for i, n in enumerate(ODD_NAMES)},
                            "__proto__/inner": 0.5 * s} for s in range(10)], progress=(10, 10))
    length = AlarmEvent(name="length", step=7, message="length alarm at step 7")
    store.add_note(odd, 0, length.note_markdown, alarm=length)
    wide = store.create_run({"name": "ten thousand metrics", "total_steps": 10})
    names = [f"fam{i % 100:02d}/m_{i:05d}" for i in range(WIDE_NAMES)]
    store.add_points(wide, [{"seq": s, "step": s + 1, "loss": 1.0, **{n: float(s) for n in names[s::10]}}
                            for s in range(10)] + [{"seq": 10 + s, "step": s + 1, **{n: 2.0 * s for n in names[:1000]}}
                                                   for s in range(10)], progress=(10, 10))
    store.close()
    with ServeProcess(home) as server:
        yield {"url": server.url, "ids": {"odd": odd, "wide": wide}, "shots": tmp_path_factory.mktemp("odd-shots")}


def test_metric_names_a_plain_object_would_mistake_are_charted(page: Any, odd_site: dict[str, Any]) -> None:
    page.goto(odd_site["url"] + f"/#run={odd_site['ids']['odd']}")
    page.wait_for_selector('.chart[data-chart="m:constructor"] canvas')
    for name in (*ODD_NAMES, "__proto__/inner"):
        holder = page.locator(f'.chart[data-chart="m:{name}"]')
        assert holder.locator("canvas").count() == 1, name
        assert holder.evaluate("h => h._uplot.data[1].filter(v => v != null).length") == 10, name
    families = page.locator("details.family").evaluate_all("ds => ds.map(d => d.dataset.family)")
    assert families == ["other", "__proto__/*"]  # in the order of their first names: "__proto__", "__proto__/inner"
    # alarm/divergence = 0 on every point is no alarm; the one length alarm is one
    assert page.locator(f'#runs tbody tr[data-id="{odd_site["ids"]["odd"]}"] td.alarms').inner_text() == "1"
    assert page.locator("#alarm-count").inner_text() == "1 alarm"
    assert page.locator("#alarm-list li").all_inner_texts() == ["step 7 · length: length alarm at step 7"]
    _shot(page, odd_site, "odd-names")


def test_a_run_with_ten_thousand_metrics_shows_the_first_and_a_filter(page: Any, odd_site: dict[str, Any]) -> None:
    page.goto(odd_site["url"] + f"/#run={odd_site['ids']['wide']}")
    page.wait_for_selector('.chart[data-chart="m:fam00/m_00000"] canvas', timeout=30000)  # not a frozen tab
    charts = page.locator("#family-groups .chart")
    assert charts.count() == 48
    assert page.locator("#metric-count").inner_text() == \
        f"the first 48 of {WIDE_NAMES} metrics; type to find the others"
    first = page.locator("details.family").first
    assert first.locator("summary").inner_text() == "fam00/* (48 of 100)"
    page.fill("#metric-filter", "m_09999")
    page.wait_for_selector('.chart[data-chart="m:fam99/m_09999"] canvas')
    assert charts.count() == 1 and page.locator("#metric-count").inner_text() == f"1 of {WIDE_NAMES} metrics"
    assert page.locator("details.family").evaluate_all("ds => ds.map(d => d.dataset.family)") == ["fam99/*"]
    page.fill("#metric-filter", "no such metric")
    page.wait_for_selector("#family-groups .empty")
    assert charts.count() == 0 and page.locator("#family-groups .empty").inner_text() == "no metric matches the filter"
    page.fill("#metric-filter", "fam07/")
    page.wait_for_function("() => document.querySelectorAll('#family-groups .chart canvas').length === 48")
    assert page.locator("details.family summary").inner_text() == "fam07/* (48 of 100)"
    _shot(page, odd_site, "ten-thousand-metrics")
