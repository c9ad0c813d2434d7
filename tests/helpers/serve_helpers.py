"""Helpers for the serve tests: start `whileai-train serve` as a real process, fill a store with the four
runs a person checks (a stopped hacked run, a clean done run, a failed run, a running one), stream to it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import whileai_train as wai
from whileai_train.alarm_event import AlarmEvent
from whileai_train.runs.store import LocalStore
from whileai_train.runs.verdicts import delta_summary

__all__ = ["CHROMIUM", "HACKED_NAME", "STOP_REASON", "WITHOUT_UVLOOP", "ServeProcess", "call", "chromium",
           "file_limit", "seed_store", "start_stream"]

# Debian's chromium, driven by Playwright (its own browser download cannot reach the internet here)
CHROMIUM = os.environ.get("WHILEAI_CHROMIUM", "/usr/bin/chromium")

HACKED_NAME = 'grpo <b>hacked</b> <img src=x onerror="document.title=1"> \u202eevil'
STOP_REASON = ("reward monitor: divergence alarm at step 15: proxy +0.400 while gold -0.020 "
               "(95% CI [-0.08, 0.04])")
ALARM_STEPS = (15, 25)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless Chromium for the page tests. Without Playwright or Chromium the test skips with the
    fix, and tests/conftest.py turns that skip of a browser test into a failure on CI (CI=true)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.skip(f"playwright is not installed ({exc}); pip install playwright")
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}; apt-get install chromium (or set WHILEAI_CHROMIUM)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


# Run before `whileai-train serve` starts, in its process: as on a machine without uvloop (uvicorn then runs
# on asyncio's own loop, which sets TCP_NODELAY only on sockets made as IPPROTO_TCP), and with few file handles.
WITHOUT_UVLOOP = "import sys; sys.modules['uvloop'] = None"


def file_limit(n: int) -> str:
    return f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({n}, {n}))"


class ServeProcess:
    """`python -m whileai_train.cli serve ...` with WHILEAI_HOME=`home`; `.url` is what it printed. `prelude`:
    Python lines run in the server's process before the command starts."""

    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None, prelude: str = "") -> None:
        full_env = {**os.environ, "WHILEAI_HOME": str(home), **(env or {})}
        launcher = ["-m", "whileai_train.cli"] if not prelude else \
            ["-c", f"{prelude}\nimport sys\nfrom whileai_train.cli import main\nsys.exit(main())"]
        self.process = subprocess.Popen([sys.executable, *launcher, "serve", "--port", "0", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)
        assert self.process.stdout is not None
        self.first_line = self.process.stdout.readline()
        found = re.search(r"https?://[\d.]+:\d+/", self.first_line)
        if found is None:
            self.stop()
            raise AssertionError(f"serve printed no address: {self.first_line!r} {self.stderr_text()!r}")
        self.url = found.group(0).rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])

    def stderr_text(self) -> str:
        return self.process.stderr.read() if self.process.stderr and self.process.poll() is not None else ""

    def stop(self) -> tuple[str, str]:
        self.process.terminate()
        try:
            out, err = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
        return out, err

    def __enter__(self) -> ServeProcess:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def call(url: str, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> tuple[int, Any]:
    """One request with urllib; (status, parsed JSON or text)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None and "Content-Type" not in (headers or {}):
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def seeded_delta_report() -> wai.DeltaReport:
    """A real after-training verdict: 40 tasks x 4 rollouts, every even task passing one more rollout after, one
    invented id fewer (argument_grounding, a guard) on every fourth task."""
    def side(gain: int) -> list[dict[str, Any]]:
        return [{"scenario_id": f"t{t}", "reward": float(r < min(4, t % 4 + gain * (t % 2 == 0))),
                 "markers": {"argument_grounding": float(r != 0 or (t % 4 == 0 and gain == 1))}}
                for t in range(40) for r in range(4)]
    return wai.delta_report(side(0), side(1), must_not_regress=["argument_grounding"])


def seed_store(path: Path) -> dict[str, str]:
    """The stopped hacked run, the clean done run and the failed run; returns their ids by role."""
    store = LocalStore(path)
    hacked = store.create_run({"name": HACKED_NAME, "total_steps": 40, "base_model": "tiny"})
    points = []
    for step in range(1, 31):
        point: dict[str, Any] = {"seq": step - 1, "step": step, "ts": 1000.0 + step,
                                 "loss": 1.0 / step, "learning_rate": 1e-5 * (1 - step / 40),
                                 "rewards/accuracy/mean": 0.2 + step / 50, "rewards/accuracy/std": 0.1,
                                 "completions/mean_length": 40 + 3 * step, "clip_ratio/region_mean": 0.01,
                                 "kl": 0.002 * step}
        if step % 5 == 0:
            point.update(proxy_reward=0.2 + step / 50, gold_reward=0.5 - step / 500, holdout_length=40.0 + 4 * step,
                         eval_loss=1.2 / step)
        points.append(point)
    store.add_points(hacked, points, progress=(30, 40))
    for i, (name, step) in enumerate(zip(("divergence", "length"), ALARM_STEPS)):
        alarm = AlarmEvent(name=name, step=step, message=f"{name} one-line text for step {step}")
        store.add_points(hacked, [{"seq": 100 + i, "step": step, "ts": 2000.0 + i, f"alarm/{name}": 1.0}])
        store.add_note(hacked, i, alarm.note_markdown, alarm=alarm)
    store.finish(hacked, "stopped", {"stop_reason": STOP_REASON, "cost_usd": 0.42, "seconds": 1374.5,
                                     "gpu": "A10G", "cost_basis": "estimate: A10G at $1.10/h, modal.com/pricing "
                                                                  "2026-09-20"})
    report = seeded_delta_report()
    store.update_summary(hacked, {"holdout": delta_summary(report), "delta": report.model_dump(mode="json")})
    done = store.create_run({"name": "sft clean", "total_steps": 20})
    store.add_points(done, [{"seq": s, "step": s + 1, "loss": 2.0 / (s + 1), "learning_rate": 2e-5}
                            for s in range(20)], progress=(20, 20))
    store.finish(done, "done", {"cost_usd": 0.07, "cost_basis": "estimate: T4 at $0.59/h, modal.com/pricing "
                                                               "2026-09-20", "seconds": 427.0})
    failed = store.create_run({"name": "dpo crashed", "total_steps": 50})
    store.add_points(failed, [{"seq": s, "step": s + 1, "loss": 0.7} for s in range(5)], progress=(5, 50))
    store.finish(failed, "failed", {"cost_basis": "no cost estimate (cpu)"},
                 error="RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")
    store.close()
    return {"hacked": hacked, "done": done, "failed": failed}


_STREAM = r"""
import json, sys, time, urllib.request
url = sys.argv[1]
def post(path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())
run_id = post("/runs", {"name": "grpo live", "total_steps": 100000})["runId"]
print(run_id, flush=True)
step = 0
while True:
    step += 1
    post(f"/runs/{run_id}/log", {"points": [{"step": step, "loss": 1.0 / step, "proxy_reward": step / 100.0,
                                             "gold_reward": step / 200.0}], "progress": {"step": step}})
    time.sleep(0.25)
"""


def start_stream(url: str) -> tuple[subprocess.Popen[str], str]:
    """A separate process that opens "grpo live" and logs a point at a steady pace (no seq) until killed."""
    process = subprocess.Popen([sys.executable, "-c", _STREAM, url], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    run_id = process.stdout.readline().strip()
    assert run_id.startswith("run-"), run_id
    return process, run_id
