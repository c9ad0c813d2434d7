"""Before a run, picks rows: optimize (rl, sft), preference pairs, curriculum.

    optimize.py          optimize(rows, mode="rl" | "sft"): the front of the two selectors
    select_rl.py         select_for_rl: the asks a grouped (GRPO-style) update learns from
    select_sft.py        select_for_sft: rejection sampling (optimize(mode="sft"))
    select_rows.py       what every selector shares: the report base, the eval_sourced warning
    preference_pairs.py  build_preference_pairs: passing against failing rollouts of a task
    curriculum.py        curriculum: tasks easy to hard, in tiers, the solved ones retired
    defaults.py          their defaults, each with its source
"""
