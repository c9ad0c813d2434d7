"""Exporters: rollout rows in, rows TRL 1.16 trains exactly as meant out (or the OpenAI wire rows).

    training.py    export_dataset / export_training / training_rows: SFT rows (masks, unroll, caps)
    preference.py  export_preference: one-turn DPO pairs (shared prefix, the diverging agent turn)
    prompts.py     export_prompts: GRPO prompt-only rows with the columns a reward function reads
    dataset.py     to_dataset: a datasets.Dataset whose Json features keep tool arguments as written
    options.py     ExportOptions: the keywords the exporters share, checked once; the default path
    report.py      ExportReport, the report every exporter returns (its `selection` block included)
    selection.py   the train-step check: failing SFT rows refused, mixed tasks counted for DPO and GRPO
    shape.py       one row's conversation: one system turn, capped tool output, agent turns found
    template.py    the template that trains: which one, its arguments encoding, what survives it, length
    leaks.py       the privileged-leak guard (wai.leak_report names the rows an export would refuse)
    jsonl.py       streamed JSONL written to a temp name and renamed
    inspect.py     trained_spans: what a trainer's labels actually train, decoded (public: wai.trained_spans)
    defaults.py    the exporters' defaults (format, mask mode, TRL's max_length ...), each with its source

Public names are re-exported lazily from ``whileai_train`` (``wai.export_dataset`` ...).
"""
