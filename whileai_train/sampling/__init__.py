"""Sample completions from a policy: one sampler that evaluate, the monitor's holdout and the trainer's own path share."""
