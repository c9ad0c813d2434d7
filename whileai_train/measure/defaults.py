"""Defaults of the after-training measurement (pass_at, compare_runs), one place each, with its source."""

from __future__ import annotations

__all__ = ["CONFIG_KEYS", "CONFIG_SAMPLE_ROWS", "LOW_PAIRED_SHARE", "MIN_PAIRED_TASKS"]

# compare_runs pairs tasks; with fewer shared tasks than this it falls back to an unpaired Welch test
# (product text, "Intervals and comparison").
MIN_PAIRED_TASKS = 5

# Under this share of tasks paired, the two sides drew different task sets and the delta is between two
# evals (product text: "Under half paired is ... not_comparable").
LOW_PAIRED_SHARE = 0.5

# Where the production settings of a row are read from (pass_at(rows).config): report key -> row keys, read
# at the top level and inside `config`, `sampling`, `lineage`, `judge_meta` (product text: "temperature, reply
# budget, policy and judge versions").
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "temperature": ("temperature",),
    "reply_budget": ("reply_budget", "max_tokens", "max_new_tokens", "max_completion_tokens", "max_completion_length"),
    "policy_version": ("policy_version", "model_version", "policy", "student"),
    "judge_version": ("judge_version", "judge_model", "judge"),
}

# run_config reads at most this many rows, an even stride through the set (our choice: the config block costs
# the same at any size; runs mixed in blocks of more than n/20000 rows are still seen).
CONFIG_SAMPLE_ROWS = 20_000
