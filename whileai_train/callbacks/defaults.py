"""Defaults of WhileCallback, each with its source (the reward monitor's are in monitor_defaults.py)."""

from __future__ import annotations

__all__ = ["ALERT_CONNECT_TIMEOUT_S", "ALERT_DEADLINE_S", "ALERT_QUEUE", "ALERT_TEXT_CHARS", "GPU_READ_INTERVAL_S"]

# GPU memory and utilisation are read at most once a second: NVML's utilisation is itself an average over a
# sample period of 1/6 s to 1 s (NVIDIA's nvmlDeviceGetUtilizationRates), and wandb's and trackio's system
# panels sample every few seconds; a point logged more often carries the latest reading.
GPU_READ_INTERVAL_S = 1.0

# The alert webhook (alerts.py). One POST ends within 5 s, connect to last byte: Slack answers an incoming
# webhook in well under a second, and a hook that takes longer is down for our purpose; connecting gets 2 s.
ALERT_DEADLINE_S = 5.0
ALERT_CONNECT_TIMEOUT_S = 2.0
# Alerts waiting for the sender thread; past this the oldest waiting one is dropped and counted (a hook that
# hangs must not grow memory: a run fires at most one alarm per alarm name until it clears, plus one stop).
ALERT_QUEUE = 64
# Discord's `content` takes at most 2000 characters (its API reference, Execute Webhook); Slack's `text` more.
ALERT_TEXT_CHARS = 2000
