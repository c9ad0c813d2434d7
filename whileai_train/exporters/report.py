"""ExportReport: what an export wrote, what it trained, what it cut or dropped, and why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from whileai_train.exporters.defaults import SHOWN_ROWS
from whileai_train.report import Report
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["DroppedTasks", "ExportReport", "ToolCallRoundtrip", "TrainStepCheck", "shown_rows"]


def shown_rows(rows: Sequence[int]) -> str:
    """The row numbers a refusal names: the first SHOWN_ROWS, then " ..." when there are more."""
    return ", ".join(str(i) for i in rows[:SHOWN_ROWS]) + (" ..." if len(rows) > SHOWN_ROWS else "")


class ToolCallRoundtrip(BaseModel):
    """How the tool-call arguments were encoded and checked; `invalid: 0` vouches for `encoding` only."""

    checked: int = 0
    invalid: int = 0
    encoding: Literal["dict", "json_string"] = "dict"
    rendered: bool = False  # True when checked against the tokenizer's chat template, not only by JSON


class DroppedTasks(BaseModel):
    """One class of tasks the trainer will not learn from, and why."""

    kind: Literal["all_pass", "all_fail", "ungraded", "no_usable_pair"]
    tasks: int
    reason: str


class TrainStepCheck(BaseModel):
    """What the trainer will learn from: the train-step check, on what this export wrote.

    SFT (`method="sft"`) imitates every written row: rows with a reward below the pass threshold are failing
    and refused unless `check="warn"`; rows with no reward are demonstrations (the usual SFT input) and pass,
    counted as `ungraded`. DPO and GRPO learn only from tasks with both a pass and a fail (`mixed`): fewer
    than `min_mixed_tasks` warns, with the tasks used against the tasks given and the reason per class left out.
    """

    method: Literal["sft", "dpo", "grpo"]
    check: Literal["refuse", "warn"] = "refuse"
    threshold: float = PASS_THRESHOLD
    rows: int = 0  # source rows behind what was written
    passing: int = 0
    failing: int = 0
    ungraded: int = 0
    failing_tasks: dict[str, int] = Field(default_factory=dict)  # task -> failing rows (the 20 with most)
    tasks_failing: int = 0  # all tasks with a failing row (failing_tasks shows at most 20)
    tasks_given: int = 0
    tasks_used: int = 0  # sft: tasks with a written row; dpo, grpo: mixed tasks the trainer learns from
    min_mixed_tasks: int | None = None
    dropped: list[DroppedTasks] = Field(default_factory=list)

    def lines(self) -> list[str]:
        """The block as the report prints it."""
        if self.method == "sft":
            lines = [(f"  selection (sft, check={self.check}): {self.rows} rows to learn from: {self.passing} passing, "
                      f"{self.failing} failing (reward < {self.threshold:g}), {self.ungraded} ungraded "
                      "(demonstrations: they pass the check)")]
            if self.failing:
                shown = ", ".join(f"{task} ({count})" for task, count in self.failing_tasks.items())
                more = self.tasks_failing - len(self.failing_tasks)
                tasks = f"{self.tasks_failing} task{'' if self.tasks_failing == 1 else 's'}"
                lines.append(f"    failing rows in {tasks}: {shown}{f' and {more} more' if more else ''}")
            return lines
        lines = [(f"  selection ({self.method}): {self.tasks_used} mixed tasks used of {self.tasks_given} given "
                  f"(min_mixed_tasks {self.min_mixed_tasks}); rows {self.rows}: {self.passing} passing, "
                  f"{self.failing} failing, {self.ungraded} ungraded")]
        for dropped in self.dropped:
            lines.append(f"    not learned from: {dropped.kind} {dropped.tasks} tasks ({dropped.reason})")
        return lines


class ExportReport(Report):
    """The report of one export. Keys are the platform's report keys; `str()` reads it out for a person."""

    kind: Literal["sft", "preference", "prompts"] = "sft"
    n: int = 0
    format: Literal["openai", "trl"] = "openai"
    mask_mode: Literal["assistant", "final"] | None = None
    unrolled: bool = False
    trained_messages: int = 0
    masked_messages: int = 0
    tool_output_truncated: int = 0
    tool_output_chars_cut: int = 0
    tool_call_roundtrip: ToolCallRoundtrip = Field(default_factory=ToolCallRoundtrip)
    privileged_leaks: list[int] = Field(default_factory=list)
    dropped: dict[str, int] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    path: str | None = None
    n_written: int = 0
    trl_turns_cut: int = 0
    max_length: int | None = None
    too_long: int = 0
    too_long_untrained: int = 0  # of those, rows whose context alone fills max_length: TRL drops them silently
    trainer_config: dict[str, object] = Field(default_factory=dict)
    chat_template: str | None = None  # the template that renders the rows for trainer_config (trl's name), with tokenizer=
    template_drops: dict[str, int] = Field(default_factory=dict)  # what that template loses, by cause (template.DROP_CAUSES)
    # why the export wrote other rows than asked: a template TRL cannot train messages rows with (template.py)
    rows_chosen: str | None = None
    call_ids: str | None = None  # the tool-call id form the template demands, when the rows' ids were rewritten to it
    final_text_repeated: int = 0  # flat rows whose final_text repeated the last step's reply: written once
    final_text_differs: int = 0  # flat rows whose final_text differs from the last step's reply: both kept
    columns_not_carried: dict[str, int] = Field(default_factory=dict)  # row keys TRL would read -> rows
    columns_carried: list[str] = Field(default_factory=list)  # prompts: the columns written beside the prompt
    columns_left_out: dict[str, str] = Field(default_factory=dict)  # prompts: row key -> why it was not written
    selection: TrainStepCheck | None = None

    def drop(self, reason: str, count: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + count

    @property
    def ok(self) -> bool:
        """Something was written and nothing needs a person's attention."""
        return self.n_written > 0 and not self.warnings and not self.privileged_leaks and not self.too_long

    def __str__(self) -> str:
        where = f" to {self.path}" if self.path else ""
        verdict = "ok" if self.ok else ("NOTHING WRITTEN" if self.n_written == 0 else "check the warnings")
        what = {"sft": "training", "preference": "preference", "prompts": "prompt"}[self.kind]
        mode = f", mask_mode={self.mask_mode}" if self.mask_mode else ""
        unrolled = ", unrolled" if self.unrolled else ""
        lines = [f"export {verdict}: {self.n_written} {what} rows from {self.n} input rows{where} "
                 + f"(format={self.format}{mode}{unrolled})"]
        if self.kind == "sft":
            lines.append(f"  messages trained {self.trained_messages}, masked {self.masked_messages}")
        if self.kind == "preference":
            lines.append(f"  pairs that lost the turns after their divergence (trl_turns_cut) {self.trl_turns_cut}: "
                         "a one-turn pair cannot carry them without DPO scoring them")
        if self.tool_output_truncated:
            lines.append(f"  tool outputs capped {self.tool_output_truncated} ({self.tool_output_chars_cut} chars cut)")
        rt = self.tool_call_roundtrip
        if self.kind != "prompts":
            how = "rendered with the chat template" if rt.rendered else "JSON round trip"
            lines.append(f"  tool-call arguments as {rt.encoding}: {rt.checked} checked ({how}), {rt.invalid} invalid")
        if self.dropped:
            lines.append("  dropped: " + ", ".join(f"{reason} {count}" for reason, count in sorted(self.dropped.items())))
        if self.chat_template is not None:
            lines.append(f"  rendered with the {self.chat_template} chat template")
        if self.rows_chosen is not None:
            lines.append(f"  rows chosen: {self.rows_chosen}")
        if self.call_ids is not None:
            lines.append(f"  tool-call ids written as {self.call_ids}, the form the chat template demands")
        if self.max_length is not None:
            lines.append(f"  rows over max_length={self.max_length} tokens: {self.too_long} "
                         f"({self.too_long_untrained} left with no trained token)")
        if self.privileged_leaks:
            shown = ", ".join(str(i) for i in self.privileged_leaks[:10])
            lines.append(f"  privileged_leak in rows {shown}{' ...' if len(self.privileged_leaks) > 10 else ''}")
        if self.final_text_repeated:
            lines.append(f"  final_text repeating the last step's reply, written once: {self.final_text_repeated} rows")
        if self.columns_carried:
            lines.append("  columns carried: " + ", ".join(self.columns_carried))
        if self.columns_left_out:
            why: dict[str, list[str]] = {}
            for column, reason in self.columns_left_out.items():
                why.setdefault(reason, []).append(column)
            lines.extend(f"  columns left out: {', '.join(columns)} ({reason})" for reason, columns in why.items())
        if self.selection is not None:
            lines.extend(self.selection.lines())
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        if self.trainer_config:
            settings = ", ".join(f"{key}={value!r}" for key, value in self.trainer_config.items())
            lines.append(f"  train with: {settings}")
        return "\n".join(lines)
