"""A run's notes render as markdown on the run page (headings, bold, lists, fenced code, inline code), and
nothing in a note becomes markup: HTML in a note is shown as the text it is (no element, no script run). Drives
headless Chromium (Playwright); a screenshot of the notes panel is saved under the test's tmp dir."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.serve_helpers import ServeProcess, chromium

from whileai_train.runs.store import LocalStore

pytestmark = pytest.mark.browser

NOTE = """### Reward monitor
**Alarm: divergence** at step 5: proxy *up*, gold flat; see `proxy_reward`
- first <b>point</b>
- second <img src=x onerror="window.hacked=1">
```
<script>window.hacked = 2</script>
keep   spacing
```
Plain <i>tag</i> & an entity &amp; stay text."""


def test_notes_render_as_markdown_and_no_html_passes_through(tmp_path: Path) -> None:
    home = tmp_path / "site"
    home.mkdir()
    store = LocalStore(home / "runs.db")
    run_id = store.create_run({"name": "noted", "total_steps": 10})
    store.add_note(run_id, 0, NOTE)
    store.finish(run_id, "done", {})
    store.close()
    with ServeProcess(home) as server, chromium() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 1400})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server.url}#run={run_id}")
        note = page.locator("#notes .note")
        note.locator("h6").wait_for()
        assert note.locator("h6").inner_text() == "Reward monitor"
        assert note.locator("strong").all_inner_texts() == ["Alarm: divergence"]
        assert note.locator("em").all_inner_texts() == ["up"]
        assert note.locator("p code").all_inner_texts() == ["proxy_reward"]
        assert note.locator("ul li").all_inner_texts() == ["first <b>point</b>",
                                                           'second <img src=x onerror="window.hacked=1">']
        assert note.locator("pre code").text_content() == "<script>window.hacked = 2</script>\nkeep   spacing"
        assert "Plain <i>tag</i> & an entity &amp; stay text." in note.inner_text()
        # no element a note's HTML would have made, no script run, no markdown syntax left showing
        assert note.locator("b, img, script, i").count() == 0
        assert page.evaluate("() => window.hacked === undefined") is True
        assert "**" not in note.inner_text() and "###" not in note.inner_text() and "```" not in note.inner_text()
        shot = tmp_path / "notes.png"
        page.locator("#notes-panel").screenshot(path=str(shot))
        print(f"screenshot: {shot}")
        page.close()
        assert errors == []
