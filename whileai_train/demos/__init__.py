"""Worked examples as readable modules: what the demo command, the recipes, the tests and the benches build their
worlds from. Recipes import only ``whileai_train`` and ``whileai_train.demos``.

    tiny.py          a tiny Qwen2-shaped model and BPE tokenizer built in code (wai.tiny_model_and_tokenizer)
    rollouts.py      generated refund-desk rollout rows of the row contract (flat steps, rewards, privileged)
    refund_desk.py   the refund desk for tool-calling GRPO: tools, environment, warm-up, gold
    grpo_monitor.py  the reward-monitor demo: sums in words, a planted hack, its honest twin
    hack_suite.py    the hack suite's scenarios: each kind of reward hack or failed run beside an honest twin
"""
