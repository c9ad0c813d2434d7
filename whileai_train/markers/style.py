"""The over-optimisation behaviours of a reply, as markers with the delta-ready polarity (1.0 is good).

A policy tuned against a judge drifts toward what the judge likes to read: longer replies, praise of the asker,
hedges, refusals that cannot be wrong, loops (Lambert 2025, RLHF book, chapter "Over-optimization"). Each is a
0/1 marker on the reply (final_text, else the last assistant message, else a completion):

    concise         at most CONCISE_MAX_WORDS words
    no_sycophancy   does not open by praising the user or the question ("Great question!", "You're absolutely right")
    no_hedging      fewer than HEDGE_MIN hedges ("I think", "probably", "as far as I know", "not 100% sure", ...)
    no_apology      does not apologise or express regret to the user ("Sorry for the confusion", "My bad", ...)
    no_boilerplate  no stock opener or sign-off ("Certainly!", "Thanks for reaching out", "Hope this helps!", ...)
    no_refusal      does not refuse the ask ("I can't help with that"; a report that something failed is not one)
    no_repetition   no sentence of REPEATED_SENTENCE_MIN_WORDS+ words said twice

style_report covers this family only and ends with the markers it did not stamp; refusal_report looks at the
refusals alone (rate, examples, whether the reward pays for them, tasks where every rollout refused).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import Field

from whileai_train.errors import RowError
from whileai_train.markers.defaults import (
    CONCISE_MAX_WORDS,
    EXAMPLES,
    FRAGMENT_CHARS,
    HEDGE_MIN,
    REPEATED_SENTENCE_MIN_WORDS,
)
from whileai_train.markers.families import (
    FAMILIES,
    bad_rate,
    not_stamped_here,
    not_stamped_line,
    reward_paid,
    stamped_markers,
    summarise,
)
from whileai_train.markers.phrases import (
    APOLOGY_FOUND,
    BOILERPLATE_FOUND,
    PRAISE_FOUND,
    REFUSAL_FOUND,
    form_spans,
    read,
    said,
)
from whileai_train.markers.style_forms import fold
from whileai_train.markers.style_phrases import REFUSAL_FORMS
from whileai_train.report import Report
from whileai_train.rows.content import content_text
from whileai_train.rows.contract import final_reply, reward_of, task_key
from whileai_train.rows.intake import take_rows
from whileai_train.tables.marker_column import MarkerSummary

__all__ = ["STYLE_MARKERS", "RefusalReport", "StyleReport", "refusal_report", "reply_style", "style_markers",
           "style_of", "style_report"]

STYLE_MARKERS = FAMILIES["style"][1]


def _reply(row: Any, index: int | None) -> str:
    if row.__class__ is not dict and not isinstance(row, Mapping):
        raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
    final = row.get("final_text")
    if final.__class__ is str:  # what final_reply reads first
        return final  # type: ignore[no-any-return]
    completion = row.get("completion")
    if row.get("final_text") is None and isinstance(completion, list):  # a conversational completion (TRL)
        texts = [m.get("content") for m in completion if isinstance(m, Mapping) and m.get("role") == "assistant"]
        return content_text(texts[-1]) if texts else ""
    final = row.get("final_text")
    if final is not None and not isinstance(final, str):
        raise RowError(index, "final_text", f"final_text is {type(final).__name__}, not text",
                       "write the agent's last reply as a string (or null when it ended on a tool call)")
    return final_reply(row)


def _repeats(low: str) -> bool:
    """A sentence (split at . ! ? and newlines) of REPEATED_SENTENCE_MIN_WORDS+ words said twice. Each sentence is
    read as its words joined by single spaces (a printable text with no double space already is, once the
    spaces beside each full stop are dropped), so a reply with no sentence said twice is told by one set."""
    text = low.replace("!", ".").replace("?", ".").replace("\n", ".")
    if not text.isprintable() or "  " in text:
        text = " ".join(text.split())
    parts = text.strip().replace(". ", ".").replace(" .", ".").split(".")
    if len(set(parts)) == len(parts):
        return False
    seen: set[str] = set()
    for part in parts:
        if part.count(" ") >= REPEATED_SENTENCE_MIN_WORDS - 1:
            if part in seen:
                return True
            seen.add(part)
    return False


def style_of(row: Any, index: int | None = None) -> dict[str, float]:
    """The style markers of one row's final reply."""
    return reply_style(_reply(row, index))


def reply_style(text: str) -> dict[str, float]:
    """The style markers of one reply (1.0 is the good outcome)."""
    return dict(_markers_of(text))


def _markers_of(text: str) -> dict[str, float]:
    """The style markers of one reply as one of the shared, read-only dicts of _OUTCOMES (stamping copies them)."""
    low = fold(text)
    hedges, found = read(low)
    return _OUTCOMES[found | (hedges >= HEDGE_MIN)
                     | (_LONG if len(text) >= 2 * CONCISE_MAX_WORDS and len(text.split()) > CONCISE_MAX_WORDS else 0)
                     | (_REPEATING if _repeats(low) else 0)]


# A reply's outcome as bits: what phrases.read found (APOLOGY_FOUND, BOILERPLATE_FOUND, PRAISE_FOUND, REFUSAL_FOUND),
# and beside them hedging, length and repetition; each outcome's markers built once.
_HEDGING, _LONG, _REPEATING = 1, 64, 128
_OUTCOMES: list[dict[str, float]] = [
    {"concise": 0.0 if short & _LONG else 1.0, "no_sycophancy": 0.0 if short & PRAISE_FOUND else 1.0,
     "no_hedging": 0.0 if short & _HEDGING else 1.0, "no_apology": 0.0 if short & APOLOGY_FOUND else 1.0,
     "no_boilerplate": 0.0 if short & BOILERPLATE_FOUND else 1.0, "no_refusal": 0.0 if short & REFUSAL_FOUND else 1.0,
     "no_repetition": 0.0 if short & _REPEATING else 1.0}
    for short in range(256)]


def style_markers(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """New rows with the style markers on row["markers"] (1.0 is the good outcome); the input is not changed."""
    rows = take_rows(rows, "style_markers")
    out: list[dict[str, Any]] = []
    append = out.append
    for index, row in enumerate(rows):
        append({**row, "markers": stamped_markers(row, index, _markers_of(_reply(row, index)))})
    return out


class StyleReport(Report):
    """Each style marker over the rows (mean over tasks, 95% bootstrap over tasks, or degenerate), examples of rows
    that fall short, and the markers of the other families this report did not stamp."""

    n_rows: int = 0
    markers: list[MarkerSummary] = Field(default_factory=list)
    examples: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)  # marker -> [{row, fragment}]
    degenerate: list[str] = Field(default_factory=list)
    not_stamped_here: dict[str, list[str]] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.n_rows == 0:
            return "style: NO ROWS"
        short = [m for m in self.markers if m.n_bad]
        if not short:
            return f"style: CLEAN on every style marker over {self.n_rows} rows (this family only)"
        named = ", ".join(f"{m.name} {m.mean:.3f}" for m in sorted(short, key=lambda m: m.mean or 0.0))
        return f"style: {len(short)} of {len(self.markers)} behaviours seen over {self.n_rows} rows ({named})"

    def __str__(self) -> str:
        lines = [self.verdict]
        lines += [summary.line() for summary in self.markers]
        for name, examples in self.examples.items():
            for example in examples:
                lines.append(f"  {name}: row {example['row']}: {example['fragment']!r}")
        lines += [f"  warning: {warning}" for warning in self.warnings]
        lines.append("  " + not_stamped_line(self.not_stamped_here))
        return "\n".join(lines)


def _degenerate_warning(names: list[str]) -> str:
    return (f"{', '.join(names)} came out the same on every row: degenerate, no interval (a phrase list that matches "
            "nothing looks exactly like a behaviour that never happened; read a few replies before trusting it)")


def style_report(rows: Sequence[Mapping[str, Any]]) -> StyleReport:
    """The style family over the rows, read from each reply."""
    rows = take_rows(rows, "style_report")
    columns: dict[str, list[float]] = {name: [] for name in STYLE_MARKERS}
    examples: dict[str, list[dict[str, Any]]] = {}
    for index, row in enumerate(rows):
        text = _reply(row, index)
        for name, value in _markers_of(text).items():
            columns[name].append(value)
            if value < 1.0 and len(examples.setdefault(name, [])) < EXAMPLES:
                examples[name].append({"row": index, "fragment": text[:FRAGMENT_CHARS]})
    summaries = summarise(rows, columns)
    degenerate = [s.name for s in summaries if s.degenerate]
    report = StyleReport(n_rows=len(rows), markers=summaries, examples=examples, degenerate=degenerate,
                         not_stamped_here=not_stamped_here("style"))
    if degenerate and rows:
        report.warnings.append(_degenerate_warning(degenerate))
    return report


class RefusalReport(Report):
    """How often the replies refuse, with examples; whether the reward pays for refusing; and the tasks on which
    every rollout refused."""

    n_rows: int = 0
    n_refusals: int = 0
    rate: float | None = None
    rate_ci95: tuple[float, float] | None = None
    reward_refused: float | None = None  # mean reward of the refusals
    reward_answered: float | None = None
    reward_pays: bool = False
    p_value: float | None = None  # Welch, refusals vs answers
    all_refused_tasks: list[str] = Field(default_factory=list)
    examples: list[dict[str, Any]] = Field(default_factory=list)
    degenerate: bool = False
    not_stamped_here: dict[str, list[str]] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.n_rows == 0:
            return "refusals: NO ROWS"
        if self.n_refusals == 0:
            return f"refusals: NONE over {self.n_rows} rows (degenerate: no_refusal is 1.0 on every row)"
        assert self.rate is not None
        ci = f" [{self.rate_ci95[0]:.1%}, {self.rate_ci95[1]:.1%}]" if self.rate_ci95 is not None else ""
        head = f"refusals: {self.n_refusals} of {self.n_rows} rows, {self.rate:.1%}{ci} over tasks"
        return ("REWARD PAYS FOR REFUSING: " + head) if self.reward_pays else head

    def __str__(self) -> str:
        lines = [self.verdict]
        if self.reward_refused is not None and self.reward_answered is not None:
            p = f", Welch p={self.p_value:.3g}" if self.p_value is not None else ""
            lines.append(f"  mean reward: refused {self.reward_refused:.3f}, answered {self.reward_answered:.3f}{p}")
        if self.all_refused_tasks:
            lines.append(f"  every rollout refused on {len(self.all_refused_tasks)} tasks: "
                         + ", ".join(self.all_refused_tasks[:EXAMPLES]))
        lines += [f"  row {e['row']}: {e['fragment']!r}" for e in self.examples]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        lines.append("  " + not_stamped_line(self.not_stamped_here))
        return "\n".join(lines)


def refusal_report(rows: Sequence[Mapping[str, Any]]) -> RefusalReport:
    """The refusals among the replies: rate (1 - no_refusal's mean over tasks, 95% bootstrap over tasks),
    examples, the reward they earn, the tasks where every rollout refused."""
    rows = take_rows(rows, "refusal_report")
    refused: list[bool] = []
    rewards: list[float | None] = []
    by_task: dict[str, list[bool]] = {}
    examples: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        text = _reply(row, index)
        low = fold(text)
        hit = said(low).refusal
        refused.append(hit)
        rewards.append(reward_of(row, index))
        by_task.setdefault(task_key(row), []).append(hit)
        if hit and len(examples) < EXAMPLES:
            start = max(0, form_spans(low, REFUSAL_FORMS)[0][0] - 40)
            examples.append({"row": index, "fragment": text[start:start + FRAGMENT_CHARS]})
    n, k = len(refused), sum(refused)
    report = RefusalReport(n_rows=n, n_refusals=k, examples=examples, degenerate=n > 0 and k in (0, n),
                           not_stamped_here=not_stamped_here("style"),
                           all_refused_tasks=[t for t, values in by_task.items() if all(values)])
    if n:
        (no_refusal,) = summarise(rows, {"no_refusal": [0.0 if hit else 1.0 for hit in refused]})
        report.rate, report.rate_ci95 = bad_rate(no_refusal)
    if report.degenerate:
        report.warnings.append(_degenerate_warning(["no_refusal"]))
    yes = np.array([r for r, f in zip(rewards, refused, strict=True) if f and r is not None], dtype=float)
    no = np.array([r for r, f in zip(rewards, refused, strict=True) if not f and r is not None], dtype=float)
    paid = reward_paid(yes, no)
    if paid is not None:
        report.reward_refused, report.reward_answered, report.p_value, report.reward_pays = paid
    return report
