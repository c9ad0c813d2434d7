"""Defaults of the sampler and of `evaluate`, one place each, with its source."""

from __future__ import annotations

__all__ = [
    "BATCH_SEQUENCES",
    "ENGINES",
    "EVAL_K",
    "EVAL_RUNS",
    "EVAL_SEED",
    "MAX_COMPLETION_LENGTH",
    "MIN_P",
    "REPETITION_PENALTY",
    "TEMPERATURE",
    "TOP_K",
    "TOP_P",
]

# Sequences per `model.generate` call of the generate backend: one batch of 64 left-padded prompts keeps a small
# model's CPU matrix products wide (bench/evaluate.py measures the gain over one prompt at a time) and a 7B model's
# KV cache for 64 x 512 tokens within one GPU.
BATCH_SEQUENCES = 64

# Completions per task and independent evaluations (k=4, runs=1; three runs when the re-run spread is wanted,
# measure/defaults.MIN_EVAL_RUNS).
EVAL_K = 4
EVAL_RUNS = 1

# The seed of an evaluation (the library's one seed, stats.DEFAULT_SEED, is 0 too).
EVAL_SEED = 0

# Sampling settings when none are given: GRPOConfig's own defaults in trl 1.16, so an evaluation samples as the
# trainer does unless told otherwise.
TEMPERATURE = 1.0
TOP_P = 1.0
TOP_K = 0
MIN_P: float | None = None
REPETITION_PENALTY = 1.0

# GRPOConfig.max_completion_length's default in trl 1.16 (read from the installed config).
MAX_COMPLETION_LENGTH = 512

# evaluate(engine=): "auto" picks vLLM where it is installed and a GPU is present, else transformers' generate.
ENGINES = ("auto", "transformers", "vllm")
