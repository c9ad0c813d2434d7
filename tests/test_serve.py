"""`whileai-train serve`: the dashboard page and the runs API over the local store, in a real process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import whileai_train as wai


def _get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers.get("Content-Type", ""), response.read()


def test_serve_shows_the_local_runs(isolated_home: Path) -> None:
    with wai.run(name="served-run", total_steps=3) as run:
        for step in range(1, 4):
            run.log(step, loss=1.0 / step)
        run.note("hello from the test")
    env = dict(os.environ)
    with subprocess.Popen([sys.executable, "-m", "whileai_train.cli", "serve", "--port", "0"],
                          stdout=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            url = re.search(r"http://[\d.]+:\d+/", line).group(0)
            content_type, page = _get(url)
            assert content_type.startswith("text/html") and b"whileai_train runs" in page
            runs = json.loads(_get(url + "runs")[1])["runs"]
            assert [r["name"] for r in runs] == ["served-run"] and runs[0]["status"] == "done"
            points = json.loads(_get(url + f"runs/{run.id}/points")[1])["points"]
            assert [(p["step"], p["loss"]) for p in points] == [(1, 1.0), (2, 0.5), (3, 1.0 / 3)]
            record = json.loads(_get(url + f"runs/{run.id}")[1])
            assert record["notes"][0]["markdown"] == "hello from the test"
        finally:
            process.terminate()
            process.wait(timeout=10)
