"""Can the judge be trusted: attach_labels, judge_trust, judge_probes."""
