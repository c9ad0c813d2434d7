"""The privileged-leak guard: a reply that quotes its own row's privileged context must not be trained.

`privileged` holds what the grader may see and the agent may not (a gold answer, a hidden record). The
export scrubs that key, not the reply, so a reply that repeats a privileged value would teach the policy to
produce something it could not have known. A value also present in what the agent did see (system, user or
tool turns) is not a leak.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from whileai_train.exporters.defaults import PRIVILEGED_MIN_CHARS

__all__ = ["leak_report", "privileged_strings", "quotes_privileged"]


def privileged_strings(privileged: Any, min_chars: int = PRIVILEGED_MIN_CHARS) -> list[str]:
    """Every string (and number written as text) in `privileged` at least `min_chars` long, casefolded."""
    found: list[str] = []
    stack = [privileged]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = " ".join(str(value).split()).casefold()
            if len(text) >= min_chars:
                found.append(text)
    return found


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def quotes_privileged(messages: Iterable[Mapping[str, Any]], privileged: Any,
                      min_chars: int = PRIVILEGED_MIN_CHARS) -> list[str]:
    """The privileged values an agent turn repeats that nothing the agent saw contained (empty: no leak)."""
    secrets = privileged_strings(privileged, min_chars)
    if not secrets:
        return []
    seen_parts: list[str] = []
    said_parts: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            said_parts.append(message.get("content") or "")
            for call in message.get("tool_calls") or ():
                arguments = call["function"]["arguments"]
                said_parts.append(arguments if isinstance(arguments, str) else
                                  " ".join(str(v) for v in _leaves(arguments)))
        else:
            seen_parts.append(message.get("content") or "")
    said = _norm("\n".join(said_parts))
    seen = _norm("\n".join(seen_parts))
    return [secret for secret in secrets if secret in said and secret not in seen]


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def leak_report(rows: Iterable[Mapping[str, Any]]) -> dict[int, list[str]]:
    """Row index -> the privileged values its replies quote; the rows an export would refuse."""
    from whileai_train.rows import conversation

    leaks: dict[int, list[str]] = {}
    for index, row in enumerate(rows):
        if row.get("privileged") is None:
            continue
        quoted = quotes_privileged(conversation(row, index), row["privileged"])
        if quoted:
            leaks[index] = quoted
    return leaks
