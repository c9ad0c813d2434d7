"""Can the judge be trusted: attach_labels, judge_trust, judge_probes.

    labels.py        attach_labels: gold labels (people's or a program's) stamped on rows
    judge_trust.py   judge_trust: the judge's rewards measured against those labels (kappa, flips)
    judge_probes.py  judge_probes: the reward hacks a policy finds first, tried on the judge before training
    defaults.py      their defaults, each with its source
"""
