"""GRPO prompt export: prompt-only rows, with the columns a reward function needs.

GRPOTrainer (trl 1.16) needs a conversational ``prompt`` column and passes every other column to each
reward function as a keyword argument, next to its own ``prompts``, ``completions``, ``completion_ids``,
``trainer_state``, ``log_extra`` and ``log_metric`` (a column with one of those names raises
``TypeError: multiple values``, docs/trl_facts.md). The prompt is the conversation before the agent's first turn.
One row per distinct prompt of a task: GRPO samples its own group of completions for each.

What a reward function reads rides along on every row: ``task`` (the task key), ``calibration`` (the task's
stamp, as ``Calibration.model_dump`` writes it, null when no row of the task has one), ``k`` (the graded
repeats behind it: the stamp's ``n``, else the task's graded rows here), ``passes`` and ``fails`` (the task's
graded rows here, at or above / below the pass threshold), and the rows' own columns. By default every key the
rows have is carried (``category``, ``expected_action``, ``reference``, ``privileged``, ...) except the
conversation itself, a past rollout's own values (its reward, its index, a value that differs between the
rollouts of one prompt) and names GRPOTrainer passes itself; ``columns=`` chooses instead. A column is written only
when some row has it (null on the rows that lack it), and the report's ``columns_carried`` / ``columns_left_out``
say what was carried and what was not, and why. The report's ``selection`` counts the tasks GRPO can learn from
(a calibrated pass rate strictly between 0 and 1, else a pass and a fail among the task's graded rows here) against
the tasks given, and warns under ``min_mixed_tasks``; every prompt is still written (GRPO samples afresh, and past
grades are evidence, not a verdict).
"""

from __future__ import annotations

import json
from collections.abc import Sequence, Sized
from typing import Any

from whileai_train.errors import ConfigError, ExportRefusedError
from whileai_train.exporters.defaults import MIN_MIXED_TASKS, RESERVED_REWARD_COLUMNS
from whileai_train.exporters.jsonl import atomic_jsonl, dumps
from whileai_train.exporters.options import ExportOptions, default_path
from whileai_train.exporters.report import ExportReport
from whileai_train.exporters.selection import mixed_selection, task_class
from whileai_train.exporters.shape import iter_input, shape_row
from whileai_train.progress import progress_call, rows_progress
from whileai_train.rows.contract import Calibration, calibration_of, reward_of, reward_range_error, task_key
from whileai_train.rows.intake import take_rows
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["GROUP_COLUMNS", "LEFT_OUT", "export_prompts", "prompt_rows"]

# Written on every prompt row, whatever `columns` says: the task and what its graded rollouts measured.
GROUP_COLUMNS = ("task", "calibration", "k", "passes", "fails")

# Row keys not carried by default, and why (the report says it for each one the rows have).
_CONVERSATION = "read into the prompt column"
_ANSWER = "a past rollout's answer: GRPO samples its own completions"
_ROLLOUT = "a property of one past rollout, not of the prompt"
LEFT_OUT: dict[str, str] = {
    "prompt": _CONVERSATION, "messages": _CONVERSATION,
    "steps": _ANSWER, "final_text": _ANSWER, "completion": _ANSWER,
    "reward": _ROLLOUT, "rewards": _ROLLOUT, "reward_before_penalty": _ROLLOUT, "rollout_index": _ROLLOUT,
    "rollout_id": _ROLLOUT, "finish_reason": _ROLLOUT, "markers": _ROLLOUT, "trace_flags": _ROLLOUT,
    "gold_reward": _ROLLOUT, "gold_kind": _ROLLOUT,
    "tools": "GRPO takes tools as Python functions (GRPOTrainer(tools=[...])), not as a column",
    **dict.fromkeys(GROUP_COLUMNS, "written by the export from the task's graded rows"),
    **dict.fromkeys(RESERVED_REWARD_COLUMNS - {"prompt", "completion"},
                    "GRPOTrainer passes a reward function this name itself (a column would raise TypeError)"),
}
_DIFFERS = ("differs between the rollouts of one prompt, and the export writes one row per prompt (dedupe=False "
            "writes one per rollout; columns=[...] chooses)")
_ABSENT = "no row has it"


def _columns(columns: Sequence[str] | None) -> tuple[str, ...] | None:
    """The columns asked for (calibration aside: always written), or None for the default rule."""
    if columns is None:
        return None
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise ConfigError(f"columns={columns!r}: pass a list of column names, e.g. ['task_id', 'privileged']")
    clash = sorted(set(columns) & (RESERVED_REWARD_COLUMNS | (set(GROUP_COLUMNS) - {"calibration"})))
    if clash:
        raise ConfigError(f"columns {clash} clash with what GRPOTrainer passes a reward function itself "
                          f"(or with the columns written on every row, {GROUP_COLUMNS}). Fix: rename those keys "
                          "in your rows first")
    return tuple(column for column in dict.fromkeys(columns) if column != "calibration")  # calibration: always


def _carried(report: ExportReport, keys: dict[str, None], differs: set[str],
             asked: tuple[str, ...] | None) -> tuple[str, ...]:
    """The columns to write (only keys some row has) and, on the report, what was carried and what was left out."""
    left_out = report.columns_left_out
    if asked is not None:
        carried = tuple(column for column in asked if column in keys)
        left_out.update((column, _ABSENT) for column in asked if column not in keys)
        left_out.update((key, "not in columns=") for key in keys
                        if key not in carried and key not in LEFT_OUT and key != "calibration")
    else:
        carried = tuple(key for key in keys if key not in LEFT_OUT and key != "calibration" and key not in differs)
        left_out.update((key, LEFT_OUT[key]) for key in keys if key in LEFT_OUT and key != "calibration")
        left_out.update((key, _DIFFERS) for key in keys if key in differs and key not in LEFT_OUT)
    report.columns_carried = [*GROUP_COLUMNS, *carried]
    return carried


def prompt_rows(rows: Any, *, columns: Sequence[str] | None = None, system_prompt: str | None = None,
                dedupe: bool = True, threshold: float = PASS_THRESHOLD,
                min_mixed_tasks: int = MIN_MIXED_TASKS) -> tuple[list[dict[str, Any]], ExportReport]:
    """The prompt rows `export_prompts` would write, and its report; writes nothing."""
    rows = take_rows(rows, "prompt_rows")
    ExportOptions(system_prompt=system_prompt, threshold=threshold, min_mixed_tasks=min_mixed_tasks)  # checks them
    asked = _columns(columns)
    report = ExportReport(kind="prompts", format="trl")
    first_of: dict[tuple[str, str], int] = {}  # (task, prompt) -> its record in `out`
    out: list[dict[str, Any]] = []
    sources: list[Any] = []  # the row each record was read from (the first rollout of its prompt)
    keys: dict[str, None] = {}  # every key the rows have, in order of first appearance
    differs: set[str] = set()  # keys whose value differs between the rollouts of one prompt
    tool_rows = 0
    groups: dict[str, list[int]] = {}  # task -> [passes, fails]
    stamps: dict[str, Calibration] = {}  # task -> the first calibration stamp seen
    ungraded = 0
    for index, row in enumerate(rows_progress(iter_input(rows), "rows", len(rows) if isinstance(rows, Sized) else None)):
        report.n += 1
        shaped = shape_row(row, index, system_prompt=system_prompt, max_tool_output_chars=None, tools=None)
        source = shaped.row  # a wai.Row arrives as its dict
        keys.update(dict.fromkeys(source))
        key = task_key(row)
        group = groups.setdefault(key, [0, 0])
        reward = reward_of(row, index)
        if reward is not None and not 0.0 <= reward <= 1.0:  # as optimize and the gates refuse it
            raise reward_range_error(index, row.get("reward"))
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
            seen = first_of.get(fingerprint)
            if seen is not None:
                report.drop("duplicate_prompt")
                earlier = sources[seen]
                differs.update(name for name in {*earlier, *source}
                               if name not in differs and earlier.get(name) != source.get(name))
                continue
            first_of[fingerprint] = len(out)
        tool_rows += bool(shaped.tools)
        out.append({"prompt": prompt, "task": key})  # the group columns and the carried ones are filled in below
        sources.append(source)
    carried = _carried(report, keys, differs, asked)
    for record, source in zip(out, sources, strict=True):
        for column in carried:
            record[column] = source.get(column)
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
    report.trainer_config = {"reward kwargs": report.columns_carried}
    return out, report


@progress_call("export_prompts")
def export_prompts(rows: Any, path: Any = None, *, columns: Sequence[str] | None = None,
                   system_prompt: str | None = None, dedupe: bool = True, threshold: float = PASS_THRESHOLD,
                   min_mixed_tasks: int = MIN_MIXED_TASKS, progress: bool | None = None) -> ExportReport:
    """Write GRPO prompt rows as JSONL (temp name, then rename) and return the report.

    `columns`: row keys to carry for the reward function; by default every key the rows have but the
    conversation, a past rollout's own values and names GRPOTrainer passes itself (LEFT_OUT), and any value that
    differs between the rollouts of one prompt. A column is written when some row has it (null on the others),
    next to GROUP_COLUMNS (task, calibration, k, passes, fails), always written; report.columns_carried and
    report.columns_left_out (column -> why) say which. `path` defaults to ``prompts-trl.jsonl`` in the current
    directory. Fewer mixed tasks than `min_mixed_tasks` (32 by default) warns. `progress`: a progress
    bar over the rows (None: when someone watches and the rows are many; False: never).
    """
    rows = take_rows(rows, "export_prompts")
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
