"""A flat rollout's steps: the fast walkers of all-dict steps (read_dict_steps, dict_step_sizes: what the trajectory
reader counts, for loops that need no events; tests pin them to it), and the rule for a `final_text` against the
reply the steps end on. Part of the row contract: rows.py imports these and keeps their names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai_train.rows.content import content_text
from whileai_train.rows.failure import tool_failed

__all__ = ["FINAL_TEXT_DIFFERS", "FINAL_TEXT_REPEATED", "dict_step_sizes", "final_is_own_turn", "final_text_turn",
           "read_dict_steps", "steps_end_with_reply"]


def read_dict_steps(steps: list[Any]) -> tuple[list[str], list[tuple[str, Any]], int, int]:
    """What the trajectory reader (rows/trajectory.py) counts of a flat row's steps that are all dicts (the common
    row), without its events or per-step type checks: the agent's texts, its calls (name, arguments: a dict as the
    tuple of its items), the steps (turns) and the failed calls. Raises AttributeError at a step that is not an
    object (read the row with the reader then). For loops over many rows; a test pins it to the reader."""
    texts: list[str] = []
    calls: list[tuple[str, Any]] = []
    errors = 0
    for step in steps:
        get = step.get
        tool = get("tool")
        if tool is not None:
            arguments = get("arguments")
            calls.append((tool if tool.__class__ is str else str(tool),
                          tuple(arguments.items()) if arguments.__class__ is dict else arguments))
            result = get("result")
            if result is not None and tool_failed(result):
                errors += 1
        text = get("text")
        if text:
            texts.append(text if text.__class__ is str else content_text(text))
    return texts, calls, len(steps), errors


def dict_step_sizes(steps: list[Any]) -> tuple[int, int, int, int]:
    """The sizes of what :func:`read_dict_steps` reads (characters of the agent's texts, how many texts, calls,
    turns), each step asked for its tool and text only, no call kept; raises AttributeError at a step that is not
    an object. A test pins it to the reader."""
    chars = n_texts = calls = 0
    for step in steps:
        if step.get("tool") is not None:
            calls += 1
        text = step.get("text")
        if text:
            chars += len(text) if text.__class__ is str else len(content_text(text))
            n_texts += 1
    return chars, n_texts, calls, len(steps)


# A flat rollout's `final_text` against the turn its steps end on: the same reply again, or a different one.
FINAL_TEXT_REPEATED, FINAL_TEXT_DIFFERS = "final_text_repeated", "final_text_differs"


def steps_end_with_reply(steps: Any) -> str | None:
    """The text of the plain agent turn (a ``{text}`` step: no tool, no user) a flat rollout's steps end on, else
    None (no steps, or they end on a tool call, its result or a user turn)."""
    if steps.__class__ is not list or not steps:
        return None
    last = steps[-1]
    if last.__class__ is not dict and not isinstance(last, Mapping):  # (the exact type first: the ABC check is slow)
        return None
    if last.get("tool") is not None or last.get("user") is not None:
        return None
    text = last.get("text")
    if text is None:
        return None
    return text if text.__class__ is str else content_text(text)


def final_text_turn(last_reply: str | None, final: str) -> str | None:
    """The rule for a flat rollout's non-empty `final_text`, given the agent reply its steps end on
    (:func:`steps_end_with_reply`; an exporter passes the reply its cleaned messages end on).

    None: the steps do not end with an agent reply, so `final_text` is the reply, a turn of its own.
    FINAL_TEXT_REPEATED: they end with the same text, so it is that turn, not a second one (a simulator that
    records the last reply both as a step and as the final text). FINAL_TEXT_DIFFERS: they end with another
    reply; both are turns, and a reader that can say so counts the row (never a silent pick).
    """
    if last_reply is None:
        return None
    return FINAL_TEXT_REPEATED if last_reply == final else FINAL_TEXT_DIFFERS


def final_is_own_turn(steps: Any, final: str) -> bool:
    """Whether a flat rollout's `final_text` is an agent turn of its own: not empty, and not the reply its steps
    already end on (:func:`final_text_turn` short of its FINAL_TEXT_DIFFERS count)."""
    return bool(final) and final_text_turn(steps_end_with_reply(steps), final) != FINAL_TEXT_REPEATED
