"""runs: a training run's points, progress, notes and cost, delivered without slowing the training loop.

    run.py          Run (log, progress, note, finish, context manager) and run() (wai.run)
    sender.py       the background flush and send threads (the training thread only enqueues)
    sinks.py        one interface, four homes: HttpSink (platform), LocalSink (SQLite), MemorySink (tests);
    spool.py        and the on-disk spool in front of the platform
    store.py        the local SQLite store (WAL) under $WHILEAI_HOME (~/.whileai by default)
    sync.py         re-send what the spool still owes (`whileai-train sync`)
    credentials.py  which key, from where; kept out of logs, reprs, errors and the spool
    cost.py         GPU kind and count, GPU_USD_PER_HOUR, the estimate's wording
    config.py       the environment, read in one place; SenderConfig
    defaults.py     every default, with its source
"""
