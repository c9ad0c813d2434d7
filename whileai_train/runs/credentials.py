"""The platform key: where it comes from, and keeping it out of logs, reprs, exceptions and the spool.

Resolution order (first found wins): the ``api_key=`` argument, ``WHILEAI_DELEGATED_CREDENTIAL``,
``WHILEAI_API_KEY``, then the key saved in ``$WHILEAI_HOME/credentials.json`` (``~/.whileai`` by default).
The key lives only inside a ``Credential``; its repr and str name the source, never the key.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from whileai_train.errors import RunError
from whileai_train.runs.config import whileai_home

__all__ = ["Credential", "credentials_path", "redact", "resolve_credential", "save_key"]

_ENV_ORDER = ("WHILEAI_DELEGATED_CREDENTIAL", "WHILEAI_API_KEY")


@dataclass(frozen=True)
class Credential:
    """A platform key and where it came from. Printing it shows the source only."""

    source: str
    _key: str = field(repr=False)

    @property
    def key(self) -> str:
        return self._key

    def __repr__(self) -> str:
        return f"Credential(source={self.source!r})"

    __str__ = __repr__


def credentials_path() -> Path:
    return whileai_home() / "credentials.json"


def _validated(key: str, source: str) -> str:
    key = key.strip()
    if not key or any(c.isspace() for c in key) or not key.isprintable():
        raise RunError(
            f"the key from {source} is empty or holds whitespace or control characters. "
            "Fix: set it again without surrounding quotes or newlines."
        )
    if not key.isascii():
        raise RunError(
            f"the key from {source} holds non-ASCII characters (an HTTP header cannot carry them; a key pasted "
            "with typographic quotes or dashes looks like this). Fix: copy the key again as plain ASCII."
        )
    return key


def resolve_credential(api_key: str | None = None) -> Credential | None:
    """The key to use, or None (then runs go to the local store)."""
    if api_key is not None:
        return Credential("the api_key argument", _validated(api_key, "the api_key argument"))
    for name in _ENV_ORDER:
        value = os.environ.get(name)
        if value:
            return Credential(name, _validated(value, name))
    path = credentials_path()
    if path.is_file():
        try:
            saved = json.loads(path.read_bytes().decode("utf-8")).get("api_key")
        except (OSError, ValueError, AttributeError) as exc:
            raise RunError(
                f"{path} is not readable JSON ({type(exc).__name__}). Fix: delete it and save the key again."
            ) from None
        if saved:
            return Credential(str(path), _validated(str(saved), str(path)))
    return None


def save_key(api_key: str) -> Path:
    """Save the key to credentials.json, created with mode 0600 (written to a temp name, then renamed)."""
    key = _validated(api_key, "save_key")
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask cannot widen it
        os.write(fd, json.dumps({"api_key": key}).encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def redact(text: str, credential: Credential | None) -> str:
    """`text` with the key (if any) replaced by ***: for every message that might quote a request."""
    if credential is None or not credential.key:
        return text
    return text.replace(credential.key, "***")
