"""The one intake: every public function that takes rows calls :func:`take_rows` first.

It reads the rows in (a list of mappings, a JSONL or JSON-array path, a `datasets.Dataset`, any iterable; a report
or a ``(rows, report)`` pair is refused by name) and turns each row written in another tool's shape into the shape
every room reads (rows/shapes.py): the platform's flat rows and OpenAI chat ``messages`` pass as they are, the
others (ShareGPT ``conversations``, the Responses API's items, legacy ``function_call``, TRL's conversational
prompt/completion rows, tool turns without ids, Anthropic thinking blocks) become ``messages`` with every result
matched to its call. A row that cannot be read so is a RowError naming the row, the field, the shape it resembles
and the fix, before anything is written.

With ``graded=True`` (the functions that read rewards), rows with no ``reward`` anywhere but a grade under another
name (``score``, ``rating``, ``label``, ``grade``, ``correct``, ...) are refused with the column named and the fix
(``wai.read_rows(rows, reward_key="score")`` or a rename), never read as ungraded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from whileai_train.errors import InputError, RowError
from whileai_train.rows.files import from_dataset, read_rows, refuse_non_rows
from whileai_train.rows.shapes import read_shapes

__all__ = ["GRADE_NAMES", "from_dataset", "take_rows", "take_tasks"]

# Columns other tools grade under (TRL's logs name a column per reward function; HF data sets say label/score;
# eval harnesses say correct/grade/rating). Read as a grade only when named (reward_key=), never guessed.
GRADE_NAMES = ("score", "scores", "rating", "label", "grade", "correct", "is_correct", "passed", "accuracy")

# How many rows the grade-name check looks at: a column present in a file is present in its first rows.
_GRADE_PEEK = 64


def _grade_named_elsewhere(rows: list[Any], who: str) -> None:
    """Refuse rows that carry no `reward` anywhere but a grade under another name."""
    head = rows[:_GRADE_PEEK]
    if any("reward" in row for row in head) or any("reward" in row for row in rows):
        return
    for name in GRADE_NAMES:
        for index, row in enumerate(head):
            value = row.get(name)
            if isinstance(value, (int, float)) and value is not None:
                raise RowError(index, name, f"{who}: the rows have no `reward`, but `{name}` holds a grade "
                                            f"({value!r}); read as they are, every row would be ungraded",
                               f"name the column: `rows = wai.read_rows(rows, reward_key={name!r})`, or rename "
                               f"`{name}` to `reward` (0..1, a pass at 0.5 or more)")


def take_rows(source: Any, who: str, *, graded: bool = False, deep: bool = True) -> list[dict[str, Any]]:
    """The rows `who` was given, read in and in the shape every room reads; a typed error names what is wrong.

    `source`: a list of mappings, a JSONL / JSON-array path (str or PathLike), TRL's completions folder, a
    `datasets.Dataset`, or any iterable of mappings. A list whose rows are all in the rooms' shapes comes back
    as the same list (nothing is copied); a row in another shape comes back as a new dict. `deep=False`: chat
    `messages` rows are left for the trajectory reader to read (it reads another tool's chat shape the same way,
    rows/shapes.py), for the gates that read rows only through it and must not pay a second walk.
    """
    refuse_non_rows(source, who)
    if source.__class__ is list:
        rows: list[Any] = source
    elif isinstance(source, (str, os.PathLike)):
        rows = read_rows(source)
    elif hasattr(source, "to_list") and hasattr(source, "features"):  # datasets.Dataset
        rows = from_dataset(source)
    elif isinstance(source, Mapping):
        raise InputError(f"{who}: got one row (a dict), not a list of rows. Fix: pass [row] or a list of rows")
    elif isinstance(source, bytes):
        raise InputError(f"{who}: got bytes, not rows. Fix: pass a list of dicts, a JSONL path or a "
                         "datasets.Dataset")
    elif isinstance(source, Iterable):
        rows = list(source)
    else:
        raise InputError(f"{who}: cannot read rows from a {type(source).__name__}. Fix: pass a list of dicts, a "
                         "JSONL path, a datasets.Dataset or any iterable of dicts")
    for index, row in enumerate(rows):
        if row.__class__ is not dict and not isinstance(row, Mapping):
            raise RowError(index, None, f"{who}: row is {type(row).__name__}, not an object", "pass rows as dicts")
    rows = read_shapes(rows, deep=deep)  # after the check above: every row is a mapping
    if graded and rows:
        _grade_named_elsewhere(rows, who)
    return rows


def _leading_turns(messages: Any) -> list[Any]:
    """The turns of a conversation before the agent's first reply (its system and user turns): the prompt."""
    if messages.__class__ is not list:
        return []
    prompt: list[Any] = []
    for message in messages:
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            break
        prompt.append(message)
    return prompt


def take_tasks(source: Any, who: str, *, prompt_required: bool = True) -> list[dict[str, Any]]:
    """The tasks `who` was given, read by :func:`take_rows` (any source and row shape it reads, refused by the same
    typed errors), each with its `prompt`: a row written as a conversation (``messages``, or a shape take_rows
    turns into messages: ShareGPT, TRL prompt/completion, ...) asks what it says before the agent's first reply,
    as a conversational prompt. A row with no prompt is a RowError naming it (unless not `prompt_required`).
    Rows come back as new dicts, so the caller may change them."""
    rows = take_rows(source, who)
    tasks: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        task = dict(row)
        if task.get("prompt") is None:
            asked = _leading_turns(task.get("messages"))
            if asked:
                task["prompt"] = asked
            elif prompt_required:
                raise RowError(index, "prompt", f"{who}: the row has no `prompt` (keys: {sorted(map(str, task))})",
                               "give every task a 'prompt': a string, or a list of {role, content} chat messages "
                               "(GRPOTrainer's dataset shape)")
        tasks.append(task)
    return tasks
