"""Where runs live and how the sender behaves: the environment is read here and nowhere else.

``WHILEAI_HOME`` (default ``~/.whileai``) holds the local store (``runs.db``), the spool (``spool/``) and
``credentials.json``. ``WHILEAI_API_URL`` names the platform's API. The sender's timings can be shortened
through ``SenderConfig`` (tests do) or, for a process you cannot reach from Python, through
``WHILEAI_FLUSH_INTERVAL_S``, ``WHILEAI_FINISH_WAIT_S``, ``WHILEAI_CONNECT_TIMEOUT_S``,
``WHILEAI_READ_TIMEOUT_S``, ``WHILEAI_REQUEST_DEADLINE_S``, ``WHILEAI_OPEN_TIMEOUT_S``,
``WHILEAI_SYNC_DEADLINE_S``, ``WHILEAI_BACKOFF_BASE_S``, ``WHILEAI_BACKOFF_MAX_S``.

``WHILEAI_MODE`` (the switch people reach for as WANDB_MODE): ``online`` (the default: the platform with a key,
else the local store), ``offline`` (the local store even when a key is set; nothing goes over the network) or
``disabled`` (no store is opened and no file written: every run call is a no-op on a Run that records nothing).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path

from whileai_train.errors import ConfigError
from whileai_train.runs import defaults

__all__ = ["MODES", "SenderConfig", "api_url", "run_mode", "whileai_home"]

MODES = ("online", "offline", "disabled")


def whileai_home() -> Path:
    """The folder for the local store, the spool and the saved key: $WHILEAI_HOME, else ~/.whileai."""
    value = os.environ.get("WHILEAI_HOME")
    return Path(value).expanduser() if value else Path.home() / ".whileai"


def run_mode() -> str:
    """$WHILEAI_MODE: "online" (unset or empty), "offline" or "disabled"; anything else is a ConfigError."""
    raw = os.environ.get("WHILEAI_MODE", "").strip().lower()
    if not raw:
        return "online"
    if raw not in MODES:
        raise ConfigError(f"WHILEAI_MODE={raw!r} is not one of {', '.join(MODES)}. Fix: set one of those, or unset it.")
    return raw


def api_url(url: str | None = None) -> str:
    """The platform API base URL: the argument, else $WHILEAI_API_URL, else the default."""
    chosen = url or os.environ.get("WHILEAI_API_URL") or defaults.DEFAULT_API_URL
    if not chosen.startswith(("http://", "https://")):
        raise ConfigError(f"url {chosen!r} is not an http(s) URL. Fix: pass url='https://host' or unset it.")
    return chosen.rstrip("/")


@dataclass(frozen=True)
class SenderConfig:
    """Timings of the background sender (seconds). Keyword-only; every field has a sourced default."""

    flush_interval_s: float = defaults.FLUSH_INTERVAL_S
    finish_wait_s: float = defaults.FINISH_WAIT_S
    connect_timeout_s: float = defaults.CONNECT_TIMEOUT_S
    read_timeout_s: float = defaults.READ_TIMEOUT_S
    request_deadline_s: float = defaults.REQUEST_DEADLINE_S
    open_timeout_s: float = defaults.OPEN_TIMEOUT_S
    sync_deadline_s: float = defaults.SYNC_DEADLINE_S
    backoff_base_s: float = defaults.BACKOFF_BASE_S
    backoff_max_s: float = defaults.BACKOFF_MAX_S
    retry_after_max_s: float = defaults.RETRY_AFTER_MAX_S
    max_points_per_call: int = defaults.MAX_POINTS_PER_CALL

    def __post_init__(self) -> None:
        if not 0 < self.flush_interval_s <= defaults.FLUSH_INTERVAL_S:
            raise ConfigError(
                f"flush_interval_s={self.flush_interval_s} must be in (0, {defaults.FLUSH_INTERVAL_S}]: a killed "
                "process may lose at most one flush interval. Fix: pass a value <= 1.0."
            )
        if not 1 <= self.max_points_per_call <= defaults.MAX_POINTS_PER_CALL:
            raise ConfigError(
                f"max_points_per_call={self.max_points_per_call}: the API takes 1 to "
                f"{defaults.MAX_POINTS_PER_CALL} points a call. Fix: pass a value in that range."
            )

    @classmethod
    def from_env(cls) -> SenderConfig:
        """Defaults, overridden by WHILEAI_<FIELD> environment variables where set."""
        values: dict[str, float | int] = {}
        for f in fields(cls):
            raw = os.environ.get("WHILEAI_" + f.name.upper())
            if raw:
                try:
                    values[f.name] = int(raw) if f.name == "max_points_per_call" else float(raw)
                except ValueError as exc:
                    raise ConfigError(
                        f"WHILEAI_{f.name.upper()}={raw!r} is not a number. Fix: set a number or unset it."
                    ) from exc
        return cls(**values)  # type: ignore[arg-type]
