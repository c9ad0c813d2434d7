"""Sample completions from a policy: one sampler that evaluate, the monitor's holdout and the trainer's own path share.

    samples.py        what a sampler gives back, and the interface every backend fills
    generate.py       the generate backend: batched model.generate, TRL's chat template and tool loop
    trainer_path.py   the trainer backend: completions through GRPOTrainer's own generation path
    vllm_engine.py    vLLM for evaluate: which engine samples, and a single-turn vLLM backend
    policy.py         the policy to sample: a loaded model, a folder or hub id, a PEFT adapter
    tools.py          tools and environments, run as GRPOTrainer runs them
    rewards.py        reward functions called exactly as GRPOTrainer calls them
    evaluate.py       wai.evaluate: a model and tasks in, graded rows out
    eval_output.py    evaluate(output=...): the JSONL written as it goes, read back to resume
    defaults.py       their defaults, each with its source
"""
