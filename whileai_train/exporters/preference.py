"""Preference export: the one-turn preference pair DPO trains as meant.

``prompt`` is the prefix both sides share (tool turns and later asks included); ``chosen`` and ``rejected``
are each the one assistant turn where the sides diverge. DPOTrainer masks the prompt and scores every
completion token (Lambert 2025, RLHF book, chapter "Direct Alignment"), so a tool result or user turn left
on a side would be trained; later turns are cut and the pairs that lost some are counted as
``trl_turns_cut``. Divergence ignores tool-call ids: two sides that differ only in an id are the same turn.

Pairs are given (``{"chosen": row, "rejected": row}``, sides as rows or message lists), or built from the
graded rows of each task: a passing rollout (reward >= 0.5) against a failing one, each row used once.

Each pair carries its rows' stamps as extra columns (DPOTrainer drops the columns it does not read): the task's
(``scenario_id``, ``task_id``, ``calibration``) once, from the chosen row (else the rejected one), and every other stamp per side as
``chosen_<key>`` / ``rejected_<key>`` (``chosen_reward``, ``rejected_rollout_index``, ...), the same columns on
every pair; with ``max_tool_output_chars``, the prompt's cap counts (``tool_output_truncated``,
``tool_output_chars_cut``). The report's ``selection`` counts the tasks DPO learns from (both a pass and a fail) against the
tasks given, and warns under ``min_mixed_tasks``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai_train.errors import ExportRefusedError, PrivilegedLeakError, RowError
from whileai_train.exporters.defaults import (
    FORMAT,
    MIN_MIXED_TASKS,
    STAMP_COLUMNS,
    TRL_MAX_LENGTH,
    TRL_READ_COLUMNS,
)
from whileai_train.exporters.jsonl import atomic_jsonl, dumps
from whileai_train.exporters.leaks import quotes_privileged
from whileai_train.exporters.options import ExportOptions, default_path, export_options
from whileai_train.exporters.report import ExportReport, shown_rows
from whileai_train.exporters.selection import count_rewards, mixed_selection, task_class
from whileai_train.exporters.shape import (
    CONSUMED,
    Shaped,
    carried_plain,
    check_arguments,
    encode_messages,
    iter_input,
    shape_row,
    strip_ids,
)
from whileai_train.exporters.template import TemplateCheck
from whileai_train.progress import progress_call, rows_progress
from whileai_train.rows.contract import (
    FINAL_TEXT_DIFFERS,
    FINAL_TEXT_REPEATED,
    conversation,
    reward_of,
    reward_range_error,
    task_key,
)
from whileai_train.rows.intake import take_rows
from whileai_train.tables.defaults import PASS_THRESHOLD

__all__ = ["export_preference", "preference_rows"]


def _side(pair: Mapping[str, Any], key: str, index: int) -> dict[str, Any]:
    """One side of a given pair as a row dict (a row, or the pair's prompt + a list/str completion)."""
    side = pair[key]
    if isinstance(side, Mapping):
        return dict(side)
    prompt = pair.get("prompt")
    if isinstance(prompt, str):
        head: list[Any] = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, list):
        head = list(prompt)
    elif prompt is None:
        head = []
    else:
        raise RowError(index, "prompt", f"prompt is a {type(prompt).__name__}",
                       "give the pair's prompt as text or a list of messages")
    if isinstance(side, str):
        tail: list[Any] = [{"role": "assistant", "content": side}]
    elif isinstance(side, list):
        tail = side
    else:
        raise RowError(index, key, f"{key} is a {type(side).__name__}",
                       f"give {key} as a row, a list of messages, or the reply text")
    row: dict[str, Any] = {"messages": head + tail}
    for extra, value in pair.items():  # the pair's own keys (privileged, tools, task_id, calibration ...) are the side's
        if extra not in ("chosen", "rejected", "prompt") and value is not None:
            row[extra] = value
    return row


_Pair = tuple[int, int, dict[str, Any], dict[str, Any]]

# Stamps of the task (the same on both sides of a pair built from rows): carried once, from the chosen row.
_TASK_STAMPS = ("scenario_id", "task_id", "calibration")
_WRITTEN = frozenset({"prompt_text", "task", "input", "preferred_output", "non_preferred_output",
                      "tool_output_truncated", "tool_output_chars_cut"})


def _stamp_columns(pairs: list[_Pair], trl: bool, report: ExportReport) -> tuple[list[str], list[str]]:
    """(task columns, per-side keys): the same columns on every pair, whatever keys each row holds."""
    skip = CONSUMED | _WRITTEN | (TRL_READ_COLUMNS if trl else frozenset())
    unknown: dict[str, None] = {}
    for _chosen, _rejected, chosen_row, rejected_row in pairs:
        for row in (chosen_row, rejected_row):
            for key in row:
                if key not in skip and key not in STAMP_COLUMNS:
                    unknown[key] = None
            if trl:
                for key in row.keys() & (TRL_READ_COLUMNS - CONSUMED):
                    report.columns_not_carried[key] = report.columns_not_carried.get(key, 0) + 1
    sides = [key for key in (*STAMP_COLUMNS, *unknown) if key not in _TASK_STAMPS]
    if trl:
        for key in [key for key in sides if f"chosen_{key}" in TRL_READ_COLUMNS or f"rejected_{key}" in TRL_READ_COLUMNS]:
            sides.remove(key)
            report.columns_not_carried[key] = report.columns_not_carried.get(key, 0) + 1
    return list(_TASK_STAMPS), sides


def _pairs(items: list[Any], threshold: float, report: ExportReport,
           classes: dict[str, str]) -> list[_Pair]:
    """(chosen index, rejected index, chosen row, rejected row): given pairs, or pass vs fail within each task.

    In the rows case every row is read (a bad row is bad input even when it would not be paired). `classes`
    gets each task given: its task_class (pairs built from rows), or "no_usable_pair" (given pairs) until a
    pair of the task is written.
    """
    is_pair = [isinstance(item, Mapping) and "chosen" in item and "rejected" in item for item in items]
    if any(is_pair):
        if not all(is_pair):
            index = is_pair.index(False)
            raise RowError(index, "chosen", "this item is not a pair while others are",
                           "pass either pairs ({chosen, rejected}) or graded rows, not both")
        given = [(i, i, _side(item, "chosen", i), _side(item, "rejected", i)) for i, item in enumerate(items)]
        for given_pair in given:
            classes[task_key(given_pair[2])] = "no_usable_pair"
        return given
    tasks: dict[str, tuple[list[int], list[int]]] = {}
    for index, row in enumerate(items):
        if not isinstance(row, Mapping):
            raise RowError(index, None, f"row is a {type(row).__name__}, not an object", "pass rows as dicts")
        conversation(row, index)
        reward = reward_of(row, index)
        if reward is not None and not 0.0 <= reward <= 1.0:  # as optimize and the gates refuse it
            raise reward_range_error(index, row.get("reward"))
        key = task_key(row)
        if reward is None:
            report.drop("ungraded")
            classes.setdefault(key, "ungraded")
            continue
        passes, fails = tasks.setdefault(key, ([], []))
        (passes if reward >= threshold else fails).append(index)
    for key, (passes, fails) in tasks.items():
        kind = task_class(len(passes), len(fails))
        classes[key] = "no_usable_pair" if kind == "mixed" else kind  # "mixed" once one of its pairs is written
    pairs = []
    for passes, fails in tasks.values():
        if not passes or not fails:
            report.drop("no_mixed_task", len(passes) + len(fails))
            continue
        for chosen, rejected in zip(passes, fails):
            pairs.append((chosen, rejected, items[chosen], items[rejected]))
        if len(passes) != len(fails):
            report.drop("unpaired", abs(len(passes) - len(fails)))
    return pairs


def _divergence(chosen: Shaped, rejected: Shaped) -> int:
    """Index of the first message where the sides differ, tool-call ids ignored (len of the shorter if none)."""
    shorter = min(len(chosen.messages), len(rejected.messages))
    for position in range(shorter):
        if strip_ids(chosen.messages[position]) != strip_ids(rejected.messages[position]):
            return position
    return shorter


def preference_rows(pairs_or_rows: Any, *, format: str = FORMAT, max_tool_output_chars: int | None = None,
                    system_prompt: str | None = None, tools: list[Any] | None = None, tokenizer: Any = None,
                    validate: bool = True, max_length: int | None = None, threshold: float = PASS_THRESHOLD,
                    min_mixed_tasks: int = MIN_MIXED_TASKS, options: ExportOptions | None = None
                    ) -> tuple[list[dict[str, Any]], ExportReport]:
    """The pairs `export_preference` would write, and its report; writes nothing."""
    return _preference_rows(pairs_or_rows, export_options(
        options, format=format, max_tool_output_chars=max_tool_output_chars, system_prompt=system_prompt,
        tools=tools, tokenizer=tokenizer, validate=validate, max_length=max_length, threshold=threshold,
        min_mixed_tasks=min_mixed_tasks))


def _preference_rows(pairs_or_rows: Any, options: ExportOptions) -> tuple[list[dict[str, Any]], ExportReport]:
    """preference_rows with the options of its call, built and checked."""
    format, validate, threshold = options.format, options.validate, options.threshold
    system_prompt, max_tool_output_chars, tools = options.system_prompt, options.max_tool_output_chars, options.tools
    tokenizer = options.tokenizer
    # DPOTrainer renders with the tokenizer's own template and trains the tokens after the prompt (template.py)
    template = (TemplateCheck(tokenizer, options.max_length or TRL_MAX_LENGTH,
                              "whole" if format == "openai" else "completion")
                if tokenizer is not None else None)
    encoding = "json_string" if format == "openai" else "dict"  # TRL rows: the template's, once a pair has a call
    report = ExportReport(kind="preference", format=format)  # type: ignore[arg-type]  # checked by ExportOptions
    report.tool_call_roundtrip.rendered = template is not None
    if template is not None:
        report.max_length = template.max_length
        report.chat_template = template.name or "custom"
    items = list(iter_input(pairs_or_rows))
    report.n = len(items)
    out: list[dict[str, Any]] = []
    classes: dict[str, str] = {}
    pairs = _pairs(items, threshold, report, classes)
    task_columns, side_columns = _stamp_columns(pairs, format == "trl", report)
    rewards: list[float | None] = []
    for source, other, chosen_row, rejected_row in rows_progress(pairs, "pairs"):
        sides = [shape_row(row, index, system_prompt=system_prompt, max_tool_output_chars=max_tool_output_chars,
                           tools=tools) for row, index in ((chosen_row, source), (rejected_row, other))]
        chosen, rejected = sides
        for side in sides:
            for note in (FINAL_TEXT_REPEATED, FINAL_TEXT_DIFFERS):
                if note in side.notes:
                    setattr(report, note, getattr(report, note) + 1)
        at = _divergence(chosen, rejected)
        if at >= min(len(chosen.messages), len(rejected.messages)):
            report.drop("no_divergence")
            continue
        if chosen.messages[at]["role"] != "assistant" or rejected.messages[at]["role"] != "assistant":
            report.drop("diverges_outside_agent_turn")
            continue
        if at == 0:
            report.drop("no_shared_prompt")
            continue
        for side in sides:
            checked, invalid = check_arguments(side)
            report.tool_call_roundtrip.checked += checked
            report.tool_call_roundtrip.invalid += invalid
            if checked and template is not None and template.encoding is None:
                probed = template.probe(side.index, side.tools)  # the first pair with a tool call: probe once
                encoding = probed if format == "trl" else encoding
        for source_row, side in ((chosen_row, chosen), (rejected_row, rejected)):
            leaked = source_row.get("privileged") is not None and quotes_privileged(side.messages[: at + 1],
                                                                                     source_row["privileged"])
            if leaked and side.index not in report.privileged_leaks:
                report.privileged_leaks.append(side.index)
        if len(chosen.messages) > at + 1 or len(rejected.messages) > at + 1:
            report.trl_turns_cut += 1
        capped = [cut for position, cut in chosen.capped.items() if position < at]
        report.tool_output_truncated += len(capped)
        report.tool_output_chars_cut += sum(capped)
        stamps = {key: chosen_row.get(key, rejected_row.get(key)) for key in task_columns}
        for prefix, side_row in (("chosen_", chosen_row), ("rejected_", rejected_row)):
            for key in side_columns:
                stamps[prefix + key] = side_row.get(key)
        carried_plain(stamps, source)  # a stamp JSON cannot write is bad input, named here
        if max_tool_output_chars is not None:
            stamps["tool_output_truncated"], stamps["tool_output_chars_cut"] = len(capped), sum(capped)
        prompt = encode_messages(chosen.messages[:at], encoding)
        good = encode_messages([chosen.messages[at]], encoding)
        bad = encode_messages([rejected.messages[at]], encoding)
        if template is not None and format == "trl" and template.id_form is not None:
            # the call ids in the form the template demands, the same in the prompt and on both sides (template.py)
            good, bad = template.recall(prompt + good)[at:], template.recall(prompt + bad)[at:]
            prompt = template.recall(prompt)
        if template is not None:
            any_over = False
            shared = template.encode(chosen.messages[:at])
            for side in sides:
                rendered = template.encode(chosen.messages[:at] + [side.messages[at]])
                over, text = template.too_long(rendered, chosen.tools, side.index)
                report.too_long += int(over)
                any_over = any_over or over
                survival = template.count_drops(rendered, chosen.tools, side.index, at)
                if format == "trl":
                    report.tool_call_roundtrip.invalid += template.missing_arguments(rendered, text, survival, at)
            if any_over:  # DPOTrainer drops a pair whose prompt alone fills max_length (keep_start)
                report.too_long_untrained += template.context_fills(shared, chosen.tools, source)
        report.trained_messages += 2
        report.masked_messages += len(prompt)
        if format == "openai":
            row: dict[str, Any] = {"input": {"messages": prompt}, "preferred_output": good,
                                   "non_preferred_output": bad, **stamps}
            if chosen.tools is not None:
                row["input"]["tools"] = chosen.tools
        else:
            row = {"prompt": prompt, "chosen": good, "rejected": bad, "prompt_text": chosen.ask,
                   "task": task_key(chosen_row), "tools": dumps(chosen.tools) if chosen.tools is not None else None,
                   **stamps}
        out.append(row)
        classes[task_key(chosen_row)] = "mixed"
        rewards.extend((reward_of(chosen_row, source), reward_of(rejected_row, other)))
    report.n_written = len(out)
    report.tool_call_roundtrip.encoding = encoding  # type: ignore[assignment]
    leaks = report.privileged_leaks
    if leaks and validate:
        raise PrivilegedLeakError(
            f"privileged_leak: {len(leaks)} pairs quote their own privileged context in a reply (rows "
            f"{shown_rows(leaks)}); nothing was written. Fix: drop those pairs (error.rows; wai.leak_report "
            "names the leaking rows of a row list), or pass validate=False", rows=leaks)
    if template is not None:
        template.refuse_drops(validate)
        report.template_drops = dict(template.drops)
        report.call_ids = template.id_form if format == "trl" else None  # OpenAI rows keep their ids
        report.warnings.extend(template.warnings(validate))
    for reason in ("no_divergence", "diverges_outside_agent_turn", "no_shared_prompt"):
        if report.dropped.get(reason):
            report.warnings.append(f"{report.dropped[reason]} pairs dropped: {reason.replace('_', ' ')}")
    if report.too_long:
        report.warnings.append(f"{report.too_long} sides are longer than max_length={report.max_length} tokens; "
                               f"DPOTrainer drops the {report.too_long_untrained} pairs whose prompt alone fills it")
    if report.privileged_leaks and not validate:
        report.warnings.append(f"{len(leaks)} pairs quote privileged context and were written (validate=False)")
    if report.final_text_differs:
        report.warnings.append(f"{report.final_text_differs} sides' final_text differs from the agent reply their "
                               "steps end with: both turns were kept")
    if report.columns_not_carried:
        keys = ", ".join(f"{key} ({count})" for key, count in sorted(report.columns_not_carried.items()))
        report.warnings.append(f"row keys TRL reads as data were not carried as columns: {keys}")
    passing, failing, ungraded = count_rewards(rewards, threshold)
    mixed_selection(report, "dpo", classes, passing=passing, failing=failing, ungraded=ungraded,
                    min_mixed_tasks=options.min_mixed_tasks, threshold=threshold)
    if format == "trl" and report.max_length is not None:
        report.trainer_config = {"max_length": report.max_length}
    return out, report


# Why pairs were dropped -> what to do about it, for the refusal when none is left (most dropped first).
_NO_PAIR_FIXES = {
    "ungraded": "grade the rollouts (a reward per row): ungraded rows make no pair",
    "no_mixed_task": "give each task at least one passing and one failing graded rollout",
    "unpaired": "give each task at least one passing and one failing graded rollout",
    "no_divergence": "the two sides of each pair are the same conversation (they differ at most in call ids): "
                     "pair a passing rollout with a failing one that answers differently",
    "diverges_outside_agent_turn": "the pairs first differ at a tool result or a user turn, not at an agent turn, "
                                   "and DPO can only score an agent turn after a shared prefix: pair rollouts that "
                                   "saw the same tool results up to where the agent chose differently (same "
                                   "environment state and seed), or train these with SFT or GRPO",
    "no_shared_prompt": "the sides differ from their first turn: give both sides the same prompt (system and user "
                        "turns) before the agent's turn",
}


def _no_pair_fix(dropped: dict[str, int]) -> str:
    """The fix for each reason pairs were dropped, the most frequent first (each said once)."""
    fixes = [_NO_PAIR_FIXES.get(reason, "give each task at least one passing and one failing graded rollout")
             for reason, _ in sorted(dropped.items(), key=lambda item: -item[1])]
    fixes = list(dict.fromkeys(fixes)) or ["give each task at least one passing and one failing graded rollout"]
    return "; ".join(fixes)


@progress_call("export_preference")
def export_preference(pairs_or_rows: Any, path: Any = None, *, format: str = FORMAT,
                      max_tool_output_chars: int | None = None, system_prompt: str | None = None,
                      tools: list[Any] | None = None, tokenizer: Any = None, validate: bool = True,
                      max_length: int | None = None, threshold: float = PASS_THRESHOLD,
                      min_mixed_tasks: int = MIN_MIXED_TASKS, options: ExportOptions | None = None,
                      progress: bool | None = None) -> ExportReport:
    """Write one-turn preference pairs as JSONL (temp name, then rename) and return the report.

    ``format="trl"``: conversational ``prompt``/``chosen``/``rejected`` for DPOTrainer.
    ``format="openai"``: ``input.messages``/``preferred_output``/``non_preferred_output`` (arguments as JSON
    strings). With `tokenizer=`, pairs are rendered with its chat template as DPOTrainer renders them: the
    arguments encoding is read off it, and what it drops of the scored turns raises TemplateDropError unless
    `validate=False`. `path` defaults to ``preference-<format>.jsonl`` in the current directory. Fewer tasks with both
    a pass and a fail than `min_mixed_tasks` (32 by default) warns; nothing is refused for it.
    `options`: the same keywords as one wai.ExportOptions (its SFT fields unread); a keyword beside it overrides it.
    `progress`: a progress bar over the pairs (None: when someone watches and they are many; False: never).
    """
    asked = export_options(options, format=format, max_tool_output_chars=max_tool_output_chars,
                           system_prompt=system_prompt, tools=tools, tokenizer=tokenizer, validate=validate,
                           max_length=max_length, threshold=threshold, min_mixed_tasks=min_mixed_tasks)
    rows, report = _preference_rows(take_rows(pairs_or_rows, "export_preference", graded=True), asked)
    if not rows:
        raise ExportRefusedError(f"no preference pair to write (dropped: {report.dropped}); nothing was written. "
                                 f"Fix: {_no_pair_fix(report.dropped)}", rows=[])
    target = path if path is not None else default_path(f"preference-{asked.format}")
    with atomic_jsonl(target) as handle:
        handle.write("".join(dumps(row) + "\n" for row in rows))
    report.path = str(target)
    return report
