"""GRPO prompt export: prompt-only rows, with the columns a reward function needs.

GRPOTrainer (trl 1.16) needs a conversational ``prompt`` column and passes every other column to each
reward function as a keyword argument, next to its own ``prompts``, ``completions``, ``completion_ids``,
``trainer_state``, ``log_extra`` and ``log_metric`` (a column with one of those names raises
``TypeError: multiple values``, docs/trl_facts.md). The prompt is the conversation before the agent's first turn.
One row per distinct prompt of a task: GRPO samples its own group of completions for each.

What a reward function reads rides along on every row: ``task`` (the task key), ``calibration`` (the task's
stamp, as ``Calibration.model_dump`` writes it, null when no row of the task has one), ``k`` (the graded
repeats behind it: the stamp's ``n``, else the task's graded rows here), ``passes`` and ``fails`` (the task's
graded rows here, at or above / below the pass threshold), and the chosen columns (the reference and gold
fields by default). The report's ``selection`` counts the tasks GRPO can learn from (a calibrated pass rate
strictly between 0 and 1, else a pass and a fail among the task's graded rows here) against the tasks given, and warns under ``min_mixed_tasks``;
every prompt is still written (GRPO samples afresh, and past grades are evidence, not a verdict).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


from whileai_train.errors import ConfigError, ExportRefusedError, RowError
from whileai_train.exporters.defaults import MIN_MIXED_TASKS, RESERVED_REWARD_COLUMNS
from whileai_train.exporters.jsonl import atomic_jsonl, dumps
from whileai_train.exporters.options import check_common, default_path
from whileai_train.exporters.report import ExportReport
from whileai_train.exporters.selection import check_selection_options, mixed_selection, task_class
from whileai_train.exporters.shape import iter_input, shape_row
from whileai_train.rows import Calibration, calibration_of, reward_of, task_key
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["DEFAULT_PROMPT_COLUMNS", "GROUP_COLUMNS", "export_prompts", "prompt_rows"]

# What a reward function usually needs to grade a completion: which task it is, what the grader may see, and
# the reference / gold answer when the rows carry one.
DEFAULT_PROMPT_COLUMNS = ("task_id", "scenario_id", "privileged", "reference", "gold")

# Written on every prompt row, whatever `columns` says: the task and what its graded rollouts measured.
GROUP_COLUMNS = ("task", "calibration", "k", "passes", "fails")


def _columns(columns: Sequence[str] | None) -> tuple[str, ...]:
    if columns is None:
        return DEFAULT_PROMPT_COLUMNS
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise ConfigError(f"columns={columns!r}: pass a list of column names, e.g. ['task_id', 'privileged']")
    clash = sorted(set(columns) & (RESERVED_REWARD_COLUMNS | (set(GROUP_COLUMNS) - {"calibration"})))
    if clash:
        raise ConfigError(f"columns {clash} clash with what GRPOTrainer passes a reward function itself "
                          f"(or with the columns written on every row, {GROUP_COLUMNS}). Fix: rename those keys "
                          "in your rows first")
    return tuple(column for column in dict.fromkeys(columns) if column != "calibration")  # calibration: always


def prompt_rows(rows: Any, *, columns: Sequence[str] | None = None, system_prompt: str | None = None,
                dedupe: bool = True, threshold: float = PASS_THRESHOLD,
                min_mixed_tasks: int = MIN_MIXED_TASKS) -> tuple[list[dict[str, Any]], ExportReport]:
    """The prompt rows `export_prompts` would write, and its report; writes nothing."""
    check_common(format="trl", max_tool_output_chars=None, system_prompt=system_prompt, tools=None)
    check_selection_options(min_mixed_tasks=min_mixed_tasks, threshold=threshold)
    carried = _columns(columns)
    report = ExportReport(kind="prompts", format="trl")
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    tool_rows = 0
    groups: dict[str, list[int]] = {}  # task -> [passes, fails]
    stamps: dict[str, Calibration] = {}  # task -> the first calibration stamp seen
    ungraded = 0
    for index, row in enumerate(iter_input(rows)):
        report.n += 1
        shaped = shape_row(row, index, system_prompt=system_prompt, max_tool_output_chars=None, tools=None)
        key = task_key(row)
        group = groups.setdefault(key, [0, 0])
        reward = reward_of(row, index)
        if reward is None:
            ungraded += 1
        else:
            group[reward < threshold] += 1
        stamp = calibration_of(row, index)
        if stamp is not None and key not in stamps:
            stamps[key] = stamp
        first = shaped.agent[0] if shaped.agent else len(shaped.messages)
        prompt = shaped.messages[:first]
        if not any(m["role"] == "user" for m in prompt):
            report.drop("no_prompt")
            continue
        if dedupe:
            fingerprint = (key, json.dumps(prompt, sort_keys=True, default=str))
            if fingerprint in seen:
                report.drop("duplicate_prompt")
                continue
            seen.add(fingerprint)
        tool_rows += bool(shaped.tools)
        record: dict[str, Any] = {"prompt": prompt, "task": key}  # the group columns are filled in below
        for column in carried:
            record[column] = row.get(column)
        out.append(record)
    for record in out:  # every row of a task gets its whole group, also the rows read before the rest of it
        passes, fails = groups[record["task"]]
        stamp = stamps.get(record["task"])
        record["calibration"] = stamp.model_dump(mode="json") if stamp is not None else None
        record["k"] = stamp.n if stamp is not None else passes + fails
        record["passes"], record["fails"] = passes, fails
    report.n_written = len(out)
    if tool_rows:
        report.warnings.append(f"{tool_rows} rows name tools: GRPO takes tools as Python functions "
                               "(GRPOTrainer(tools=[...])), not as a column, so none was written")
    classes = {key: task_class(passes, fails, stamps[key].pass_rate if key in stamps else None)
               for key, (passes, fails) in groups.items()}
    mixed_selection(report, "grpo", classes, passing=sum(g[0] for g in groups.values()),
                    failing=sum(g[1] for g in groups.values()), ungraded=ungraded, min_mixed_tasks=min_mixed_tasks,
                    threshold=threshold)
    report.trainer_config = {"reward kwargs": [*GROUP_COLUMNS, *carried]}
    return out, report


def export_prompts(rows: Any, path: Any = None, *, columns: Sequence[str] | None = None,
                   system_prompt: str | None = None, dedupe: bool = True, threshold: float = PASS_THRESHOLD,
                   min_mixed_tasks: int = MIN_MIXED_TASKS) -> ExportReport:
    """Write GRPO prompt rows as JSONL (temp name, then rename) and return the report.

    `columns`: row keys to carry for the reward function (default task_id, scenario_id, privileged, reference,
    gold; a missing key is written as null so every row has the same columns), next to GROUP_COLUMNS (task,
    calibration, k, passes, fails), always written. `path` defaults to ``prompts-trl.jsonl`` in the current
    directory. Fewer mixed tasks than `min_mixed_tasks` (32, the product text's) warns.
    """
    out, report = prompt_rows(rows, columns=columns, system_prompt=system_prompt, dedupe=dedupe,
                              threshold=threshold, min_mixed_tasks=min_mixed_tasks)
    if not out:
        raise ExportRefusedError(f"no prompt to write (dropped: {report.dropped}). Fix: give rows with a user ask",
                                 rows=[])
    target = path if path is not None else default_path("prompts-trl")
    with atomic_jsonl(target) as handle:
        handle.write("".join(dumps(row) + "\n" for row in out))
    report.path = str(target)
    return report
