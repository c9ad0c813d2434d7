"""The alert webhook: each alarm and each stop as a JSON POST to a Slack or Discord incoming webhook (or any).

    wai.monitor(..., alert_webhook="https://hooks.slack.com/services/...")   # or WHILEAI_ALERT_WEBHOOK=...
    wai.WhileCallback(alert_webhook=...)                                      # stops only

The body is `{"text": ..., "content": ...}`: Slack's incoming webhooks read `text`, Discord's read `content`
(cut to its 2000 characters), and each ignores the other's key. The training thread only enqueues: a daemon
thread of its own posts, each POST ending within ALERT_DEADLINE_S, connect to last byte (runs/deadline.py: a
server that drips its answer a byte at a time is cut off too), redirects never followed. A POST that fails (no
answer in time, a refused connection, anything but a 2xx) is counted, said once as a warning, and the count is
logged on the run as `alerts/webhook_failures` (never an exception in training); an alert is never retried.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from whileai_train.callbacks import defaults as D
from whileai_train.errors import ConfigError

__all__ = ["AlertWebhook", "alert_webhook_url"]

logger = logging.getLogger("whileai_train.callbacks")

ENV = "WHILEAI_ALERT_WEBHOOK"


def alert_webhook_url(url: str | None) -> str | None:
    """The webhook: the argument, else $WHILEAI_ALERT_WEBHOOK, else None. A value that is not an http(s) URL is a
    ConfigError now (at construction), not a failure at the first alarm."""
    chosen = url if url is not None else (os.environ.get(ENV) or "").strip() or None
    if chosen is None:
        return None
    if not isinstance(chosen, str) or not chosen.startswith(("http://", "https://")):
        where = "alert_webhook=" if url is not None else f"{ENV}="
        raise ConfigError(f"{where}{chosen!r} is not an http(s) URL. Fix: pass the incoming-webhook URL Slack or "
                          f"Discord gave you (https://hooks.slack.com/..., https://discord.com/api/webhooks/...), "
                          "or leave it unset")
    return chosen


class AlertWebhook:
    """Posts alerts from its own thread. `send` never blocks and never raises."""

    def __init__(self, url: str, *, deadline_s: float = D.ALERT_DEADLINE_S) -> None:
        self.url = url
        self.deadline_s = float(deadline_s)
        self.sent = 0
        self.failures = 0
        self.dropped = 0
        self.on_failure: Callable[[int], None] | None = None  # told the failure count (the run logs it)
        self._queue: deque[str] = deque()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._warned = False
        self._busy = False

    def send(self, text: str) -> None:
        """Enqueue one alert (the training thread's whole cost: an append and a notify)."""
        with self._wake:
            if len(self._queue) >= D.ALERT_QUEUE:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(str(text))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="whileai-alert-webhook", daemon=True)
                self._thread.start()
            self._wake.notify()

    def wait(self, timeout_s: float) -> bool:
        """Wait at most `timeout_s` for the queue to empty and the POST under way to end (tests, the end of a run)."""
        end = time.monotonic() + timeout_s
        with self._wake:
            while self._queue or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(min(left, 0.05))
        return True

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._queue:
                    self._wake.wait()
                text = self._queue.popleft()
                self._busy = True
            try:
                self._post(text)
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def _post(self, text: str) -> None:
        cut = text[:D.ALERT_TEXT_CHARS]
        body = json.dumps({"text": cut, "content": cut})
        try:
            import httpx

            from whileai_train.runs.deadline import deadline_client, request_deadline

            client = deadline_client(self.url, {"Content-Type": "application/json"},
                                     connect_timeout_s=min(D.ALERT_CONNECT_TIMEOUT_S, self.deadline_s),
                                     read_timeout_s=self.deadline_s)
            with client, request_deadline(self.deadline_s):
                response = client.post(self.url, content=body)
            if not 200 <= response.status_code < 300:
                raise httpx.HTTPStatusError(f"HTTP {response.status_code}", request=response.request,
                                            response=response)
            self.sent += 1
        except Exception as exc:  # noqa: BLE001  (an alert that cannot be delivered never reaches training)
            self.failures += 1
            if not self._warned:
                self._warned = True
                logger.warning("whileai: the alert webhook did not take an alert (%s: %s); the alarm is on the run, "
                               "and each failure is counted there as alerts/webhook_failures (said once)",
                               type(exc).__name__, _short(exc))
            hook = self.on_failure
            if hook is not None:
                try:
                    hook(self.failures)
                except Exception:  # noqa: BLE001, S110
                    pass

    def state(self) -> dict[str, Any]:
        return {"sent": self.sent, "failures": self.failures, "dropped": self.dropped}


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"
