"""Defaults of the exporters, one place, each with where it comes from."""

from __future__ import annotations

__all__ = [
    "CHECK",
    "CHECKS",
    "FORMAT",
    "FORMATS",
    "MASK_MODE",
    "MASK_MODES",
    "MIN_MIXED_TASKS",
    "PRIVILEGED_MIN_CHARS",
    "RESERVED_REWARD_COLUMNS",
    "SHOWN_ROWS",
    "STAMP_COLUMNS",
    "TOOL_OUTPUT_MARKER",
    "TRL_MAX_LENGTH",
    "TRL_READ_COLUMNS",
]

# The marker appended to a capped tool message: says how much was cut, so the model is never taught a cut
# output as whole.
TOOL_OUTPUT_MARKER = "[... {n} chars of tool output truncated]"

# SFTConfig.max_length and DPOConfig.max_length default in trl 1.16 (measured, docs/trl_facts.md): rows with
# more tokens are truncated, and those left with no trained token are dropped without a word, so the report counts them.
TRL_MAX_LENGTH = 1024

# How many row numbers a refusal (a privileged leak, what a template drops) names before "...": enough to find
# the rows, short enough to read in one error line; the error's `rows` holds them all. Our choice.
SHOWN_ROWS = 20

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
# The shape an export writes unless asked: TRL's, in Python and on the command line alike (this library feeds TRL's
# trainers; the OpenAI wire rows are there by asking, format="openai").
FORMAT = "trl"
MASK_MODES = ("assistant", "final")
# The SFT mask unless asked: every agent turn trained (TRL's assistant_only_loss), the turns a tool-using agent
# learns from; "final" trains the last reply only, by asking.
MASK_MODE = "assistant"

# The train-step check's two answers (SFT on failing rows is refused with TrainingSelectionError unless
# check="warn", which trains on them on purpose: imitating failures teaches them).
CHECKS = ("refuse", "warn")
CHECK = "refuse"

# GRPO, DPO and RM learn only from tasks with both a pass and a fail; fewer mixed tasks than this warns with the
# count used against the count given (the same floor as measure/defaults.MIN_MIXED_TASKS).
MIN_MIXED_TASKS = 32

# Columns trl 1.16's SFT, DPO and GRPO trainers (and trl.data_utils) read from a data set, seen in the installed
# trainers' code: a row key with one of these names would change what is trained, so it is never carried along
# as an extra column (the report names the keys left out). Every other column is ignored by SFT and DPO
# (remove_unused_columns drops it before the batch) and handed to GRPO's reward functions.
TRL_READ_COLUMNS = frozenset({
    "messages", "prompt", "completion", "chosen", "rejected", "text", "label", "conversations", "tools", "images",
    "image", "chat_template_kwargs", "input_ids", "labels", "attention_mask", "assistant_masks", "completion_mask",
    "seq_lengths", "prompt_ids", "chosen_ids", "rejected_ids", "ref_chosen_logps", "ref_rejected_logps",
})

# The stamps of the row contract (whileai_train.rows.contract.Row, the rollout row) written on every SFT
# row, null where a row has none: every row of one export has the same columns, because load_dataset("json")
# refuses a file whose later rows bring columns the first ones lacked (seen with datasets 5.2 past its first
# 10 MB block).
STAMP_COLUMNS = ("scenario_id", "task_id", "rollout_index", "reward", "calibration", "markers", "model_version",
                 "policy_version", "finish_reason", "lineage")
