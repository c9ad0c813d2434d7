"""The privileged-leak guard: a reply that quotes its own row's privileged context must not be trained.

`privileged` holds what the grader may see and the agent may not (a gold answer, a hidden record). The
export scrubs that key, not the reply, so a reply that repeats a privileged value would teach the policy to
produce something it could not have known. A value also present in what the agent did see (system, user or
tool turns) is not a leak.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import Field

from whileai_train.exporters.defaults import PRIVILEGED_MIN_CHARS
from whileai_train.report import Report

__all__ = ["LeakReport", "agent_said", "agent_words", "leak_report", "leaks_by_row", "privileged_strings",
           "quotes_privileged"]

_SHOWN = 10  # rows printed by LeakReport; the rest are counted


class LeakReport(Report):
    """Rows whose replies quote their own privileged context: the rows an export refuses (privileged_leak)."""

    n_rows: int = 0
    leaks: dict[int, list[str]] = Field(default_factory=dict)  # row index -> the privileged values its replies quote

    @property
    def ok(self) -> bool:
        """No row quotes its own privileged context: the export will not refuse on privileged_leak."""
        return not self.leaks

    @property
    def rows(self) -> list[int]:
        """The row indexes to drop before an export."""
        return sorted(self.leaks)

    def __str__(self) -> str:
        if self.ok:
            return f"leak_report: ok, none of {self.n_rows} rows quotes its own privileged context"
        lines = [f"leak_report: PRIVILEGED LEAK in {len(self.leaks)} of {self.n_rows} rows: a reply quotes the "
                 "row's own privileged context (the export scrubs the key, not the reply)"]
        lines += [f"  row {index}: {', '.join(repr(value) for value in self.leaks[index])}"
                  for index in self.rows[:_SHOWN]]
        if len(self.leaks) > _SHOWN:
            lines.append(f"  ... and {len(self.leaks) - _SHOWN} more rows")
        lines.append("  fix: drop these rows (report.rows) before the export, or pass validate=False to the export")
        return "\n".join(lines)


def privileged_strings(privileged: Any, min_chars: int = PRIVILEGED_MIN_CHARS) -> list[str]:
    """Every string (and number written as text) in `privileged` at least `min_chars` long, casefolded."""
    found: list[str] = []
    if type(privileged) is dict:  # the common shape, a flat object of text: same strings, same order
        values = list(privileged.values())
        for value in values:
            if type(value) is not str:
                break
        else:
            for value in reversed(values):  # the order the stack below pops them in
                if len(value) >= min_chars:
                    text = " ".join(value.split()).casefold()
                    if len(text) >= min_chars:
                        found.append(text)
            return found
    stack = [privileged]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str:
            if len(value) >= min_chars:  # normalising never lengthens: skip short values before the work
                text = " ".join(value.split()).casefold()
                if len(text) >= min_chars:
                    found.append(text)
        elif kind is dict:
            stack.extend(value.values())
        elif kind is list or kind is tuple:
            stack.extend(value)
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            text = str(value)
            if len(text) >= min_chars:
                found.append(text)
        elif isinstance(value, str):
            stack.append(str(value))
    return found


_SECRETS: dict[tuple[Any, ...], tuple[list[str], list[str]]] = {}  # flat text privileged values -> _scan_of
_SECRETS_MAX = 4096


def _scan_of(secrets: list[str]) -> tuple[list[str], list[str]]:
    """(secrets, probes): each secret's longest word, which a reply quoting the secret contains (casefolded)."""
    return secrets, [max(secret.split(" "), key=len) for secret in secrets]


def _secrets(privileged: Any, min_chars: int) -> tuple[list[str], list[str]]:
    """privileged_strings and their probes, remembered for flat objects of text (a task's rollouts share one
    privileged record)."""
    if type(privileged) is not dict:
        return _scan_of(privileged_strings(privileged, min_chars))
    key = (min_chars, *privileged.values())
    if len(key) == 2:  # one value, the common record: no loop
        if type(key[1]) is not str:  # only exact text: 1, 1.0 and True are equal keys with different strings
            return _scan_of(privileged_strings(privileged, min_chars))
    else:
        for value in privileged.values():
            if type(value) is not str:
                return _scan_of(privileged_strings(privileged, min_chars))
    found = _SECRETS.get(key)
    if found is None:
        found = _scan_of(privileged_strings(privileged, min_chars))
        if len(_SECRETS) >= _SECRETS_MAX:
            _SECRETS.clear()
        _SECRETS[key] = found
    return found


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def quotes_privileged(messages: Sequence[Mapping[str, Any]], privileged: Any,
                      min_chars: int = PRIVILEGED_MIN_CHARS, said: list[str] | None = None) -> list[str]:
    """The privileged values an agent turn repeats that nothing the agent saw contained (empty: no leak).

    `said`: the agent's words of `messages` in `agent_said` order, when the caller collected them already.
    """
    secrets, probes = _secrets(privileged, min_chars)
    if not secrets:
        return []
    # casefold maps whitespace to itself and nothing else to whitespace (tests check every code point), so
    # _norm(text) is " ".join(text.casefold().split()), and a secret found there has each of its words in
    # text.casefold(): a reply without any secret's probe word quotes none (the common case, one cheap pass).
    folded = "\n".join(agent_said(messages) if said is None else said).casefold()
    for probe in probes:
        if probe in folded:
            break
    else:
        return []
    said_text = " ".join(folded.split())
    hits = [secret for secret in secrets if secret in said_text]
    if not hits:
        return []
    seen = _norm("\n".join(m.get("content") or "" for m in messages if m["role"] != "assistant"))
    return [secret for secret in hits if secret not in seen]


def agent_said(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The agent's words in order: each agent turn's text, then its calls' arguments (`agent_words`)."""
    said_parts: list[str] = []
    append = said_parts.append
    for message in messages:
        if message["role"] != "assistant":
            continue
        content = message.get("content")
        if content:
            append(content)
        for call in message.get("tool_calls") or ():
            arguments = call["function"]["arguments"]
            if type(arguments) is str:
                append(arguments)
            elif type(arguments) is dict:  # the common shape: a flat object of text and numbers
                for item in arguments.values():
                    if type(item) is str:
                        append(item)
                    else:
                        agent_words(item, said_parts)
            else:
                agent_words(arguments, said_parts)
    return said_parts


def agent_words(value: Any, out: list[str]) -> None:
    """Append the text of one tool-call argument value (numbers as text, None as nothing) to `out`."""
    kind = type(value)
    if kind is str:
        out.append(value)
    elif kind is int or kind is float or kind is bool:  # before the Mapping check (an ABC check is slow)
        out.append(str(value))
    elif kind is dict or isinstance(value, Mapping):
        for item in value.values():
            agent_words(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            agent_words(item, out)
    elif value is not None:
        out.append(str(value))


def leak_report(rows: Any) -> LeakReport:
    """The rows an export refuses with privileged_leak, each with the privileged values its replies quote.

    `rows`: a list of dicts, a JSONL/JSON path, a datasets.Dataset or any iterable of rows. A value the agent
    also saw (system, user or tool turns) is not a leak.

        report = wai.leak_report(rows)
        clean = [row for i, row in enumerate(rows) if i not in report.leaks]
    """
    from whileai_train.rows.intake import take_rows

    listed = take_rows(rows, "leak_report")
    return LeakReport(n_rows=len(listed), leaks=leaks_by_row(listed))


def leaks_by_row(rows: Iterable[Mapping[str, Any]]) -> dict[int, list[str]]:
    """Row index -> the privileged values its replies quote; the rows an export would refuse."""
    from whileai_train.rows.contract import conversation

    leaks: dict[int, list[str]] = {}
    for index, row in enumerate(rows):
        if row.get("privileged") is None:
            continue
        quoted = quotes_privileged(conversation(row, index), row["privileged"])
        if quoted:
            leaks[index] = quoted
    return leaks
