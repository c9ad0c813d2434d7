"""SFT export: rows TRL 1.16 trains exactly as the mask says, or the OpenAI wire rows with a loss_mask.

* ``format="openai"``: the whole conversation in ``messages`` (arguments as JSON strings), the ask as
  ``prompt``, and ``loss_mask`` (one 0/1 per message: 1 on the agent's turns).
* ``format="trl"``: ``mask_mode="assistant"`` writes ``messages`` rows (train with
  ``SFTConfig(assistant_only_loss=True)``; without it TRL trains every token); ``mask_mode="final"`` and
  ``unroll=True`` write conversational ``prompt``/``completion`` rows, which TRL trains on the completion
  only by default. No TRL row carries a ``prompt`` string (the ask survives as ``prompt_text``), and every
  row of one export has the same keys, so TRL reads all of them as conversational (docs/trl_facts.md).

``unroll=True`` turns an N-turn conversation into N samples, the k-th ending at the k-th agent turn with
loss on that turn only, so each turn trains once with the context it had (Lambert 2025, RLHF book,
chapter "Tool Use"). Turns after the last agent turn (a trailing tool result) are never trained.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from whileai_train.errors import InputError, PrivilegedLeakError
from whileai_train.exporters.defaults import TRL_MAX_LENGTH
from whileai_train.exporters.jsonl import atomic_jsonl, dumps, write_rows
from whileai_train.exporters.leaks import quotes_privileged
from whileai_train.exporters.options import check_common, check_training, default_path
from whileai_train.exporters.report import ExportReport
from whileai_train.exporters.shape import (
    NO_ROWS,
    Shaped,
    check_arguments,
    encode_messages,
    flat_walk,
    input_rows,
    iter_input,
    shape_general,
    shape_row,
)
from whileai_train.exporters.template import TemplateCheck
from whileai_train.rows import reward_of, task_key

__all__ = ["export_dataset", "export_training", "training_rows"]

_NOTES = {
    "system_replaced": "rows whose own system turn was replaced by system_prompt=",
    "extra_system_dropped": "rows with more than one system turn: only the first was kept",
    "empty_agent_turn_removed": "empty agent turns (no text, no tool call) removed",
    "trailing_turns_cut": "rows ending after the agent's last turn (a tool result or an unanswered user turn): "
                          "those turns were cut, never trained",
    "agent_turn_without_context": "agent turns with nothing before them skipped (a prompt/completion row needs "
                                  "a prompt)",
}


_UNSET = object()


class _Counts:
    """Plain counters on the hot path (a pydantic attribute set costs ~5x a plain one); copied to the report."""

    __slots__ = ("chars_cut", "checked", "invalid", "lost", "masked", "n", "n_written", "too_long", "trained",
                 "truncated")

    def __init__(self) -> None:
        self.n = self.n_written = self.trained = self.masked = self.truncated = self.chars_cut = 0
        self.checked = self.invalid = self.too_long = self.lost = 0


class _Export:
    """One pass over the rows: shapes, checks and counts; yields the rows to write."""

    def __init__(self, *, format: str, mask_mode: str, unroll: bool, max_tool_output_chars: int | None,
                 system_prompt: str | None, tools: list[Any] | None, tokenizer: Any, max_length: int | None,
                 validate: bool) -> None:
        check_common(format=format, max_tool_output_chars=max_tool_output_chars, system_prompt=system_prompt,
                     tools=tools, max_length=max_length)
        check_training(mask_mode=mask_mode, unroll=unroll)
        self.format, self.mask_mode, self.unroll = format, mask_mode, unroll
        self.cap, self.system_prompt, self.tools, self.validate = max_tool_output_chars, system_prompt, tools, validate
        self.template = TemplateCheck(tokenizer, max_length or TRL_MAX_LENGTH) if tokenizer is not None else None
        # the encoding the TRL rows carry: the template's when we have one, else dict (Qwen2.5, Llama 3.1, gpt-oss)
        encoding = "json_string" if format == "openai" else (self.template.encoding if self.template else "dict")
        self.report = ExportReport(kind="sft", format=format, mask_mode=mask_mode,  # type: ignore[arg-type]
                                   unrolled=unroll)
        self.report.tool_call_roundtrip.encoding = encoding  # type: ignore[assignment]
        self.report.tool_call_roundtrip.rendered = self.template is not None
        if self.template is not None:
            self.report.max_length = self.template.max_length
        self.notes: dict[str, int] = {}
        self.counts = _Counts()

    def rows(self, source: Any) -> Iterator[dict[str, Any]]:
        for out, _plain in self.pairs(source):
            yield out

    def pairs(self, source: Any) -> Iterator[tuple[dict[str, Any], bool]]:
        """(row to write, whether jsonl.dumps_plain writes it as dumps does): TRL rows whose only values
        not built here as text are tool arguments that check_arguments found plain."""
        if self.format == "trl" and self.template is None:
            yield from self._trl_pairs(source)
            return
        report, c, notes, template = self.report, self.counts, self.notes, self.template
        trl = self.format == "trl"
        cuts_trailing = trl or self.unroll
        for index, row in enumerate(iter_input(source)):
            c.n += 1
            is_dict = isinstance(row, dict)
            if is_dict and "reward" in row:
                reward_of(row, index)  # a reward of the wrong type is bad input, named here
            shaped = shape_row(row, index, system_prompt=self.system_prompt, max_tool_output_chars=self.cap,
                               tools=self.tools)
            if shaped.notes:
                for key, count in shaped.notes.items():
                    notes[key] = notes.get(key, 0) + count
            agent = shaped.agent
            if not agent:
                report.drop("no_assistant_turn")
                continue
            last = agent[-1]
            checked, invalid = check_arguments(shaped)
            c.checked += checked
            c.invalid += invalid
            if is_dict and row.get("privileged") is not None and quotes_privileged(
                    shaped.messages[: last + 1], row["privileged"], said=shaped.said):
                report.privileged_leaks.append(index)
            if shaped.capped:
                written = last if cuts_trailing else len(shaped.messages)
                capped = [cut for position, cut in shaped.capped.items() if position < written]
                c.truncated += len(capped)  # once per source row, also under unroll
                c.chars_cut += sum(capped)
            if cuts_trailing and len(shaped.messages) > last + 1:
                notes["trailing_turns_cut"] = notes.get("trailing_turns_cut", 0) + 1
            plain = trl and shaped.plain
            longest: tuple[list[dict[str, Any]], str] | None = None
            for out, internal, first in self._samples(shaped):
                if template is not None:
                    rendered = encode_messages(internal, template.encoding)
                    over, text = template.too_long(rendered, shaped.tools, index)
                    if over:
                        c.too_long += 1
                        c.lost += template.context_fills(rendered[:first], shaped.tools, index)
                    longest = (rendered, text)
                c.n_written += 1
                yield out, plain
            if longest is not None and trl:
                _calls, missing = template.missing_arguments(*longest)  # type: ignore[union-attr]
                c.invalid += missing

    def _trl_pairs(self, source: Any) -> Iterator[tuple[dict[str, Any], bool]]:
        """pairs() for TRL rows without a tokenizer, the hot path: the rows and counts _samples gives, built
        here from one flat_walk per flat rollout (shape_general for any other row)."""
        report, c, notes = self.report, self.counts, self.notes
        messages_rows = self.mask_mode == "assistant" and not self.unroll
        turns = self.unroll
        system_prompt, cap, tools = self.system_prompt, self.cap, self.tools
        tools_text: Any = _UNSET  # the export's own tools, as the text every row carries: encoded once
        leaks = report.privileged_leaks
        # counted in locals (a slot attribute costs more per row) and added to self.counts however it ends
        n = n_written = all_checked = all_invalid = trained = masked = truncated = chars_cut = 0
        index = -1
        try:
            for row in input_rows(source):  # iter_input, inlined
                index += 1
                if type(row) is dict:
                    is_dict = True
                else:
                    if hasattr(row, "model_dump"):  # a wai.Row (pydantic) is read as its dict
                        row = row.model_dump(exclude_none=True)
                    is_dict = isinstance(row, dict)
                walked = None
                if is_dict:
                    reward = row.get("reward")
                    if reward is not None and (type(reward) is not float or reward - reward != 0.0):
                        reward_of(row, index)  # a reward of the wrong type (or NaN, infinity) is bad input
                    if type(row) is dict and row.get("messages") is None:
                        walked = flat_walk(row, index, system_prompt, cap, tools)
                if walked is not None:
                    messages, agent, capped, removed, checked, invalid, plain, said, own = walked
                    ask = row["prompt"]
                    if removed:
                        notes["empty_agent_turn_removed"] = notes.get("empty_agent_turn_removed", 0) + removed
                else:
                    shaped = shape_general(row, index, system_prompt=system_prompt, max_tool_output_chars=cap,
                                           tools=tools)
                    messages, agent, capped, ask, own, said = (shaped.messages, shaped.agent, shaped.capped,
                                                               shaped.ask, shaped.tools, None)
                    for key, count in shaped.notes.items():
                        notes[key] = notes.get(key, 0) + count
                    if agent:
                        checked, invalid = check_arguments(shaped)
                        plain = shaped.plain
                n += 1
                if not agent:
                    report.drop("no_assistant_turn")
                    continue
                last = agent[-1]
                all_checked += checked
                all_invalid += invalid
                if is_dict:
                    privileged = row.get("privileged")
                    if privileged is not None and quotes_privileged(
                            messages if len(messages) == last + 1 else messages[: last + 1], privileged, said=said):
                        leaks.append(index)
                if capped:
                    cuts = [cut for position, cut in capped.items() if position < last]
                    truncated += len(cuts)  # once per source row, also under unroll
                    chars_cut += sum(cuts)
                if len(messages) > last + 1:
                    notes["trailing_turns_cut"] = notes.get("trailing_turns_cut", 0) + 1
                    messages = messages[: last + 1]
                if own is None:
                    own_text = None
                elif own is tools:
                    if tools_text is _UNSET:
                        tools_text = dumps(tools)
                    own_text = tools_text
                else:
                    own_text = dumps(own)
                task = row.get("scenario_id")  # task_key, without the call on the common shapes
                if task is None or task == "":
                    task = row.get("task_id")
                if type(task) is not str or not task:
                    task = task_key(row)
                if messages_rows:
                    trained += len(agent)
                    masked += len(messages) - len(agent)
                    n_written += 1
                    yield {"messages": messages, "prompt_text": ask, "task": task, "tools": own_text}, plain
                    continue
                for k in (agent if turns else (last,)):
                    if k == 0:
                        notes["agent_turn_without_context"] = notes.get("agent_turn_without_context", 0) + 1
                        continue
                    trained += 1
                    masked += k
                    n_written += 1
                    yield {"prompt": messages[:k], "completion": [messages[k]], "prompt_text": ask, "task": task,
                           "tools": own_text}, plain
            if index < 0:
                raise InputError(NO_ROWS)
        finally:
            c.n += n
            c.n_written += n_written
            c.checked += all_checked
            c.invalid += all_invalid
            c.trained += trained
            c.masked += masked
            c.truncated += truncated
            c.chars_cut += chars_cut

    def _samples(self, shaped: Shaped) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], int]]:
        """(row to write, its conversation with dict arguments, index of its first trained message)."""
        messages, agent, c = shaped.messages, shaped.agent, self.counts
        last = agent[-1]
        if self.format == "openai":
            wire = encode_messages(messages, "json_string")
            extra = shaped.metadata()
            extra["prompt"] = shaped.ask
            if shaped.tools is not None:
                extra["tools"] = shaped.tools
            if self.cap is not None:
                extra["tool_output_chars_cut"] = sum(shaped.capped.values())
            if self.unroll:
                for step, k in enumerate(agent):
                    mask = [0] * (k + 1)
                    mask[k] = 1
                    c.trained += 1
                    c.masked += k
                    yield {"messages": wire[: k + 1], "loss_mask": mask, **extra, "unroll_step": step,
                           "unroll_turns": len(agent)}, messages[: k + 1], k
                return
            if self.mask_mode == "final":
                mask = [0] * len(messages)
                mask[last] = 1
            else:
                mask = [1 if m["role"] == "assistant" else 0 for m in messages]
            trained = sum(mask)
            c.trained += trained
            c.masked += len(mask) - trained
            yield {"messages": wire, "loss_mask": mask, **extra}, messages, mask.index(1)
            return
        kept = encode_messages(messages[: last + 1], self.report.tool_call_roundtrip.encoding)
        extra = {"prompt_text": shaped.ask, "task": task_key(shaped.row),
                 "tools": dumps(shaped.tools) if shaped.tools is not None else None}
        if self.mask_mode == "assistant" and not self.unroll:
            c.trained += len(agent)
            c.masked += len(kept) - len(agent)
            yield {"messages": kept, **extra}, messages[: last + 1], agent[0]
            return
        for k in (agent if self.unroll else [last]):
            if k == 0:
                self.notes["agent_turn_without_context"] = self.notes.get("agent_turn_without_context", 0) + 1
                continue
            c.trained += 1
            c.masked += k
            yield {"prompt": kept[:k], "completion": [kept[k]], **extra}, messages[: k + 1], k

    def finish(self, path: str | None) -> ExportReport:
        report, c = self.report, self.counts
        report.path = path
        report.n, report.n_written = c.n, c.n_written
        report.trained_messages, report.masked_messages = c.trained, c.masked
        report.tool_output_truncated, report.tool_output_chars_cut, report.too_long = c.truncated, c.chars_cut, c.too_long
        report.too_long_untrained = c.lost
        report.tool_call_roundtrip.checked, report.tool_call_roundtrip.invalid = c.checked, c.invalid
        for key, count in sorted(self.notes.items()):
            report.warnings.append(f"{count} {_NOTES[key]}")
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
        if report.privileged_leaks and not self.validate:
            report.warnings.append(f"{len(report.privileged_leaks)} rows quote their own privileged context and "
                                   "were written anyway (validate=False)")
        if self.format == "trl":
            report.trainer_config = ({"assistant_only_loss": True} if self.mask_mode == "assistant" and not self.unroll
                                     else {"completion_only_loss": True})
            if report.max_length is not None:
                report.trainer_config["max_length"] = report.max_length
        return report

    def refuse_leaks(self) -> None:
        leaks = self.report.privileged_leaks
        if leaks and self.validate:
            shown = ", ".join(str(i) for i in leaks[:20]) + (" ..." if len(leaks) > 20 else "")
            raise PrivilegedLeakError(
                f"privileged_leak: {len(leaks)} rows quote their own privileged context in a reply (rows {shown}); "
                "nothing was written. Fix: drop the rows that whileai_train.exporters.leaks.leak_report(rows) "
                "names, or pass validate=False", rows=leaks)


def training_rows(rows: Any, *, format: str = "openai", mask_mode: str = "assistant", unroll: bool = False,
                  max_tool_output_chars: int | None = None, system_prompt: str | None = None,
                  tools: list[Any] | None = None, tokenizer: Any = None, validate: bool = True,
                  max_length: int | None = None) -> tuple[list[dict[str, Any]], ExportReport]:
    """The rows `export_dataset` would write, and its report; writes nothing."""
    export = _Export(format=format, mask_mode=mask_mode, unroll=unroll, max_tool_output_chars=max_tool_output_chars,
                     system_prompt=system_prompt, tools=tools, tokenizer=tokenizer, max_length=max_length,
                     validate=validate)
    out = list(export.rows(rows))
    export.refuse_leaks()
    return out, export.finish(None)


def export_dataset(rows: Any, path: Any = None, *, format: str = "openai", mask_mode: str = "assistant",
                   unroll: bool = False, max_tool_output_chars: int | None = None, system_prompt: str | None = None,
                   tools: list[Any] | None = None, tokenizer: Any = None, validate: bool = True,
                   max_length: int | None = None) -> ExportReport:
    """Write training rows to `path` as JSONL (streamed; temp name, then rename) and return the report.

    `rows`: a list or iterator of dicts, a JSONL path, or a `datasets.Dataset`. `path` defaults to
    ``export-<format>-<mask_mode>.jsonl`` in the current directory. With `tokenizer=`, each row is rendered
    with its chat template: the arguments encoding is chosen from it and rows over `max_length` tokens
    (default 1024, trl 1.16's) are counted. Rows quoting their own privileged context raise
    PrivilegedLeakError (nothing written) unless `validate=False`.
    """
    export = _Export(format=format, mask_mode=mask_mode, unroll=unroll, max_tool_output_chars=max_tool_output_chars,
                     system_prompt=system_prompt, tools=tools, tokenizer=tokenizer, max_length=max_length,
                     validate=validate)
    target = path if path is not None else default_path(f"export-{format}-{mask_mode}")
    with atomic_jsonl(target, binary=True) as handle:
        write_rows(handle, export.pairs(rows))  # streamed: each row is written and gone, memory stays flat
        export.refuse_leaks()
        if export.counts.n_written == 0:
            from whileai_train.errors import ExportRefusedError

            raise ExportRefusedError(
                f"no row had anything to train (dropped: {export.report.dropped}); nothing was written. Fix: "
                "give rows with at least one agent turn", rows=[])
    return export.finish(str(target))


export_training = export_dataset
