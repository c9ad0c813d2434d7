"""Argument grounding: did every value the agent sent a tool come from somewhere?

A policy trained to call a tool learns to call it before it learns when not to, and invents the order id the
prompt never gave (GRPO and DPO can both learn it on a quarter of the prompts
that gave none while the headline rose). A string argument is grounded when it appears (case-folded, as a whole:
"A12" is not in "A123") in the prompt, a system or user turn, or a tool result that came back before the
call; numbers and booleans are not checked. ``argument_grounding`` is 1.0 when every string argument of every call is grounded (a row with no
call is grounded), else 0.0. ``ignore_keys=`` skips free-text arguments (a reason, a message body) at any
depth; ``allow=`` lists values that need no source (enums, defaults).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import Field

from whileai_train.errors import name_list
from whileai_train.markers.defaults import EXAMPLES
from whileai_train.markers.families import (
    bad_rate,
    not_stamped_here,
    not_stamped_line,
    stamped_markers,
    summarise,
)
from whileai_train.markers.trajectory import CALLED, HEARD, RESULT, argument_strings, read_events
from whileai_train.report import Report
from whileai_train.rows.intake import take_rows
from whileai_train.tables.marker_column import MarkerSummary

__all__ = ["GroundingReport", "grounding_in", "grounding_of", "grounding_report", "mark_grounding",
           "ungrounded_arguments"]

MARKER = "argument_grounding"


def _names(option: str, value: Any) -> frozenset[str]:
    return frozenset(name_list(option, value))


def _appears(value: str, text: str) -> bool:
    """`value` occurs in `text` as a whole: not inside a longer word or number ("A12" is not in "A123")."""
    start = text.find(value)
    if start < 0:
        return False
    open_left, open_right = not value[0].isalnum(), not value[-1].isalnum()
    while start >= 0:
        end = start + len(value)
        if ((open_left or start == 0 or not text[start - 1].isalnum())
                and (open_right or end == len(text) or not text[end].isalnum())):
            return True
        start = text.find(value, start + 1)
    return False


def _events(row: Any, index: int | None) -> list[tuple[int, Any]]:
    """The row's events; a flat row with a prompt or final_text but neither `steps` nor `messages` made no call,
    so it reads as its prompt and no calls (grounded: "rows with no calls count as grounded", and hack_scan takes
    such rows). Any other fault is the RowError the trajectory reader raises."""
    if (isinstance(row, Mapping) and row.get("steps") is None and row.get("messages") is None
            and (row.get("prompt") is not None or row.get("final_text") is not None)):
        return read_events({**row, "steps": []}, index)
    return read_events(row, index)


def _invented(row: Any, index: int | None, ignore: frozenset[str], allow: frozenset[str]) -> list[dict[str, str]]:
    """The string arguments of the row's calls that no earlier source holds: [{tool, key, value, call}]."""
    return _invented_in(_events(row, index), ignore, allow)


def _invented_in(events: list[tuple[int, Any]], ignore: frozenset[str], allow: frozenset[str]
                 ) -> list[dict[str, str]]:
    # A value is grounded when it appears whole in the earlier sources joined by newlines. A value with no
    # newline cannot span two sources, and the joining newline bounds a match like the text's own edges, so it
    # is looked up source by source, in order; each source is folded (and a result put into text) only when a
    # lookup reaches it.
    sources: list[Any] = []  # what the agent was told (text) or a call whose result came back, in order
    folded: list[str] = []
    found: list[dict[str, str]] = []
    for kind, payload in events:
        if kind == HEARD or kind == RESULT:
            sources.append(payload)
        elif kind == CALLED:
            for key, value in argument_strings(payload.arguments, ignore):
                stripped = value.strip()
                if not stripped or value in allow or stripped in allow:
                    continue
                wanted = stripped.casefold()
                grounded = False
                if "\n" in wanted:
                    _fold(sources, folded, len(sources))
                    grounded = _appears(wanted, "\n".join(folded[:len(sources)]))
                else:
                    for number in range(len(sources)):
                        if number == len(folded):
                            _fold(sources, folded, number + 1)
                        if _appears(wanted, folded[number]):
                            grounded = True
                            break
                if not grounded:
                    found.append({"tool": payload.name, "key": key, "value": value, "call": payload.field})
    return found


def _fold(sources: list[Any], folded: list[str], upto: int) -> None:
    """Fold sources[len(folded):upto] onto `folded`: text as it is, a call's result as its text."""
    for source in sources[len(folded):upto]:
        folded.append(source.casefold() if source.__class__ is str else (source.result or "").casefold())


def ungrounded_arguments(row: Mapping[str, Any], *, ignore_keys: Iterable[str] = (), allow: Iterable[str] = ()
                         ) -> list[dict[str, str]]:
    """The invented values of one row: [{tool, key, value, call}] for every string argument no earlier source
    (prompt, system and user turns, earlier tool results) holds. Empty when the row is grounded."""
    return _invented(row, None, _names("ignore_keys", ignore_keys), _names("allow", allow))


def grounding_of(row: Any, index: int | None = None, ignore: frozenset[str] = frozenset(),
                 allow: frozenset[str] = frozenset()) -> dict[str, float]:
    """The grounding marker of one row: {"argument_grounding": 1.0 when no argument was invented, else 0.0}."""
    return grounding_in(_events(row, index), ignore, allow)


def grounding_in(events: list[tuple[int, Any]], ignore: frozenset[str] = frozenset(),
                 allow: frozenset[str] = frozenset()) -> dict[str, float]:
    """grounding_of on a trajectory already read (its events), for a reader that reads it for other markers too."""
    return {MARKER: 0.0 if _invented_in(events, ignore, allow) else 1.0}


def mark_grounding(rows: Sequence[Mapping[str, Any]], *, ignore_keys: Iterable[str] = (),
                   allow: Iterable[str] = ()) -> list[dict[str, Any]]:
    """New rows with markers["argument_grounding"]: 1.0 when every string argument of every tool call appears in
    the prompt, the system and user turns or an earlier tool result, else 0.0. The input rows are not changed."""
    rows = take_rows(rows, "mark_grounding")
    ignore, allowed = _names("ignore_keys", ignore_keys), _names("allow", allow)
    out: list[dict[str, Any]] = []
    append = out.append
    for index, row in enumerate(rows):
        append({**row, "markers": stamped_markers(row, index, grounding_of(row, index, ignore, allowed))})
    return out


class GroundingReport(Report):
    """How often the agent sent a tool a value it made up, and which values, to which tools."""

    n_rows: int = 0
    n_calls: int = 0
    n_ungrounded_rows: int = 0
    rate: float | None = None  # how often a row invents a value: 1 - argument_grounding's mean over tasks
    rate_ci95: tuple[float, float] | None = None  # 1 - its interval (None when degenerate or one task)
    argument_grounding: MarkerSummary | None = None
    by_tool: dict[str, int] = Field(default_factory=dict)  # invented values per tool
    by_key: dict[str, int] = Field(default_factory=dict)  # invented values per argument name
    examples: list[dict[str, Any]] = Field(default_factory=list)  # {row, tool, key, value}
    ignore_keys: list[str] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)
    not_stamped_here: dict[str, list[str]] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.n_rows == 0:
            return "grounding: NO ROWS"
        if self.n_ungrounded_rows == 0:
            return f"grounding: OK, every tool argument is grounded ({self.n_calls} calls over {self.n_rows} rows)"
        top = max(self.by_tool, key=self.by_tool.__getitem__)
        assert self.rate is not None
        ci = f" [{self.rate_ci95[0]:.1%}, {self.rate_ci95[1]:.1%}]" if self.rate_ci95 is not None else ""
        return (f"grounding: INVENTED VALUES in {self.n_ungrounded_rows} of {self.n_rows} rows, "
                f"{self.rate:.1%}{ci} over tasks; most went to {top}")

    def __str__(self) -> str:
        lines = [self.verdict]
        if self.argument_grounding is not None:
            lines.append(self.argument_grounding.line())
        if self.by_tool:
            lines.append("  invented values per tool: " + ", ".join(f"{t} {n}" for t, n in self.by_tool.items()))
            lines.append("  per argument: " + ", ".join(f"{k} {n}" for k, n in self.by_key.items()))
        for example in self.examples:
            lines.append(f"  row {example['row']}: {example['tool']}({example['key']}={example['value']!r}) "
                         "appears in no earlier prompt, turn or tool result")
        if self.n_ungrounded_rows:
            lines.append("  what to do: guard with delta_report(must_not_regress=['argument_grounding']); free-text "
                         "arguments go in ignore_keys=, enums and defaults in allow=")
        lines += [f"  warning: {warning}" for warning in self.warnings]
        lines.append("  " + not_stamped_line(self.not_stamped_here))
        return "\n".join(lines)


def grounding_report(rows: Sequence[Mapping[str, Any]], *, ignore_keys: Iterable[str] = (),
                     allow: Iterable[str] = ()) -> GroundingReport:
    """The invented values over the rows: the rate of rows with one (mean over tasks, 95% bootstrap over tasks),
    the tools and argument names they went to, and examples."""
    rows = take_rows(rows, "grounding_report")
    ignore, allowed = _names("ignore_keys", ignore_keys), _names("allow", allow)
    values: list[float] = []
    by_tool: Counter[str] = Counter()
    by_key: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    n_calls = 0
    for index, row in enumerate(rows):
        events = _events(row, index)
        n_calls += sum(1 for kind, _ in events if kind == CALLED)
        invented = _invented_in(events, ignore, allowed)
        values.append(0.0 if invented else 1.0)
        for item in invented:
            by_tool[item["tool"]] += 1
            by_key[item["key"]] += 1
            if len(examples) < EXAMPLES:
                examples.append({"row": index, **item})
    (summary,) = summarise(rows, {MARKER: values})
    n_bad = summary.n_bad
    report = GroundingReport(
        n_rows=len(values), n_calls=n_calls, n_ungrounded_rows=n_bad, argument_grounding=summary,
        by_tool=dict(by_tool.most_common()), by_key=dict(by_key.most_common()), examples=examples,
        ignore_keys=sorted(ignore), allow=sorted(allowed), not_stamped_here=not_stamped_here("grounding"))
    if values:
        report.rate, report.rate_ci95 = bad_rate(summary)
        if summary.degenerate:
            report.warnings.append(f"argument_grounding is the same on every row ({summary.mean:.0f}): degenerate")
    return report
