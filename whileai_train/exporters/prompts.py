"""GRPO prompt export: prompt-only rows, with the columns a reward function needs.

GRPOTrainer (trl 1.16) needs a conversational ``prompt`` column and passes every other column to each
reward function as a keyword argument, next to its own ``prompts``, ``completions``, ``completion_ids``,
``trainer_state``, ``log_extra`` and ``log_metric`` (a column with one of those names raises
``TypeError: multiple values``, docs/trl_facts.md). The prompt is the conversation before the agent's first
turn; ``task`` (the row's task key) and the chosen columns ride along. One row per distinct prompt of a task:
GRPO samples its own group of completions for each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from whileai_train.errors import ConfigError, ExportRefusedError
from whileai_train.exporters.defaults import RESERVED_REWARD_COLUMNS
from whileai_train.exporters.jsonl import atomic_jsonl, dumps
from whileai_train.exporters.options import check_common, default_path
from whileai_train.exporters.report import ExportReport
from whileai_train.exporters.shape import iter_input, shape_row
from whileai_train.rows import task_key

__all__ = ["DEFAULT_PROMPT_COLUMNS", "export_prompts", "prompt_rows"]

# What a reward function usually needs to grade a completion: which task it is and what the grader may see.
DEFAULT_PROMPT_COLUMNS = ("task_id", "scenario_id", "privileged")


def _columns(columns: Sequence[str] | None) -> tuple[str, ...]:
    if columns is None:
        return DEFAULT_PROMPT_COLUMNS
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise ConfigError(f"columns={columns!r}: pass a list of column names, e.g. ['task_id', 'privileged']")
    clash = sorted(set(columns) & (RESERVED_REWARD_COLUMNS | {"task"}))
    if clash:
        raise ConfigError(f"columns {clash} clash with what GRPOTrainer passes a reward function itself "
                          "(or with the `task` column we write). Fix: rename those keys in your rows first")
    return tuple(columns)


def prompt_rows(rows: Any, *, columns: Sequence[str] | None = None, system_prompt: str | None = None,
                dedupe: bool = True) -> tuple[list[dict[str, Any]], ExportReport]:
    """The prompt rows `export_prompts` would write, and its report; writes nothing."""
    check_common(format="trl", max_tool_output_chars=None, system_prompt=system_prompt, tools=None)
    carried = _columns(columns)
    report = ExportReport(kind="prompts", format="trl")
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    tool_rows = 0
    for index, row in enumerate(iter_input(rows)):
        report.n += 1
        shaped = shape_row(row, index, system_prompt=system_prompt, max_tool_output_chars=None, tools=None)
        first = shaped.agent[0] if shaped.agent else len(shaped.messages)
        prompt = shaped.messages[:first]
        if not any(m["role"] == "user" for m in prompt):
            report.drop("no_prompt")
            continue
        key = task_key(row)
        if dedupe:
            fingerprint = (key, json.dumps(prompt, sort_keys=True, default=str))
            if fingerprint in seen:
                report.drop("duplicate_prompt")
                continue
            seen.add(fingerprint)
        tool_rows += bool(shaped.tools)
        record: dict[str, Any] = {"prompt": prompt, "task": key}
        for column in carried:
            record[column] = row.get(column)
        out.append(record)
    report.n_written = len(out)
    if tool_rows:
        report.warnings.append(f"{tool_rows} rows name tools: GRPO takes tools as Python functions "
                               "(GRPOTrainer(tools=[...])), not as a column, so none was written")
    report.trainer_config = {"reward kwargs": ["task", *carried]}
    return out, report


def export_prompts(rows: Any, path: Any = None, *, columns: Sequence[str] | None = None,
                   system_prompt: str | None = None, dedupe: bool = True) -> ExportReport:
    """Write GRPO prompt rows as JSONL (temp name, then rename) and return the report.

    `columns`: row keys to carry for the reward function (default task_id, scenario_id, privileged; a
    missing key is written as null so every row has the same columns). `path` defaults to
    ``prompts-trl.jsonl`` in the current directory.
    """
    out, report = prompt_rows(rows, columns=columns, system_prompt=system_prompt, dedupe=dedupe)
    if not out:
        raise ExportRefusedError(f"no prompt to write (dropped: {report.dropped}). Fix: give rows with a user ask",
                                 rows=[])
    target = path if path is not None else default_path("prompts-trl")
    with atomic_jsonl(target) as handle:
        handle.write("".join(dumps(row) + "\n" for row in out))
    report.path = str(target)
    return report
