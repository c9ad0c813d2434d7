"""A flat rollout's steps: the one step walker (:func:`walk_steps`) every reader of a flat row goes through (the
trajectory reader, whose parts the tables count, the normalised conversation, the exporters' flat pass), and the
rule for a `final_text` against the reply the steps end on. Part of the row contract: rows.py imports these and
keeps their names.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from whileai_train.rows.content import content_text

__all__ = ["FINAL_TEXT_DIFFERS", "FINAL_TEXT_REPEATED", "NO_RESULT", "STEP_CALL", "STEP_EMPTY", "STEP_NOT_OBJECT",
           "STEP_TEXT", "STEP_USER", "WalkedStep", "final_is_own_turn", "final_reply_turn", "final_text_turn",
           "steps_end_with_reply", "walk_steps"]

# What a step is, by the one step rule: a tool call (`tool` set), else a user turn (`user` set), else an agent turn
# (`text` set), else a step with none of them; a step that is not an object is its own kind.
STEP_CALL, STEP_USER, STEP_TEXT, STEP_EMPTY, STEP_NOT_OBJECT = 0, 1, 2, 3, 4

# A call step without a `result` key (no result came back), told apart from `result: null` (an empty result).
NO_RESULT: Any = type("NoResult", (), {"__repr__": lambda self: "NO_RESULT", "__slots__": ()})()

WalkedStep = tuple[int, int, Any, Any, Any, Any, Any]
"""One step as :func:`walk_steps` yields it: (number, kind, the step, tool or user, arguments, text, result)."""


def walk_steps(steps: list[Any]) -> Iterator[WalkedStep]:
    """The one walk of a flat rollout's steps: each step as ``(number, kind, step, head, arguments, text, result)``.

    `kind` is the step rule's (STEP_CALL, STEP_USER, STEP_TEXT, STEP_EMPTY, STEP_NOT_OBJECT); `head` is the call's
    tool (as given) or the user turn's text; `arguments` and `result` are the call's (`result` is NO_RESULT when
    the step has no `result` key); `text` is the step's own `text` as given, for every kind of object step (the
    words beside a call, or an agent turn). Nothing is decoded here: each reader applies its own reading (lenient
    for the trajectory, strict for the conversation) to the same walk.
    """
    for number, step in enumerate(steps):  # hot path: the exact type first, the ABC check only for other mappings
        if step.__class__ is not dict and not isinstance(step, Mapping):
            yield number, STEP_NOT_OBJECT, step, None, None, None, NO_RESULT
            continue
        get = step.get
        tool = get("tool")
        if tool is not None:
            yield number, STEP_CALL, step, tool, get("arguments"), get("text"), get("result", NO_RESULT)
        elif (user := get("user")) is not None:
            yield number, STEP_USER, step, user, None, get("text"), NO_RESULT
        else:
            text = get("text")
            yield number, STEP_EMPTY if text is None else STEP_TEXT, step, None, None, text, NO_RESULT


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


def final_reply_turn(written: list[dict[str, Any]], final: str) -> str | None:
    """:func:`final_text_turn` on the normalised messages an export wrote from the steps (cleaned: empty agent turns
    removed): the reply they end on is an assistant message without tool calls. Its verdict is an export note."""
    last = written[-1]
    ending = last["content"] if last["role"] == "assistant" and not last.get("tool_calls") else None
    return final_text_turn(ending, final)


def final_is_own_turn(steps: Any, final: str) -> bool:
    """Whether a flat rollout's `final_text` is an agent turn of its own: not empty, and not the reply its steps
    already end on (:func:`final_text_turn` short of its FINAL_TEXT_DIFFERS count)."""
    return bool(final) and final_text_turn(steps_end_with_reply(steps), final) != FINAL_TEXT_REPEATED
