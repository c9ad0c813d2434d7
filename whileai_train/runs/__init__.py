"""runs: a training run's points, progress, notes and cost, delivered without slowing the training loop.

    run.py           Run (log, progress, note, finish, context manager) and run() (wai.run)
    run_ids.py       a run's id (made by the client, kept by every store) and its owner process
    open_runs.py     the runs open in this process; its exit finishes them "failed", SIGTERM interrupts them
    sender.py        the background flush and send threads (the training thread only enqueues)
    sinks.py         one interface, four homes: HttpSink (platform), LocalSink (SQLite), MemorySink (tests)
    deadline.py      an httpx transport whose every request ends by one total deadline
    spool.py         the on-disk spool in front of the platform
    store.py         the local SQLite store (WAL) under $WHILEAI_HOME (~/.whileai by default)
    store_schema.py  the store's tables (runs, points, notes, alarms, metric names) and its migrations
    sync.py          re-send what the spool still owes (`whileai-train sync`)
    offline_sync.py  send the runs WHILEAI_MODE=offline kept locally to the platform
    records.py       a run read back (get_run) from the local store, else the platform; the platform client
    verdicts.py      the held-out verdict kept on a run (attach_holdout, attach_delta, run.holdout / delta / refresh)
    completions.py   the holdout completions kept on a run (get_completions), stored apart from its notes
    listing.py       list_runs and points_frame: runs read back from Python
    context.py       what a run was trained with: trainer arguments, model/PEFT configs, versions, tags
    preemption.py    SIGTERM leaves a preempted attempt's run open for the attempt that resumes
    credentials.py   which key, from where; kept out of logs, reprs, errors and the spool
    cost.py          GPU kind and count, GPU_USD_PER_HOUR, the estimate's wording
    config.py        the environment, read in one place; SenderConfig
    defaults.py      every default, with its source
"""
