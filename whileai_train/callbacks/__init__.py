"""callbacks: the training loop's side of a run, as transformers callbacks; the only room that imports
transformers at module level.

    while_callback.py   WhileCallback and track: stream a run's loss, progress and GPU cost into a Run
    gpu_metrics.py      GPU memory and utilisation for each point, read off the training thread
    defaults.py         WhileCallback's defaults, with their sources
    monitor.py          RewardMonitor and monitor(): wrap, attach, the holdout eval, the alarms, stop_on
    monitor_options.py  MonitorConfig (the options as a TRL-style dataclass) and the checks each option passes
    monitor_defaults.py the reward monitor's defaults, with their reasons and sources
    monitor_report.py   the monitor's summary (a pydantic report) and format_hack_monitor
    monitor_state.py    what the monitor carries across a checkpoint resume
    reward_wrap.py      monitor.wrap(reward_fn): the reward TRL calls, recording each completion it scores
    holdout.py          the holdout eval: choose the asks, score completions by proxy and gold, read markers
    holdout_completions.py  each holdout eval's completions kept on the run (capped), and sent to trackio / wandb
    per_function.py     several reward functions: each one's holdout mean, and the one a divergence names
    alarms.py           divergence, length, drift, feature: pure logic over eval records; the alarm book
    health_alarms.py    the run that learns nothing: truncation, no_signal, collapse from TRL's logs
    log_stream.py       the monitor's readings in the trainer's own logs, as monitor/...
    side_trackers.py    alarms raised as alerts in trackio / wandb beside our run
    alerts.py           the alert webhook: each alarm and stop posted from its own thread, within a deadline
    ranks.py            the monitor's collectives across training processes, called by every rank in order
"""
