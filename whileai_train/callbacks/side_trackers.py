"""The reward monitor's alarms, also raised as alerts in the trackers a trainer reports to beside our run.

With `report_to=["trackio"]` or `["wandb"]` the trainer's own callbacks keep their run next to ours, and an
alarm is then an alert there too, through each tracker's own alert call (read from their installed source):
- trackio: `trackio.alert(title, text, level=trackio.AlertLevel.WARN)`, on the run trackio.init opened;
- wandb: `wandb.run.alert(title, text, level="WARN")` (offline, it is kept in the run file and sent on sync).
Only a tracker this process has already imported and that holds a current run is called: nothing is imported
or started here. A tracker that fails is one warning per tracker; the alarm is on our run either way.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

__all__ = ["alert_side_trackers"]

logger = logging.getLogger("whileai_train.callbacks")

_failed: set[str] = set()  # trackers whose alert call failed once (said once per process)


def _trackio(title: str, text: str) -> bool:
    trackio = sys.modules.get("trackio")
    if trackio is None or trackio.context_vars.current_run.get() is None:
        return False
    trackio.alert(title=title, text=text, level=trackio.AlertLevel.WARN)
    return True


def _wandb(title: str, text: str) -> bool:
    wandb = sys.modules.get("wandb")
    run = getattr(wandb, "run", None) if wandb is not None else None
    if run is None:
        return False
    run.alert(title=title[:63], text=text, level="WARN")  # wandb takes a title under 64 characters
    return True


_TRACKERS: dict[str, Callable[[str, str], bool]] = {"trackio": _trackio, "wandb": _wandb}


def alert_side_trackers(title: str, text: str) -> list[str]:
    """Raise the alert in every tracker with a current run in this process; the names of those alerted."""
    alerted = []
    for name, send in _TRACKERS.items():
        try:
            if send(title, text):
                alerted.append(name)
        except Exception as exc:  # noqa: BLE001  (another tracker's failure never reaches training)
            if name not in _failed:
                _failed.add(name)
                logger.warning("whileai: could not raise the alarm as a %s alert (%s: %s); it is on the run",
                               name, type(exc).__name__, exc)
    return alerted
