"""Defaults of decontaminate, one place each, with where each comes from."""

from __future__ import annotations

__all__ = ["EVAL_TEXT_KEYS", "FLOOR_PERCENTILE", "FLOOR_SAMPLE", "MAX_EVAL_DF", "NGRAM_N", "OFFENDERS_SHOWN",
           "OVERLAP", "SIMILARITY"]

# The near rule: one eval text covers >= 80% of a row's words in shared 8-grams (product text; the Llama 2
# contamination rule, Touvron et al. 2023, section A.6, uses token n-gram coverage the same way).
NGRAM_N = 8
OVERLAP = 0.8

# The semantic pass: cosine 0.85, read off BGE where unrelated prompts score about 0.55 (product text).
SIMILARITY = 0.85
# The measured floor: the 99th percentile of similarity over eval-prompt pairs with different task ids
# (product text), over at most this many eval prompts (seeded sample; 2000^2/2 pairs is plenty for a percentile).
FLOOR_PERCENTILE = 99.0
FLOOR_SAMPLE = 2000

# An 8-gram found in more than this many distinct eval texts is template text, too common to say which eval
# item a row copies: it is not used to find candidates (it still counts in the coverage of a candidate found
# through a rarer 8-gram). Keeps the search near-linear; the report's notes say how many were skipped.
MAX_EVAL_DF = 10

# Eval-side texts for fields other than "prompt": where eval rows keep the answer or reference.
EVAL_TEXT_KEYS: dict[str, tuple[str, ...]] = {
    "final_text": ("final_text", "answer", "reference", "expected", "expected_output", "gold", "solution"),
}

# Offenders listed in the report (the rest are counted).
OFFENDERS_SHOWN = 20
