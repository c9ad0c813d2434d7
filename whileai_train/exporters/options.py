"""Argument checks shared by the exporters: mistakes raise at the call, with the fix, before any row is read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.exporters.defaults import FORMATS, MASK_MODES, TRL_MAX_LENGTH

__all__ = ["check_common", "check_training", "default_path"]


def check_common(*, format: str, max_tool_output_chars: Any, system_prompt: Any, tools: Any,
                 max_length: Any = None) -> None:
    if format not in FORMATS:
        raise ConfigError(f"format={format!r} is not one of {FORMATS}. Fix: format='trl' for TRL's trainers, "
                          "format='openai' for the API wire rows")
    if max_tool_output_chars is not None and (
            isinstance(max_tool_output_chars, bool) or not isinstance(max_tool_output_chars, int)
            or max_tool_output_chars < 0):
        raise ConfigError(f"max_tool_output_chars={max_tool_output_chars!r}: give a whole number of characters "
                          ">= 0, or None to keep tool output whole")
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise ConfigError(f"system_prompt is a {type(system_prompt).__name__}. Fix: pass the system prompt text")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools)):
        raise ConfigError("tools must be a list of JSON schemas (dicts), one per tool, e.g. "
                          "[{'type': 'function', 'function': {'name': 'lookup', 'parameters': {...}}}]")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)
                                   or max_length < 1):
        raise ConfigError(f"max_length={max_length!r}: give the trainer's max_length in tokens "
                          f"(trl 1.16 defaults to {TRL_MAX_LENGTH})")


def check_training(*, mask_mode: str, unroll: Any) -> None:
    if mask_mode not in MASK_MODES:
        raise ConfigError(f"mask_mode={mask_mode!r} is not one of {MASK_MODES}. Fix: 'assistant' trains every "
                          "agent turn, 'final' only the last one")
    if not isinstance(unroll, bool):
        raise ConfigError(f"unroll={unroll!r}: pass True or False")
    if unroll and mask_mode == "final":
        raise ConfigError("unroll=True trains every agent turn once, mask_mode='final' only the last one. "
                          "Fix: pick one (unroll with mask_mode='assistant', or final without unroll)")


def default_path(stem: str) -> Path:
    """Where an export goes when no path is given: `<stem>.jsonl` in the current directory."""
    return Path(os.getcwd()) / f"{stem}.jsonl"
