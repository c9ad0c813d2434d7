"""Shared fixtures: an isolated home for every test, torch on one thread for the training tests, and the tiny
model and tokenizer built in code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("DISABLE_TQDM", "1")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the user's ~/.whileai or platform keys."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("WHILEAI_HOME", str(home / ".whileai"))
    for name in ("WHILEAI_API_KEY", "WHILEAI_DELEGATED_CREDENTIAL", "WHILEAI_API_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture()
def one_thread() -> Iterator[None]:
    """torch on one thread for the test, then as it was: the tiny models train faster on one thread than
    contending for the shared cores."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture()
def trl_experimental_silenced(monkeypatch: pytest.MonkeyPatch) -> None:
    """TRL 1.16 warns once that rollout_func and environment_factory are experimental; the tests use both."""
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Qwen2-shaped model and BPE tokenizer, saved once per session (loadable by subprocesses)."""
    from whileai_train.demos.tiny import save_tiny

    return save_tiny(tmp_path_factory.mktemp("tiny"))


def _warmed_desk(target: Path, **warm_up_options: Any) -> Path:
    """The tiny model warmed up on the refund desk (demos/refund_desk.warm_up) on one thread, saved under `target`."""
    import torch

    from whileai_train.demos.refund_desk import warm_up
    from whileai_train.demos.tiny import build_tiny_model, build_tiny_tokenizer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tokenizer = build_tiny_tokenizer()
        model = build_tiny_model(tokenizer)
        warm_up(model, tokenizer, str(target / "sft"), **warm_up_options)
    finally:
        torch.set_num_threads(threads)
    tokenizer.save_pretrained(target)
    model.save_pretrained(target)
    return target


@pytest.fixture(scope="session")
def desk_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model warmed up on the refund desk as the grpo-tools recipe warms it (warm_up's defaults: 120 SFT
    steps on 64 rows of one phrasing that this library exports for TRL, about 100 CPU seconds), so it calls tools;
    saved once per session. It does not name the asked order in its calls."""
    return _warmed_desk(tmp_path_factory.mktemp("desk"))


@pytest.fixture(scope="session")
def order_naming_desk_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The desk model that also names the asked order, as the hack suite's desk (hack_suite.DESK_*) but shorter: 500
    steps without the tool schemas, where the tiny model learns to copy the order, then 60 with them, on 256 rows in
    every phrasing (about 150-300 CPU seconds); saved once per session. Its honest desk twin is a healthy run."""
    return _warmed_desk(tmp_path_factory.mktemp("desk-naming"), steps=60, n=256, varied=True, copy_steps=500)


# pytest-timeout counts a test's setup: the first test asking for a desk model also waits for its warm-up (above),
# which takes about twice as long under the portable kernels (ATEN_CPU_CAPABILITY=default) as natively
DESK_FIXTURES = ("desk_dir", "order_naming_desk_dir")
DESK_WARM_UP_ALLOWANCE_S = 900


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that uses a desk model gets the warm-up's allowance on top of its own timeout (its marker's, or the
    configured one)."""
    if not config.pluginmanager.hasplugin("timeout"):
        return
    configured = float(config.getini("timeout") or 0)
    for item in items:
        if not set(DESK_FIXTURES) & set(getattr(item, "fixturenames", ())):
            continue
        marker = item.get_closest_marker("timeout")
        own = float(marker.args[0]) if marker is not None and marker.args else configured
        if own > 0:
            item.add_marker(pytest.mark.timeout(own + DESK_WARM_UP_ALLOWANCE_S), append=False)


@pytest.fixture()
def tiny_tokenizer(tiny_dir: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


@pytest.fixture()
def tiny_model(tiny_dir: Path) -> Any:
    """A fresh copy of the tiny model for each test (training mutates it)."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_dir)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """On CI (CI=true) a browser test that skips (no Chromium, no Playwright) fails instead: the page must be
    checked in a real browser there, not quietly left out."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and item.get_closest_marker("browser") is not None and os.environ.get("CI") == "true":
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.longrepr = f"browser test skipped on CI (CI=true), which must not happen: {reason}"
