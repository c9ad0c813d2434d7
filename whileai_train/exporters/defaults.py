"""Defaults of the exporters, one place, each with where it comes from."""

from __future__ import annotations

__all__ = [
    "ENCODINGS",
    "FORMATS",
    "MASK_MODES",
    "PRIVILEGED_MIN_CHARS",
    "RESERVED_REWARD_COLUMNS",
    "TOOL_OUTPUT_MARKER",
    "TRL_MAX_LENGTH",
]

# The marker appended to a capped tool message; the wording is the product text's ("Export training rows").
TOOL_OUTPUT_MARKER = "[... {n} chars of tool output truncated]"

# SFTConfig.max_length and DPOConfig.max_length default in trl 1.16 (measured, docs/trl_facts.md): rows with
# more tokens are truncated, and those left with no trained token are dropped without a word, so the report counts them.
TRL_MAX_LENGTH = 1024

# A privileged value shorter than this is not searched for in replies: short strings ("A1", "yes", "3") occur
# by chance. Our choice, not a measured figure; raise it if common words in `privileged` cause false refusals.
PRIVILEGED_MIN_CHARS = 6

# Keyword arguments GRPOTrainer (trl 1.16) passes to a reward function itself; a data set column with one of
# these names raises "TypeError: multiple values" (docs/trl_facts.md), and `prompt`/`completion` are read
# separately.
RESERVED_REWARD_COLUMNS = frozenset({
    "prompt", "prompts", "completion", "completions", "completion_ids", "trainer_state", "log_extra",
    "log_metric", "environments",
})

FORMATS = ("openai", "trl")
MASK_MODES = ("assistant", "final")
# How a tool call's `function.arguments` is written: a JSON object (HF templates render it with `| tojson`)
# or a JSON string (the OpenAI wire format; DeepSeek-V3's template). docs/trl_facts.md: "Tool-call
# function.arguments".
ENCODINGS = ("dict", "json_string")
