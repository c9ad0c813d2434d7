"""GPU memory and utilisation for each point of a run, read off the training thread at most once a second.

    system/gpu_memory_allocated_gb   torch.cuda.memory_allocated: tensors alive now
    system/gpu_memory_reserved_gb    torch.cuda.memory_reserved: what the caching allocator holds
    system/gpu_memory_peak_gb        torch.cuda.max_memory_allocated: the high-water mark since the start
    system/gpu_utilization           torch.cuda.utilization: percent of the last sample period a kernel ran
                                     (NVML, through the `pynvml` module of nvidia-ml-py; left out without it)

All four are this process's current device (under DDP each rank has its own; the run is rank 0's). A daemon
thread reads them every `interval_s`; WhileCallback adds the latest reading to each point it logs, so a
logging step costs one dict update and never waits on the driver or NVML. Without CUDA nothing starts.
"""

from __future__ import annotations

import logging
import threading

from whileai_train.callbacks.defaults import GPU_READ_INTERVAL_S

__all__ = ["GPU_KEYS", "GpuMetrics", "cuda_available", "read_gpu"]

logger = logging.getLogger("whileai_train.callbacks")

GPU_KEYS = ("system/gpu_memory_allocated_gb", "system/gpu_memory_reserved_gb", "system/gpu_memory_peak_gb",
            "system/gpu_utilization")
_GB = 1024 ** 3


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def read_gpu() -> dict[str, float]:
    """One reading of this process's current device (utilisation only where NVML answers)."""
    import torch

    device = torch.cuda.current_device()
    reading = {GPU_KEYS[0]: torch.cuda.memory_allocated(device) / _GB,
               GPU_KEYS[1]: torch.cuda.memory_reserved(device) / _GB,
               GPU_KEYS[2]: torch.cuda.max_memory_allocated(device) / _GB}
    try:
        reading[GPU_KEYS[3]] = float(torch.cuda.utilization(device))
    except Exception:  # noqa: BLE001  (no pynvml, or NVML not answering: memory still goes)
        pass
    return reading


class GpuMetrics:
    """The latest GPU reading, refreshed by a daemon thread every `interval_s` while started."""

    def __init__(self, interval_s: float = GPU_READ_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self._latest: dict[str, float] = {}
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._warned = False

    def start(self) -> bool:
        """Start reading when CUDA is there; False (nothing started) without it."""
        if self._thread is not None or not cuda_available():
            return self._thread is not None
        self._halt.clear()
        self._read()  # the first point of the run already carries a reading
        self._thread = threading.Thread(target=self._loop, name="whileai-gpu", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        self._halt.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=self.interval_s + 1.0)

    def latest(self) -> dict[str, float]:
        """The last reading (empty before the first, or without CUDA). Never waits."""
        return self._latest

    def _loop(self) -> None:
        while not self._halt.wait(self.interval_s):
            self._read()

    def _read(self) -> None:
        try:
            self._latest = read_gpu()  # a new dict each time: a reader never sees one half-written
        except Exception as exc:  # noqa: BLE001  (a metrics failure must not reach training)
            if not self._warned:
                self._warned = True
                logger.warning("whileai: could not read GPU memory (%s: %s); points go on without it",
                               type(exc).__name__, exc)

    def __repr__(self) -> str:
        return f"GpuMetrics(interval_s={self.interval_s}, running={self._thread is not None})"

