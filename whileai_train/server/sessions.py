"""The dashboard's logins: a random session token per typed key, with an expiry, held in memory only (a
restart forgets every session), and a limit on wrong keys per address.

The cookie never carries the key or anything derived from it, so a leaked cookie is worth one session and
dies with its expiry or the server's restart.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict, deque

from whileai_train.server.defaults import (
    MAX_SESSIONS,
    SESSION_ATTEMPTS,
    SESSION_ATTEMPTS_WINDOW_S,
    SESSION_TTL_S,
)

__all__ = ["LoginLimit", "Sessions"]


class Sessions:
    """Session tokens -> their expiry (monotonic seconds), the oldest dropped past `max_sessions`."""

    def __init__(self, *, ttl_s: float = SESSION_TTL_S, max_sessions: int = MAX_SESSIONS) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._expiry: OrderedDict[str, float] = OrderedDict()

    def __repr__(self) -> str:
        return f"Sessions({len(self._expiry)} live, {self.ttl_s:g} s each)"

    def create(self) -> str:
        """A new random token (256 bits), valid for `ttl_s`."""
        now = time.monotonic()
        while self._expiry and (next(iter(self._expiry.values())) <= now or len(self._expiry) >= self.max_sessions):
            self._expiry.popitem(last=False)  # every token lives `ttl_s`, so the first is the one to expire first
        token = secrets.token_urlsafe(32)
        self._expiry[token] = now + self.ttl_s
        return token

    def valid(self, token: str | None) -> bool:
        """True for a token this server made and that has not expired. A random 256-bit token is looked up
        by its hash: there is no secret prefix for a timing difference to reveal."""
        expires = self._expiry.get(token) if token else None
        if expires is None:
            return False
        if expires <= time.monotonic():
            del self._expiry[token]  # type: ignore[arg-type]
            return False
        return True


class LoginLimit:
    """Wrong keys per address: at most `attempts` in any `window_s`; past it, how long to wait."""

    def __init__(self, *, attempts: int = SESSION_ATTEMPTS, window_s: float = SESSION_ATTEMPTS_WINDOW_S) -> None:
        self.attempts = attempts
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}

    def __repr__(self) -> str:
        return f"LoginLimit({self.attempts} wrong keys per {self.window_s:g} s per address)"

    def wait_s(self, address: str) -> float:
        """0 when `address` may try a key now, else the seconds until it may."""
        recent = self._recent(address)
        if len(recent) < self.attempts:
            return 0.0
        return max(0.0, recent[0] + self.window_s - time.monotonic())

    def failed(self, address: str) -> None:
        self._recent(address).append(time.monotonic())

    def _recent(self, address: str) -> deque[float]:
        now = time.monotonic()
        for known in [a for a, times in self._failures.items() if not times or times[-1] <= now - self.window_s]:
            del self._failures[known]  # addresses with no failure in the window are forgotten
        recent = self._failures.setdefault(address, deque())
        while recent and recent[0] <= now - self.window_s:
            recent.popleft()
        return recent
