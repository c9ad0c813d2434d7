"""Defaults of WhileCallback, each with its source (the reward monitor's are in monitor_defaults.py)."""

from __future__ import annotations

__all__ = ["GPU_READ_INTERVAL_S"]

# GPU memory and utilisation are read at most once a second: NVML's utilisation is itself an average over a
# sample period of 1/6 s to 1 s (NVIDIA's nvmlDeviceGetUtilizationRates), and wandb's and trackio's system
# panels sample every few seconds; a point logged more often carries the latest reading.
GPU_READ_INTERVAL_S = 1.0
