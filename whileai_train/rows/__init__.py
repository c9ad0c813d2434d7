"""The rows room: the row contract and reading rows in, one rule each.

    contract.py    the row contract: Row, Step, Message, ToolCall, Calibration; task_key, reward validation, the
                   calibration stamp, final_reply, agent_parts
    rollout.py     from_row / to_row: a row to and from the schema's Rollout (the stamp on extra["calibration"])
    intake.py      the one door: take_rows, which every public function that takes rows calls first (take_tasks:
                   the same for the rows that are tasks, each with its prompt)
    shapes.py      rows in other tools' shapes (ShareGPT, Responses items, legacy function_call, TRL prompt/completion,
                   tool turns without ids, thinking blocks) read into the shape every room reads, or refused by name
    files.py       reading rows in: JSONL / JSON paths (a bad line is a typed error naming it), TRL parquet, Datasets
    trajectory.py  the one reader of a row's trajectory (flat steps, OpenAI or Anthropic messages)
    steps.py       the one walk of a flat row's steps (walk_steps): the trajectory reader (whose parts the tables
                   count), the conversation and the exporters' flat pass all read steps through it
    content.py     the message-text rule: strings, text parts, Anthropic and Responses blocks, any other value as
                   its JSON text
    failure.py     the one rule for a tool result that reports failure
    json_text.py   the JSON rule: tool-call arguments as an object (and the JSON reading it decodes them by)
    text.py        the one word rule and the one n-gram rule (with their bulk numpy paths)

Nothing here imports another room of the package except errors.
"""
