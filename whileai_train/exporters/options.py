"""ExportOptions: the keywords the exporters share, as one frozen value checked once, when it is built.

    options = wai.ExportOptions(system_prompt="You are the refund desk.", max_tool_output_chars=2000)
    wai.export_dataset(rows, "sft.jsonl", options=options)                # or the same keywords, as ever
    wai.export_preference(pairs, "dpo.jsonl", options=options, validate=False)  # a keyword beside it overrides it

Each public exporter takes these as keywords (the README's names and defaults) or as `options=`; it builds one
ExportOptions from them at the call and hands it inward, so a mistake raises ConfigError, with the fix, before any
row is read. A keyword passed beside `options=` overrides that field where it differs from the default (as
`wai.monitor(config=...)`: Python cannot tell a keyword left at its default from one passed equal to it). An
exporter reads the fields it has a use for: mask_mode, unroll and check are the SFT export's, min_mixed_tasks the
preference export's. The defaults are defaults.py's (and tables/defaults.PASS_THRESHOLD), each with its source.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.exporters.defaults import (
    CHECK,
    FORMAT,
    FORMATS,
    MASK_MODE,
    MASK_MODES,
    MIN_MIXED_TASKS,
    TRL_MAX_LENGTH,
)
from whileai_train.exporters.selection import check_selection_options
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["ExportOptions", "default_path", "export_options"]


@dataclass(frozen=True, kw_only=True)
class ExportOptions:
    """How an export shapes, checks and writes its rows (each field's `help` says what it does)."""

    format: str = field(default=FORMAT, metadata={"help": "'trl' (TRL's trainers' rows) or 'openai' (the API wire "
                                                          "rows, arguments as JSON strings)."})
    mask_mode: str = field(default=MASK_MODE, metadata={"help": "SFT: 'assistant' trains every agent turn, 'final' "
                                                                "only the last one."})
    unroll: bool = field(default=False, metadata={"help": "SFT: one sample per agent turn, each trained once with "
                                                          "the context it had."})
    max_tool_output_chars: int | None = field(default=None, metadata={
        "help": "Cap on each tool output's characters (a marker says how many were cut); None keeps them whole."})
    system_prompt: str | None = field(default=None, metadata={
        "help": "The system turn every row gets (replacing its own); None keeps each row's."})
    tools: list[Any] | None = field(default=None, metadata={
        "help": "The tools' JSON schemas written on every row; None keeps each row's own."})
    tokenizer: Any = field(default=None, metadata={
        "help": "Render each row with the chat template that will train it: its arguments encoding, rows over "
                "max_length and what it drops are checked."})
    validate: bool = field(default=True, metadata={
        "help": "Refuse what would train wrong (a privileged leak, what the template drops); False writes it "
                "and warns."})
    max_length: int | None = field(default=None, metadata={
        "help": f"The trainer's max_length in tokens, with tokenizer= (None: trl 1.16's {TRL_MAX_LENGTH})."})
    check: str = field(default=CHECK, metadata={
        "help": "SFT: 'refuse' rows with a failing reward (TrainingSelectionError), or 'warn' and write them."})
    threshold: float = field(default=PASS_THRESHOLD, metadata={
        "help": "The reward at or above which a row passes."})
    min_mixed_tasks: int = field(default=MIN_MIXED_TASKS, metadata={
        "help": "Preference: fewer tasks with both a pass and a fail than this warns."})

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError(f"format={self.format!r} is not one of {FORMATS}. Fix: format='trl' for TRL's "
                              "trainers, format='openai' for the API wire rows")
        cap = self.max_tool_output_chars
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
            raise ConfigError(f"max_tool_output_chars={cap!r}: give a whole number of characters >= 0, or None to "
                              "keep tool output whole")
        if self.system_prompt is not None and not isinstance(self.system_prompt, str):
            raise ConfigError(f"system_prompt is a {type(self.system_prompt).__name__}. Fix: pass the system "
                              "prompt text")
        tools = self.tools
        if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools)):
            raise ConfigError("tools must be a list of JSON schemas (dicts), one per tool, e.g. "
                              "[{'type': 'function', 'function': {'name': 'lookup', 'parameters': {...}}}]")
        length = self.max_length
        if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 1):
            raise ConfigError(f"max_length={length!r}: give the trainer's max_length in tokens "
                              f"(trl 1.16 defaults to {TRL_MAX_LENGTH})")
        if self.mask_mode not in MASK_MODES:
            raise ConfigError(f"mask_mode={self.mask_mode!r} is not one of {MASK_MODES}. Fix: 'assistant' trains "
                              "every agent turn, 'final' only the last one")
        if not isinstance(self.unroll, bool):
            raise ConfigError(f"unroll={self.unroll!r}: pass True or False")
        if self.unroll and self.mask_mode == "final":
            raise ConfigError("unroll=True trains every agent turn once, mask_mode='final' only the last one. "
                              "Fix: pick one (unroll with mask_mode='assistant', or final without unroll)")
        check_selection_options(check=self.check, min_mixed_tasks=self.min_mixed_tasks, threshold=self.threshold)


_DEFAULTS = {option.name: option.default for option in dataclasses.fields(ExportOptions)}


def export_options(options: ExportOptions | None, **passed: Any) -> ExportOptions:
    """The options of one export call: `options=` with the keywords passed beside it, each of which overrides its
    field where it differs from the default; without `options=`, the keywords. Checked as it is built."""
    if options is None:
        return ExportOptions(**passed)
    if not isinstance(options, ExportOptions):
        raise ConfigError(f"options={type(options).__name__}: pass a wai.ExportOptions, or the same names as "
                          "keywords")
    changed = {name: value for name, value in passed.items() if _differs(value, _DEFAULTS[name])}
    return dataclasses.replace(options, **changed) if changed else options


def _differs(value: Any, default: Any) -> bool:
    return value is not default and (type(value) is not type(default) or bool(value != default))


def default_path(stem: str) -> Path:
    """Where an export goes when no path is given: `<stem>.jsonl` in the current directory."""
    return Path(os.getcwd()) / f"{stem}.jsonl"
