"""GPU memory and utilisation on each point (callbacks/gpu_metrics.py), with torch's CUDA readers faked on this
CPU machine: read on a background thread at most once a second, carried by every point WhileCallback logs,
absent without CUDA, and drawn on the run page in a "system" family."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

import whileai_train as wai
from whileai_train.callbacks import gpu_metrics
from whileai_train.runs.config import SenderConfig
from whileai_train.runs.sinks import MemorySink
from whileai_train.runs.store import LocalStore

FAST = SenderConfig(flush_interval_s=0.05, finish_wait_s=10.0)
GB = 1024 ** 3


class FakeCuda:
    """torch.cuda's readers as a GPU would answer: 2 GB allocated, 3 reserved, 2.5 peak, 87% busy."""

    def __init__(self, nvml: bool = True) -> None:
        self.nvml = nvml
        self.threads: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(gpu_metrics, "cuda_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.cuda, "memory_allocated", self.allocated)
        monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 3 * GB)
        monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: 2.5 * GB)
        monkeypatch.setattr(torch.cuda, "utilization", self.utilization)

    def allocated(self, device: Any = None) -> int:
        self.threads.append(threading.current_thread().name)
        return 2 * GB

    def utilization(self, device: Any = None) -> int:
        if not self.nvml:
            raise ModuleNotFoundError("pynvml does not seem to be installed")
        return 87


def _train(model: Any, tokenizer: Any, tmp_path: Path, callback: Any, steps: int) -> None:
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    rows = [{"prompt": f"what is {i} ?", "completion": f" {i}"} for i in range(16)]
    config = SFTConfig(output_dir=str(tmp_path / "out"), max_steps=steps, per_device_train_batch_size=2,
                       logging_steps=1, report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True)
    SFTTrainer(model=model, args=config, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
               callbacks=[callback]).train()


@pytest.mark.trainer
def test_every_point_carries_the_gpu_reading_read_off_the_training_thread(
        monkeypatch: pytest.MonkeyPatch, tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    fake = FakeCuda()
    fake.install(monkeypatch)
    sink = MemorySink()
    callback = wai.WhileCallback(run=wai.run(name="gpu", sink=sink, config=FAST))
    started = time.monotonic()
    _train(tiny_model, tiny_tokenizer, tmp_path, callback, steps=6)
    elapsed = time.monotonic() - started
    points = list(sink.points[callback.run.id].values())
    assert [p["step"] for p in points] == [1, 2, 3, 4, 5, 6]
    for point in points:
        assert point["system/gpu_memory_allocated_gb"] == 2.0 and point["system/gpu_memory_reserved_gb"] == 3.0
        assert point["system/gpu_memory_peak_gb"] == 2.5 and point["system/gpu_utilization"] == 87.0
    # one read on the training thread as training begins (the first point has a reading); every other read
    # on the reader's own thread, and at most one a second however often the trainer logs
    assert fake.threads[0] == threading.current_thread().name
    assert set(fake.threads[1:]) <= {"whileai-gpu"}
    assert len(fake.threads) <= 2 + elapsed / gpu_metrics.GPU_READ_INTERVAL_S
    assert not any(t.name == "whileai-gpu" for t in threading.enumerate())  # stopped at train end


def test_without_nvml_memory_still_goes_and_without_cuda_nothing_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    FakeCuda(nvml=False).install(monkeypatch)
    reading = gpu_metrics.read_gpu()
    assert reading == {"system/gpu_memory_allocated_gb": 2.0, "system/gpu_memory_reserved_gb": 3.0,
                       "system/gpu_memory_peak_gb": 2.5}
    monkeypatch.setattr(gpu_metrics, "cuda_available", lambda: False)
    reader = gpu_metrics.GpuMetrics()
    assert reader.start() is False and reader.latest() == {}


@pytest.mark.trainer
def test_no_gpu_keys_on_a_cpu_run(tiny_model: Any, tiny_tokenizer: Any, tmp_path: Path) -> None:
    sink = MemorySink()
    callback = wai.WhileCallback(run=wai.run(name="cpu", sink=sink, config=FAST))
    _train(tiny_model, tiny_tokenizer, tmp_path, callback, steps=2)
    assert not any(key.startswith("system/") for p in sink.points[callback.run.id].values() for key in p)


@pytest.mark.browser
def test_the_run_page_draws_gpu_metrics_in_a_system_family(tmp_path: Path) -> None:
    from tests.helpers.serve_helpers import ServeProcess, chromium

    store = LocalStore(tmp_path / "home" / "runs.db")
    run_id = store.create_run({"name": "gpu run", "total_steps": 5})
    store.add_points(run_id, [{"seq": s, "step": s + 1, "loss": 1.0 / (s + 1), "system/gpu_memory_allocated_gb": 2.0,
                               "system/gpu_memory_reserved_gb": 3.0, "system/gpu_memory_peak_gb": 2.5,
                               "system/gpu_utilization": 80.0 + s} for s in range(5)], progress=(5, 5))
    store.finish(run_id, "done", {})
    store.close()
    with ServeProcess(tmp_path / "home") as server, chromium() as browser:
        page = browser.new_page()
        page.goto(server.url + f"/#run={run_id}")
        page.wait_for_selector('details.family[data-family="system"] .chart canvas')
        assert page.locator("details.family").evaluate_all("ds => ds.map(d => d.dataset.family)") == ["system"]
        system = page.locator('details.family[data-family="system"]')
        assert system.locator("summary").inner_text() == "system (4)"
        assert system.locator(".chart").count() == 4
