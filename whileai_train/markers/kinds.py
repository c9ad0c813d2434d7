"""What a tool call does: read, write, delete, run a command, or other, from its name and its arguments.

The arguments speak first: an editor's ``command="view"`` is a read whatever the tool is called, and a shell
tool's command string is read for what it runs (a write, a delete, a test run). Then the first verb of the name
(split at ``_ - .`` and camelCase): ``lookup_order`` reads, ``issue_refund`` writes, ``delete_file`` deletes.
A name with no known verb, and no argument that says, is "other". ``kinds={"my_tool": "write"}`` overrides.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.markers.defaults import (
    COMMAND_KEYS,
    COMMAND_NAME_TOKENS,
    CONTENT_KEYS,
    DELETE_COMMAND,
    DELETE_VERBS,
    KINDS,
    MODE_KEYS,
    PATH_KEYS,
    READ_ONLY_COMMAND,
    READ_VERBS,
    TEST_RUN,
    WRITE_COMMAND,
    WRITE_VERBS,
)

__all__ = ["CallKind", "check_kinds", "classify", "command_of", "name_tokens", "path_of", "warn_unused_kinds"]

_PATH_SET = frozenset(PATH_KEYS)
_MODE_SET = frozenset(MODE_KEYS)
_COMMAND_SET = frozenset(COMMAND_KEYS)
_CONTENT_SET = frozenset(CONTENT_KEYS)
_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True, slots=True)
class CallKind:
    """What one call does. `writes`: it may have changed something (backs an "I updated" claim)."""

    kind: str  # one of KINDS
    command: str  # the command text of a command call, else ""
    test_run: bool  # it runs tests
    writes: bool
    deletes: bool


def name_tokens(name: str) -> tuple[str, ...]:
    """A tool name's words, lower-cased: issueRefund, issue_refund and issue-refund all give (issue, refund)."""
    return tuple(part.lower() for part in _SPLIT.split(name) if part)


def _verb_kind(tokens: tuple[str, ...]) -> str | None:
    for token in tokens:
        if token in DELETE_VERBS:
            return "delete"
        if token in WRITE_VERBS:
            return "write"
        if token in READ_VERBS:
            return "read"
    return None


_NAME_CACHE: dict[str, tuple[str | None, bool, bool]] = {}


def _name_info(name: str) -> tuple[str | None, bool, bool]:
    """(kind by the name's first verb, names a command runner, names a test run), cached per name."""
    info = _NAME_CACHE.get(name)
    if info is None:
        tokens = name_tokens(name)
        info = (_verb_kind(tokens), any(t in COMMAND_NAME_TOKENS for t in tokens),
                any(t in ("test", "tests", "pytest", "unittest") for t in tokens))
        if len(_NAME_CACHE) < 10_000:
            _NAME_CACHE[name] = info
    return info


def command_of(arguments: Mapping[str, Any]) -> str:
    """The command text a call runs: the first of COMMAND_KEYS holding text (a list of words is joined)."""
    if _COMMAND_SET.isdisjoint(arguments):
        return ""
    for key in COMMAND_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return ""


def path_of(arguments: Mapping[str, Any]) -> str:
    """The file a call touches: the first of PATH_KEYS holding text ("" when none)."""
    if _PATH_SET.isdisjoint(arguments):
        return ""
    for key in PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str):
            return value
    return ""


def _command_kind(command: str) -> CallKind:
    deletes = DELETE_COMMAND.search(command) is not None
    read_only = READ_ONLY_COMMAND.fullmatch(command) is not None
    writes = deletes or WRITE_COMMAND.search(command) is not None or not read_only
    return CallKind("command", command, TEST_RUN.search(command) is not None, writes, deletes)


_READ = CallKind("read", "", False, False, False)
_WRITE = CallKind("write", "", False, True, False)
_DELETE = CallKind("delete", "", False, True, True)
_OTHER = CallKind("other", "", False, True, False)
_BY_KIND = {"read": _READ, "write": _WRITE, "delete": _DELETE, "other": _OTHER}


def classify(name: str, arguments: Mapping[str, Any], kinds: Mapping[str, str] | None = None) -> CallKind:
    """What the call does (see the module docstring); `kinds` maps a tool name to its kind and wins."""
    if kinds:
        forced = kinds.get(name)
        if forced is not None:
            if forced == "command":
                return _command_kind(command_of(arguments))
            return _BY_KIND[forced]
    by_name, runs_commands, names_tests = _name_info(name)
    if arguments and not _MODE_SET.isdisjoint(arguments):
        for key in MODE_KEYS:
            mode = arguments.get(key)
            if isinstance(mode, str) and mode and " " not in mode.strip():
                mode_kind = _verb_kind(name_tokens(mode))
                if mode_kind is not None:
                    return _BY_KIND[mode_kind]
    if arguments and (runs_commands or by_name is None) and not _COMMAND_SET.isdisjoint(arguments):
        command = command_of(arguments)
        if command:
            return _command_kind(command)
    if names_tests and by_name not in ("write", "delete"):
        return CallKind("command", name, True, False, False)
    if by_name is not None:
        return _BY_KIND[by_name]
    if arguments and path_of(arguments) and not _CONTENT_SET.isdisjoint(arguments):
        return _WRITE
    return _OTHER


def check_kinds(kinds: Any) -> dict[str, str]:
    """kinds= as {tool name: kind}, or a ConfigError that shows the shape and the kinds."""
    if kinds is None:
        return {}
    if not isinstance(kinds, Mapping):
        raise ConfigError(f"kinds is a {type(kinds).__name__}; it maps a tool name to what the tool does. "
                          f"Fix: kinds={{'my_tool': 'write'}} (kinds: {', '.join(KINDS)})")
    out: dict[str, str] = {}
    for name, kind in kinds.items():
        if not isinstance(name, str) or kind not in KINDS:
            raise ConfigError(f"kinds[{name!r}] is {kind!r}; a tool's kind is one of {', '.join(KINDS)}. "
                              f"Fix: kinds={{{name!r}: 'write'}}")
        out[name] = kind
    return out


def warn_unused_kinds(kinds: Mapping[str, str], seen: set[str], where: str) -> None:
    """A UserWarning naming every tool in kinds= that no row called (a typo reads like a tool never used)."""
    unused = sorted(set(kinds) - seen)
    if unused:
        known = ", ".join(sorted(seen)[:10]) or "none"
        warnings.warn(f"{where}: kinds= names {', '.join(unused)}, which no row calls (tools called: {known}); "
                      "check the spelling of the tool name", UserWarning, stacklevel=3)
