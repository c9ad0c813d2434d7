"""SFT export: rows TRL 1.16 trains exactly as the mask says, or the OpenAI wire rows with a loss_mask.

* ``format="trl"`` (the default, here and on the command line): ``mask_mode="assistant"`` writes ``messages``
  rows (train with ``SFTConfig(assistant_only_loss=True)``; without it TRL trains every token);
  ``mask_mode="final"`` and ``unroll=True`` write conversational ``prompt``/``completion`` rows, which TRL trains
  on the completion only by default. No TRL row carries a ``prompt`` string (the ask survives as
  ``prompt_text``), and every row of one export has the same shape, so TRL reads all of them as conversational
  (docs/trl_facts.md).
* ``format="openai"`` (by asking): the whole conversation in ``messages`` (arguments as JSON strings), the ask
  as ``prompt``, and ``loss_mask`` (one 0/1 per message: 1 on the agent's turns).

Every row also carries the source row's stamps as extra columns: the row contract's (STAMP_COLUMNS:
``calibration``, ``scenario_id``, ``task_id``, ``rollout_index``, ``reward``, ``markers``, ``model_version``,
``finish_reason`` ...; null where a row has none) and the unknown keys of the first row written, so every row
has the same columns (a later row's new key is counted in ``columns_not_carried``, as is, on TRL rows, a key
TRL would read as data, TRL_READ_COLUMNS; ``privileged`` is never written). With ``max_tool_output_chars``,
each row also says how many of its source row's tool outputs were capped (``tool_output_truncated``,
``tool_output_chars_cut``: the figures the report adds up once per source row, so every unrolled sample of a
row carries the same). SFTTrainer and
DPOTrainer drop the columns they do not read before batching (remove_unused_columns).

Before the file is put in place, the train-step check (selection.py): rows with a failing reward are refused with
TrainingSelectionError unless ``check="warn"``; rows with no reward pass as demonstrations, and the report's
``selection`` block counts passing, failing and ungraded rows.

``unroll=True`` turns an N-turn conversation into N samples, the k-th ending at the k-th agent turn with
loss on that turn only, so each turn trains once with the context it had (Lambert 2025, RLHF book,
chapter "Tool Use"). Turns after the last agent turn (a trailing tool result) are never trained.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sized
from typing import Any

from whileai_train.errors import ExportRefusedError, PrivilegedLeakError
from whileai_train.exporters.defaults import (
    CHECK,
    FORMAT,
    MASK_MODE,
    STAMP_COLUMNS,
    TRL_MAX_LENGTH,
    TRL_READ_COLUMNS,
)
from whileai_train.exporters.jsonl import atomic_jsonl, dumps, write_rows
from whileai_train.exporters.leaks import quotes_privileged
from whileai_train.exporters.options import ExportOptions, default_path, export_options
from whileai_train.exporters.report import ExportReport, shown_rows
from whileai_train.exporters.selection import SftTally
from whileai_train.exporters.shape import (
    CONSUMED,
    Shaped,
    carried_plain,
    check_arguments,
    encode_messages,
    iter_input,
    shape_row,
)
from whileai_train.exporters.template import TemplateCheck, assistant_only_refusal
from whileai_train.progress import progress_call, rows_progress
from whileai_train.rows.contract import (
    FINAL_TEXT_DIFFERS,
    FINAL_TEXT_REPEATED,
    reward_of,
    reward_range_error,
    task_key,
)
from whileai_train.rows.intake import take_rows
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["export_dataset", "training_rows"]

_NOTES = {
    "system_replaced": "rows whose own system turn was replaced by system_prompt=",
    "extra_system_dropped": "rows with more than one system turn: only the first was kept",
    "empty_agent_turn_removed": "empty agent turns (no text, no tool call) removed",
    "trailing_turns_cut": "rows ending after the agent's last turn (a tool result or an unanswered user turn): "
                          "those turns were cut, never trained",
    "agent_turn_without_context": "agent turns with nothing before them skipped (a prompt/completion row needs "
                                  "a prompt)",
    FINAL_TEXT_DIFFERS: "flat rows whose final_text differs from the agent reply their steps end with: both turns "
                   "were kept and trained (check which one the rollout really ended with)",
}


class _Counts:
    """Plain counters on the hot path (cheaper to bump than pydantic fields); copied to the report."""

    __slots__ = ("chars_cut", "checked", "invalid", "lost", "masked", "n", "n_written", "too_long", "trained",
                 "truncated")

    def __init__(self) -> None:
        self.n = self.n_written = self.trained = self.masked = self.truncated = self.chars_cut = 0
        self.checked = self.invalid = self.too_long = self.lost = 0


# Row keys never carried as extra columns: what the export itself consumes or writes, and (on TRL rows) what
# TRL's trainers would read as data (TRL_READ_COLUMNS).
_WRITTEN = frozenset({"prompt_text", "task", "loss_mask", "unroll_step", "unroll_turns", "tool_output_truncated",
                      "tool_output_chars_cut"})
_OPENAI_SKIP = CONSUMED | _WRITTEN
_TRL_SKIP = CONSUMED | _WRITTEN | TRL_READ_COLUMNS
_LAYOUTS_MAX = 1024  # distinct key layouts remembered per export (rows of one source share a few)

# (row to write, how many of the shaped messages it holds, index of its first trained message)
_Sample = tuple[dict[str, Any], int, int]


_NO_CUTS = (0, 0)


def _cuts(capped: dict[int, int], end: int) -> tuple[int, int]:
    """(tool outputs capped, chars cut) among the messages before `end`."""
    if not capped:
        return 0, 0
    cuts = [cut for position, cut in capped.items() if position < end]
    return len(cuts), sum(cuts)


class _Columns:
    """The stamp columns of one export, fixed by the first row written: STAMP_COLUMNS, then that row's unknown
    keys; null where a row has none. Which columns a row holds and which of its keys are not carried depend only
    on its keys, so they are worked out once per layout of keys (the rows of one source share a few)."""

    __slots__ = ("columns", "known", "layouts", "nulls")

    def __init__(self, first: Mapping[str, Any], skip: frozenset[str], trl: bool) -> None:
        self.columns = STAMP_COLUMNS + tuple(key for key in first if key not in skip and key not in STAMP_COLUMNS)
        # row keys written or consumed; on TRL rows a key TRL reads as data is neither (it is counted)
        self.known = skip.union(self.columns) - (TRL_READ_COLUMNS - CONSUMED if trl else frozenset())
        self.nulls: dict[str, Any] = dict.fromkeys(self.columns)
        self.layouts: dict[tuple[Any, ...], tuple[tuple[str, ...], tuple[Any, ...]]] = {}

    def layout(self, keys: tuple[Any, ...]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """(the columns a row with these keys holds, in column order; its keys not carried, in row order)."""
        found = self.layouts.get(keys)
        if found is None:
            held = set(keys)
            found = (tuple(key for key in self.columns if key in held),
                     tuple(key for key in keys if key not in self.known))
            if len(self.layouts) >= _LAYOUTS_MAX:
                self.layouts.clear()
            self.layouts[keys] = found
        return found


class _Export:
    """One pass over the rows: shapes, checks and counts; yields the rows to write."""

    def __init__(self, options: ExportOptions) -> None:
        tokenizer = options.tokenizer
        # the template that renders the rows for the trainer_config this export recommends (template.py)
        # a template SFTTrainer cannot train messages rows with (no {% generation %} block, no trl training variant):
        # the rows TRL trains exactly are prompt/completion rows, one per agent turn; chosen here, checked by
        # rendering like any export (what they would lose or train of context is refused with its cause)
        chosen = (assistant_only_refusal(tokenizer) if tokenizer is not None and options.format == "trl" and
                  options.mask_mode == "assistant" and not options.unroll
                  and getattr(tokenizer, "chat_template", None) is not None else None)
        if chosen is not None:
            options = dataclasses.replace(options, unroll=True)
        self.options = options  # as this export reads them (unroll chosen where the template asks for it)
        format, unroll = options.format, options.unroll
        trained = ("whole" if format == "openai" else
                   "assistant_only" if options.mask_mode == "assistant" and not unroll else "completion")
        self.template = (TemplateCheck(tokenizer, options.max_length or TRL_MAX_LENGTH, trained)  # type: ignore[arg-type]
                         if tokenizer is not None else None)
        # the encoding the TRL rows carry: dict (Qwen2.5, Llama 3.1, gpt-oss), or the template's once a row has a call
        self.encoding = "json_string" if format == "openai" else "dict"
        self.report = ExportReport(kind="sft", format=format, mask_mode=options.mask_mode,  # type: ignore[arg-type]
                                   unrolled=unroll)
        self.report.tool_call_roundtrip.rendered = self.template is not None
        if self.template is not None:
            self.report.max_length = self.template.max_length
            self.report.chat_template = self.template.name or "custom"
            if chosen is not None:
                self.template.chosen = f"{self.template.label} cannot train messages rows: {chosen}"
                self.report.rows_chosen = (
                    f"prompt/completion rows, one per agent turn (unroll=True), trained with completion_only_loss: "
                    f"{self.template.chosen} (SFTTrainer(assistant_only_loss=True) would raise). Rendered with it, "
                    "these train every agent turn once and no user, system or tool text")
        self.notes: dict[str, int] = {}
        self.counts = _Counts()
        self.tally = SftTally(options.threshold)
        tools = options.tools
        self.tools_text = dumps(tools) if tools is not None else None  # the export's own tools, encoded once

    def rows(self, source: Any) -> Iterator[dict[str, Any]]:
        for out, _plain in self.pairs(source):
            yield out

    def pairs(self, source: Any) -> Iterator[tuple[dict[str, Any], bool]]:
        """(row to write, whether jsonl.dumps_plain writes it as dumps does: TRL rows whose values not built here
        as text (tool arguments, carried stamps) were found plain)."""
        report, notes, template, tally, options = self.report, self.notes, self.template, self.tally, self.options
        trl = options.format == "trl"
        cuts_trailing = trl or options.unroll
        skip = _TRL_SKIP if trl else _OPENAI_SKIP
        left_out, leaks = report.columns_not_carried, report.privileged_leaks
        system_prompt, cap, tools = options.system_prompt, options.max_tool_output_chars, options.tools
        capping = cap is not None  # the cap counts are columns of an export that caps tool output
        samples, head = self._sampler()
        columns: _Columns | None = None  # fixed by the first row written
        proto: dict[str, Any] = {}  # a row of this export before its values: every key, in order, null
        layouts: dict[tuple[Any, ...], tuple[tuple[str, ...], tuple[Any, ...]]] = {}
        # counted in locals (cheaper per row than attributes) and added to self.counts however the pass ends
        n = n_written = checked_all = invalid_all = truncated = chars_cut = 0
        try:
            total = len(source) if isinstance(source, Sized) else None
            for index, row in enumerate(rows_progress(iter_input(source), "rows", total)):
                n += 1
                # a reward of the wrong type (or NaN, infinity) is bad input, named before the row is shaped
                if type(row) is dict:
                    reward = row.get("reward")
                    if reward is not None and (type(reward) is not float or reward - reward != 0.0):
                        reward = reward_of(row, index)  # the rule: an int read as a float, anything else refused
                else:
                    reward = reward_of(row, index) if isinstance(row, Mapping) else None
                if reward is not None and not 0.0 <= reward <= 1.0:  # as optimize and the gates refuse it
                    raise reward_range_error(index, reward)
                shaped = shape_row(row, index, system_prompt=system_prompt, max_tool_output_chars=cap, tools=tools)
                if shaped.notes:
                    for key, count in shaped.notes.items():
                        notes[key] = notes.get(key, 0) + count
                agent = shaped.agent
                if not agent:
                    report.drop("no_assistant_turn")
                    continue
                last = agent[-1]
                verdict = shaped.verdict  # the flat walk checked the arguments as it went; else check them now
                checked, invalid = verdict if verdict is not None else check_arguments(shaped)
                checked_all += checked
                invalid_all += invalid
                if checked and template is not None and template.encoding is None:
                    encoding = template.probe(index, shaped.tools)  # the first row with a call: probe once
                    if trl:
                        self.encoding = encoding
                source_row = shaped.row  # a wai.Row arrives as its dict
                privileged = source_row.get("privileged")
                messages = shaped.messages
                if privileged is not None and quotes_privileged(
                        messages if len(messages) == last + 1 else messages[: last + 1], privileged,
                        said=shaped.said):
                    leaks.append(index)
                # the source row's cap counts: added to the report once, also under unroll, and on each row it gives
                cut = _NO_CUTS
                if shaped.capped:
                    cut = _cuts(shaped.capped, last if cuts_trailing else len(messages))
                    truncated += cut[0]
                    chars_cut += cut[1]
                if cuts_trailing and len(messages) > last + 1:
                    notes["trailing_turns_cut"] = notes.get("trailing_turns_cut", 0) + 1
                if columns is None:
                    columns = _Columns(source_row, skip, trl)
                    proto, layouts = {**dict.fromkeys(head), **columns.nulls}, columns.layouts
                keys = tuple(source_row)
                layout = layouts.get(keys) or columns.layout(keys)
                held, not_carried = layout
                for key in not_carried:
                    left_out[key] = left_out.get(key, 0) + 1
                stamps = {key: source_row[key] for key in held}  # the columns this row holds (the rest: nulls)
                plain = carried_plain(stamps, index) and trl and shaped.plain
                task = task_key(source_row)
                if capping:
                    stamps["tool_output_truncated"], stamps["tool_output_chars_cut"] = cut
                written = samples(shaped, task, proto, stamps)
                n_written += len(written)
                if template is None:
                    for out, _end, _first in written:
                        yield out, plain
                else:
                    for out, end, first in written:
                        rendered = template.encode(messages[:end])
                        over, text = template.too_long(rendered, shaped.tools, index)
                        if over:
                            self.counts.too_long += 1
                            self.counts.lost += template.context_fills(rendered[:first], shaped.tools, index)
                        survival = template.count_drops(rendered, shaped.tools, index, first)
                        if trl:
                            invalid_all += template.missing_arguments(rendered, text, survival, first)
                        yield out, plain
                if written:
                    tally.add(index, task, reward)
        finally:
            c = self.counts
            c.n += n
            c.n_written += n_written
            c.checked += checked_all
            c.invalid += invalid_all
            c.truncated += truncated
            c.chars_cut += chars_cut

    def _sampler(self) -> tuple[Callable[[Shaped, str, dict[str, Any], dict[str, Any]], list[_Sample]],
                                tuple[str, ...]]:
        """The function that turns one shaped row into the samples this export writes, and the keys its rows
        start with. It takes `proto`: those keys, then the export's stamp columns, all null; and `stamps`: the
        columns this row has, then the cap counts. Every row has the keys of `proto` in their order, then the
        cap counts (an OpenAI row puts its own keys first)."""
        if self.options.format == "openai":
            return self._openai_samples, ()
        if self.options.mask_mode == "assistant" and not self.options.unroll:
            return self._messages_sample, ("messages", "prompt_text", "task", "tools")
        return self._completion_samples, ("prompt", "completion", "prompt_text", "task", "tools")

    def _openai_samples(self, shaped: Shaped, task: str, proto: dict[str, Any],
                        stamps: dict[str, Any]) -> list[_Sample]:
        """OpenAI rows: the conversation with a loss_mask (one row, or one per agent turn under unroll)."""
        messages, agent, c = shaped.messages, shaped.agent, self.counts
        last = agent[-1]
        own = shaped.tools
        wire = encode_messages(messages, "json_string")
        extra = {**proto, **stamps}
        extra["prompt"] = shaped.ask
        if own is not None:
            extra["tools"] = own
        if self.options.unroll:
            unrolled = []
            for step, k in enumerate(agent):
                mask = [0] * (k + 1)
                mask[k] = 1
                c.trained += 1
                c.masked += k
                unrolled.append(({"messages": wire[: k + 1], "loss_mask": mask, **extra, "unroll_step": step,
                                  "unroll_turns": len(agent)}, k + 1, k))
            return unrolled
        if self.options.mask_mode == "final":
            mask = [0] * len(messages)
            mask[last] = 1
        else:
            mask = [1 if m["role"] == "assistant" else 0 for m in messages]
        trained = sum(mask)
        c.trained += trained
        c.masked += len(mask) - trained
        return [({"messages": wire, "loss_mask": mask, **extra}, len(messages), mask.index(1))]

    def _messages_sample(self, shaped: Shaped, task: str, proto: dict[str, Any],
                         stamps: dict[str, Any]) -> list[_Sample]:
        """TRL `messages` row (mask_mode="assistant"): every agent turn trained with assistant_only_loss."""
        agent, c = shaped.agent, self.counts
        kept, out = self._kept_and_common(shaped, task, proto, stamps)
        c.trained += len(agent)
        c.masked += len(kept) - len(agent)
        out["messages"] = kept
        return [(out, agent[-1] + 1, agent[0])]

    def _kept_and_common(self, shaped: Shaped, task: str, proto: dict[str, Any], stamps: dict[str, Any]
                         ) -> tuple[list[Any], dict[str, Any]]:
        """The messages up to the last agent turn (encoded as asked), and the sample's columns every shape shares:
        proto's keys in order, the stamps, prompt_text, task and tools."""
        messages, last, own = shaped.messages, shaped.agent[-1], shaped.tools
        kept = messages if len(messages) == last + 1 else messages[: last + 1]
        if self.encoding != "dict":
            kept = encode_messages(kept, self.encoding)
        if self.template is not None and self.template.id_form is not None:
            kept = self.template.recall(kept)  # the call ids in the form the template demands (template.py)
        common = {**proto, **stamps}  # the keys in proto's order; the values set below
        common["prompt_text"] = shaped.ask
        common["task"] = task
        common["tools"] = None if own is None else (self.tools_text if own is self.options.tools else dumps(own))
        return kept, common

    def _completion_samples(self, shaped: Shaped, task: str, proto: dict[str, Any],
                            stamps: dict[str, Any]) -> list[_Sample]:
        """TRL prompt/completion rows: the last agent turn (mask_mode="final"), or each agent turn (unroll)."""
        agent, c, unroll = shaped.agent, self.counts, self.options.unroll
        kept, common = self._kept_and_common(shaped, task, proto, stamps)
        samples = []
        for k in (agent if unroll else (agent[-1],)):
            if k == 0:
                self.notes["agent_turn_without_context"] = self.notes.get("agent_turn_without_context", 0) + 1
                continue
            c.trained += 1
            c.masked += k
            out = common.copy() if unroll else common  # one sample without unroll: no copy
            out["prompt"] = kept[:k]
            out["completion"] = [kept[k]]
            samples.append((out, k + 1, k))
        return samples

    def check_selection(self) -> None:
        """The train-step check on what was written: refuse failing rows (check="refuse") or warn."""
        self.tally.finish(self.report, self.options.check)

    def finish(self, path: str | None) -> ExportReport:
        report, c, options = self.report, self.counts, self.options
        report.path = path
        report.n, report.n_written = c.n, c.n_written
        report.trained_messages, report.masked_messages = c.trained, c.masked
        report.tool_output_truncated, report.tool_output_chars_cut, report.too_long = c.truncated, c.chars_cut, c.too_long
        report.too_long_untrained = c.lost
        report.tool_call_roundtrip.checked, report.tool_call_roundtrip.invalid = c.checked, c.invalid
        report.tool_call_roundtrip.encoding = self.encoding  # type: ignore[assignment]
        report.final_text_repeated = self.notes.pop(FINAL_TEXT_REPEATED, 0)
        report.final_text_differs = self.notes.get(FINAL_TEXT_DIFFERS, 0)
        for key, count in sorted(self.notes.items()):
            report.warnings.append(f"{count} {_NOTES[key]}")
        if report.columns_not_carried:
            keys = ", ".join(f"{key} ({count} rows)" for key, count in sorted(report.columns_not_carried.items()))
            report.warnings.append(
                f"row keys not carried as columns: {keys} (a key TRL reads as data, or one the first row did not "
                "have: every row of an export has the same columns). Fix: rename TRL's keys, give the first row "
                "every key, or read them from the source rows by `task`")
        if report.dropped.get("no_assistant_turn"):
            report.warnings.append(f"{report.dropped['no_assistant_turn']} rows had no agent turn and were dropped "
                                   "(TRL refuses a whole set with assistant_only_loss when one row has none)")
        if report.too_long:
            report.warnings.append(f"{report.too_long} rows are longer than max_length={report.max_length} tokens: "
                                   f"TRL truncates them, and drops without a word the {report.too_long_untrained} "
                                   "whose context alone fills max_length (no trained token left)")
        if report.tool_call_roundtrip.invalid:
            report.warnings.append(f"{report.tool_call_roundtrip.invalid} tool calls did not survive the arguments "
                                   "round trip (see tool_call_roundtrip)")
        if self.template is not None:
            report.template_drops = dict(self.template.drops)
            report.call_ids = self.template.id_form if options.format == "trl" else None  # OpenAI rows keep theirs
            report.warnings.extend(self.template.warnings(options.validate))
        if report.privileged_leaks and not options.validate:
            report.warnings.append(f"{len(report.privileged_leaks)} rows quote their own privileged context and "
                                   "were written anyway (validate=False)")
        if options.format == "trl":
            report.trainer_config = ({"assistant_only_loss": True} if options.mask_mode == "assistant"
                                     and not options.unroll else {"completion_only_loss": True})
            if report.max_length is not None:
                report.trainer_config["max_length"] = report.max_length
        return report

    def refuse(self) -> None:
        """The refusals on what was read (nothing written): a privileged leak, then what the template loses."""
        self.refuse_leaks()
        if self.template is not None:
            self.template.refuse_drops(self.options.validate)

    def refuse_leaks(self) -> None:
        leaks = self.report.privileged_leaks
        if leaks and self.options.validate:
            raise PrivilegedLeakError(
                f"privileged_leak: {len(leaks)} rows quote their own privileged context in a reply (rows "
                f"{shown_rows(leaks)}); nothing was written. Fix: drop the rows that "
                "wai.leak_report(rows) names, or pass validate=False", rows=leaks)


@progress_call("training_rows")
def training_rows(rows: Any, *, format: str = FORMAT, mask_mode: str = MASK_MODE, unroll: bool = False,
                  max_tool_output_chars: int | None = None, system_prompt: str | None = None,
                  tools: list[Any] | None = None, tokenizer: Any = None, validate: bool = True,
                  max_length: int | None = None, check: str = CHECK, threshold: float = PASS_THRESHOLD,
                  options: ExportOptions | None = None, progress: bool | None = None
                  ) -> tuple[list[dict[str, Any]], ExportReport]:
    """The rows `export_dataset` would write, and its report; writes nothing (and refuses as it would)."""
    export = _Export(export_options(options, format=format, mask_mode=mask_mode, unroll=unroll,
                                    max_tool_output_chars=max_tool_output_chars, system_prompt=system_prompt,
                                    tools=tools, tokenizer=tokenizer, validate=validate, max_length=max_length,
                                    check=check, threshold=threshold))
    out = list(export.rows(take_rows(rows, "training_rows", graded=True)))
    export.refuse()
    export.check_selection()
    return out, export.finish(None)


@progress_call("export")
def export_dataset(rows: Any, path: Any = None, *, format: str = FORMAT, mask_mode: str = MASK_MODE,
                   unroll: bool = False, max_tool_output_chars: int | None = None, system_prompt: str | None = None,
                   tools: list[Any] | None = None, tokenizer: Any = None, validate: bool = True,
                   max_length: int | None = None, check: str = CHECK, threshold: float = PASS_THRESHOLD,
                   options: ExportOptions | None = None, progress: bool | None = None) -> ExportReport:
    """Write training rows to `path` as JSONL (streamed; temp name, then rename) and return the report.

    `rows`: a list or iterator of dicts, a JSONL path, or a `datasets.Dataset`. `path` defaults to
    ``export-<format>-<mask_mode>.jsonl`` in the current directory. With `tokenizer=`, each row is rendered
    with the chat template that will train it (TRL's training variant for `messages` rows under
    assistant_only_loss, else the tokenizer's own; ChatTemplateError where TRL cannot train the recommended
    config): the arguments encoding is read off it, rows over `max_length` tokens (default 1024, trl 1.16's) are
    counted, and what it drops (a second call, text beside a call) raises TemplateDropError unless
    `validate=False`. Rows quoting their own privileged context raise PrivilegedLeakError (nothing written)
    unless `validate=False`. Rows whose reward is below `threshold`
    raise TrainingSelectionError (nothing written) unless `check="warn"`; rows with no reward pass the check.
    `options`: the same keywords as one wai.ExportOptions; a keyword beside it overrides it (options.py).
    `progress`: a progress bar over the rows (None: when someone watches and the rows are many; False: never).
    """
    export = _Export(export_options(options, format=format, mask_mode=mask_mode, unroll=unroll,
                                    max_tool_output_chars=max_tool_output_chars, system_prompt=system_prompt,
                                    tools=tools, tokenizer=tokenizer, validate=validate, max_length=max_length,
                                    check=check, threshold=threshold))
    rows = take_rows(rows, "export_dataset", graded=True)
    asked = export.options
    target = path if path is not None else default_path(f"export-{asked.format}-{asked.mask_mode}")
    with atomic_jsonl(target, binary=True) as handle:
        write_rows(handle, export.pairs(rows))  # streamed: each row is written and gone, memory stays flat
        export.refuse()
        if export.counts.n_written == 0:
            raise ExportRefusedError(
                f"no row had anything to train (dropped: {export.report.dropped}); nothing was written. Fix: "
                "give rows with at least one agent turn", rows=[])
        export.check_selection()
    return export.finish(str(target))
