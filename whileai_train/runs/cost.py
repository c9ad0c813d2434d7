"""GPU cost of a run: kind and count from torch.cuda, a dated price table, and the estimate's wording.

``cost_usd = gpu_count x seconds / 3600 x rate``, to the cent. The rate is Modal's on-demand list price
read 2026-09-20 (modal.com/pricing); a GPU not in the table has no estimate unless the
caller passes ``rate=`` (USD per GPU-hour). It is an estimate, not a bill.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from whileai_train.runs.defaults import GPU_PRICE_DATE, GPU_PRICE_SOURCE, GPU_USD_PER_HOUR

__all__ = ["GPU_USD_PER_HOUR", "CostMeter", "detect_gpu", "duration_text", "gpu_kind"]


def duration_text(seconds: float) -> str:
    """A run's duration as every place prints it (print(run), `whileai-train show`, the demo): '1.0 s', '56.3 s',
    '312 s'. The run's own clock: from its open (wai.run, or the trainer's start) to its finish."""
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:.0f} s"


def gpu_kind(device_name: str) -> str | None:
    """The price-table key a CUDA device name matches ("NVIDIA A10G" -> "A10G"), or None."""
    tokens = device_name.upper().replace("-", " ").replace("_", " ").split()
    for key in sorted(GPU_USD_PER_HOUR, key=len, reverse=True):
        if key in tokens or any(t.startswith(key) and t[len(key):].rstrip("GB").isdigit() for t in tokens):
            return key
    return None


def detect_gpu() -> tuple[str, int]:
    """(kind, count) of the GPUs this job holds: ("cpu", 0) without CUDA.

    The kind is the price-table key when the device matches one, else the device name as CUDA reports it.
    The count is what this node's process sees, or WORLD_SIZE under a launcher when larger (one GPU per rank).
    torch is imported only here, and only if the caller has not imported it: a job without torch is "cpu".
    """
    torch: Any = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # lazy on purpose: `import whileai_train` must not pull torch
        except ImportError:
            return "cpu", 0
    try:
        if not torch.cuda.is_available():
            return "cpu", 0
        name = str(torch.cuda.get_device_name(0))
        count = int(torch.cuda.device_count())
    except Exception:  # noqa: BLE001  (a broken driver is "no GPU" for costing, never an error in training)
        return "cpu", 0
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    return gpu_kind(name) or name, max(count, world)


@dataclass(frozen=True)
class CostMeter:
    """Prices seconds of this job. `rate` is USD per GPU-hour, None when there is no estimate."""

    gpu: str
    gpu_count: int
    rate: float | None
    basis: str

    @classmethod
    def for_job(cls, rate: float | None = None, gpu: str | None = None, gpu_count: int | None = None) -> CostMeter:
        """The meter for this machine (or for `gpu`/`gpu_count` when given); `rate` overrides the table."""
        if gpu is None:
            gpu, detected = detect_gpu()
            gpu_count = detected if gpu_count is None else gpu_count
        count = 1 if gpu_count is None else int(gpu_count)
        if gpu == "cpu" or count == 0:
            return cls("cpu", 0, None, "no estimate: no GPU (cpu)")
        times = f"{count} x " if count > 1 else ""
        if rate is not None:
            return cls(gpu, count, float(rate), f"estimate: {times}{gpu} at ${float(rate):.2f}/h, rate= given")
        table_rate = GPU_USD_PER_HOUR.get(gpu)
        if table_rate is None:
            return cls(
                gpu, count, None,
                f"no estimate: {gpu} is not in the price table (GPU_USD_PER_HOUR); pass rate= (USD per GPU-hour)",
            )
        return cls(
            gpu, count, table_rate,
            f"estimate: {times}{gpu} at ${table_rate:.2f}/h, {GPU_PRICE_SOURCE} {GPU_PRICE_DATE}",
        )

    def cost_usd(self, seconds: float) -> float | None:
        """gpu_count x seconds / 3600 x rate, to the cent; None without a rate."""
        if self.rate is None:
            return None
        return round(self.gpu_count * seconds / 3600.0 * self.rate, 2)

    def summary(self, seconds: float) -> dict[str, object]:
        """The cost fields of a run summary."""
        return {
            "gpu": self.gpu,
            "gpu_count": self.gpu_count,
            "seconds": round(seconds, 1),
            "cost_usd": self.cost_usd(seconds),
            "cost_basis": self.basis,
        }

    def line(self, seconds: float) -> str:
        """'about $0.02 (A10G, 56.0 s, estimate)', or 'no cost estimate (cpu, 3.2 s)'."""
        cost = self.cost_usd(seconds)
        gpu = f"{self.gpu_count} x {self.gpu}" if self.gpu_count > 1 else self.gpu
        if cost is None:
            return f"no cost estimate ({gpu}, {duration_text(seconds)})"
        return f"about ${cost:.2f} ({gpu}, {duration_text(seconds)}, estimate)"
