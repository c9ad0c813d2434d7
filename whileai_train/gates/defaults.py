"""Defaults of the gates (hack_scan, the hygiene reports, near-duplicates, decontaminate, publish_gate): one place,
each with its source. The pass threshold and the difficulty band every stage shares are in tables/defaults.py.
"""

from __future__ import annotations

__all__ = [
    "AND_PARENTS",
    "AND_REDUNDANT",
    "AUTO_TOP_PAIRS",
    "AUTO_TOP_WORDS",
    "DEGENERATE_RHO",
    "DISCRETE_VALUES",
    "ENDORSED_MAX_COLUMNS",
    "EVAL_TEXT_KEYS",
    "FLOOR_PERCENTILE",
    "FLOOR_SAMPLE",
    "HACK_THRESHOLD",
    "LENGTH_BIAS_RATIO",
    "LOW_DISTINCT_PER_ASK",
    "MAX_EVAL_DF",
    "NEAR_DUP_BANDS",
    "NEAR_DUP_JACCARD",
    "NEAR_DUP_PERMUTATIONS",
    "NEAR_DUP_SHINGLE",
    "NGRAM_N",
    "OFFENDERS_SHOWN",
    "OVERLAP",
    "PAIR_CANDIDATE_WORDS",
    "RL_SHAPED_SHARE",
    "SHOW",
    "SHUFFLES",
    "SIMILARITY",
    "STRONG_FEATURES",
    "TIE_TOLERANCE",
]

# Pooled |correlation| of reward with reply length, tool calls or turns at or above this is flagged by
# reward_correlations (a moderate correlation: a reward that follows a surface feature that far is worth a look
# before training on it).
HACK_THRESHOLD = 0.3

# The auto tier: the 200 most common words and word pairs in the agent's text. Taken as the
# 200 most common words and, separately, the 200 most common adjacent pairs, by the number of rows they occur in.
AUTO_TOP_WORDS = 200
AUTO_TOP_PAIRS = 200

# Pairs are counted over the most common words only (a pair occurs in no more rows than either of its words,
# so the top pairs are made of common words; the scan says so when this cut could have hidden one).
PAIR_CANDIDATE_WORDS = 1000

# Pairwise ANDs that beat both parents: ANDs are tried between the strongest binary features
# (20 parents -> 190 ANDs).
AND_PARENTS = 20

# An AND whose within-ask column correlates at least this much with one of the strongest existing features
# (two words of a stock phrase and the phrase's pair: "this & for" against "pair:this for" measured 0.93) is
# mostly that feature again and is not listed. Our choice, not a paper's: a planted two-part interaction
# correlates ~0.6 with either part, so 0.9 keeps real interactions and drops renamed phrases.
AND_REDUNDANT = 0.9

# Shuffles of reward within ask for the noise floor tau. tau is the largest |rho| any feature reaches against a
# shuffled reward over all shuffles: the max-statistic permutation floor (Westfall & Young 1993), so with 20
# shuffles a feature above tau beats chance at about the 1/21 ~ 5% family-wise level.
SHUFFLES = 20

# Two features whose |rho| differ by less than this are tied: the ranking cannot tell them apart. 0.01 is
# well under the noise floor at every size we measured (tau ~ 0.03 at 10k rows), so it only catches true ties.
TIE_TOLERANCE = 0.01

# Features tied at or above this |rho| are perfect explanations of the reward (they all tie near |rho| 1);
# two distinct ones make the scan degenerate whatever the cause.
DEGENERATE_RHO = 0.95

# An ask with at most this many distinct trajectories gives one contrast only (an agent that emits only a
# couple of distinct trajectories per ask): the cause named distinct_per_ask.
LOW_DISTINCT_PER_ASK = 2.0

# "warn when endorsed covers none of the strong ones" (docs/trl_facts.md, gates): the strong ones are the
# top 10 above-floor features; `endorsable` in the report lists them.
STRONG_FEATURES = 10

# An endorsed feature with at most this many distinct values (indicators, counts, graded markers) is matched
# exactly within ask (cells of rollouts that look alike on it) rather than by one global slope: a tool that is
# right for one ask is wrong for another, which no single coefficient fits. Above it, a linear fit within cell.
DISCRETE_VALUES = 16

# At most this many endorsed columns are regressed out when measuring what the reward pays for beyond them
# (the strongest first); more only adds the cost of a wider least-squares fit.
ENDORSED_MAX_COLUMNS = 64

# How many features, rivals, examples a report prints (the model keeps all features).
SHOW = 10

# length_report flags passing replies this many times longer (mean characters) than failing ones. Our choice,
# not a paper's: under 1.5x, length differences between outcomes are common in honest data (a resolved ticket
# is explained, a failed one is short); hack_scan's within-ask rank is the real test.
LENGTH_BIAS_RATIO = 1.5

# publish_gate reads a set as RL-shaped (repeats of one ask) when at least this share of its rows sit in tasks
# with two or more rows. Our choice: a stray repeat in an SFT set does not make it RL-shaped; mode= overrides.
RL_SHAPED_SHARE = 0.5

# Near-duplicate asks: word 3-gram shingles, Jaccard >= 0.8 estimated by MinHash with LSH banding. The 0.8 MinHash
# threshold is the one of Lee et al. 2022 ("Deduplicating Training Data Makes Language Models Better"); 3-grams
# rather than their 5-grams because asks are short (one changed word in a 20-word ask leaves Jaccard ~0.7 on
# 3-grams, ~0.5 on 5-grams). 64 permutations in 16 bands of 4: a pair at 0.8 becomes a candidate with
# probability 1 - (1 - 0.8**4)**16 > 0.9999, a pair at 0.3 with ~0.12 (then rejected by the estimate).
NEAR_DUP_SHINGLE = 3
NEAR_DUP_JACCARD = 0.8
NEAR_DUP_PERMUTATIONS = 64
NEAR_DUP_BANDS = 16


# ---------------------------------------------------------------------------------------------- decontaminate

# The near rule: one eval text covers >= 80% of a row's words in shared 8-grams (the Llama 2
# contamination rule, Touvron et al. 2023, section A.6, uses token n-gram coverage the same way).
NGRAM_N = 8
OVERLAP = 0.8

# The semantic pass: cosine 0.85, read off BGE, where unrelated prompts score about 0.55.
SIMILARITY = 0.85
# The measured floor: the 99th percentile of similarity over eval-prompt pairs with different task ids
# (the model's own baseline of unrelated pairs), over at most this many eval prompts (seeded sample; 2000^2/2
# pairs is plenty for a percentile).
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
