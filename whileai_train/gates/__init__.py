"""Before a run, read-only: hack_scan and its features, hygiene, near-duplicate asks, decontaminate, publish_gate.

    hack_scan.py        hack_scan: what will the policy learn from this reward, the task or a shortcut?
    features.py         the feature tiers hack_scan ranks against the reward, read from rows in one pass
    scan_stats.py       the numbers under hack_scan: within-ask correlation, the shuffled floor, ANDs, fits
    hygiene.py          pooled correlations, duplicate rollouts, near-duplicate asks, length (beside hack_scan)
    near_duplicates.py  near-duplicate asks across tasks: MinHash with LSH banding, then the exact Jaccard
    decontaminate.py    which training rows leak the evaluation (four rules, a row counted once)
    publish_gate.py     publish_gate: is this row set fit to publish for training?
    overlap.py          a gate's numpy-heavy part on a second core while the caller walks the rows
    defaults.py         the gates' defaults, each with its source
"""
