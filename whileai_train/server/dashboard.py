"""The dashboard's pages: the run page (server/static/index.html, app.js, style.css and the vendored uPlot,
served by the same process: no CDN, no build step) and the small key form a keyed server shows first."""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC_DIR", "login_page", "run_page"]

STATIC_DIR = Path(__file__).parent / "static"

_LOGIN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>whileai_train runs: key</title>
<link rel="stylesheet" href="data:,"></head>
<body style="font:14px system-ui,sans-serif;margin:40px">
<h2>whileai_train runs</h2><p>This server needs its API key (the one `serve` was started with).</p>
<form id="f"><input id="k" type="password" autocomplete="off" size="40" placeholder="API key">
<button>Open</button> <span id="m"></span></form>
<script>
document.getElementById('f').onsubmit = async e => {
  e.preventDefault();
  const r = await fetch('/session', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                     body: JSON.stringify({key: document.getElementById('k').value})});
  if (r.ok) location.reload(); else document.getElementById('m').textContent = 'wrong key';
};
</script></body></html>
"""


def run_page() -> str:
    """The dashboard page (its script and styles load from /static)."""
    return (STATIC_DIR / "index.html").read_text(encoding="utf-8")


def login_page() -> str:
    """The page a keyed server answers at / (with 401) until the key is typed once."""
    return _LOGIN
