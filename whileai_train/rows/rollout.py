"""from_row / to_row: a row to and from the schema's Rollout, the calibration stamp on ``extra["calibration"]``.

A Rollout is one rollout as the schema holds it: the task it belongs to (`task_id`, the row's task_key, so a
round trip keeps every report's grouping), the conversation as normalised messages (the row contract's
:func:`~whileai_train.rows.contract.conversation`, whichever shape the row came in), the reward, the markers
(``row["markers"]``, the one place every marker family writes) and ``extra``: the calibration stamp, typed by
:func:`~whileai_train.rows.contract.calibration_of`, under ``extra["calibration"]`` (from_row
carries it on rollout.extra["calibration"], and to_row writes it out again), and every other key the row
carried (lineage, gold labels, policy versions, your own columns), as they were.

    rollout = wai.from_row(row)
    rollout.extra["calibration"]          # the task's pass rate over the k repeats the grader saw
    row = wai.to_row(rollout)             # a messages row; wai.calibration_of(row) reads the same stamp
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from whileai_train.errors import RowError
from whileai_train.rows.contract import Message, calibration_of, conversation, reward_of, task_key
from whileai_train.rows.json_text import loads

__all__ = ["Rollout", "from_row", "to_row"]

# the row keys a Rollout holds in its own fields (the trajectory is read into `messages`); the rest go to extra
_TRAJECTORY_KEYS = frozenset({"messages", "prompt", "steps", "final_text", "system", "system_prompt"})
_FIELDS = frozenset({"rollout_id", "scenario_id", "task_id", "rollout_index", "reward", "markers", "finish_reason",
                     "tools", "calibration", "extra"})
CALIBRATION = "calibration"


class Rollout(BaseModel):
    """One rollout as the schema holds it: task, conversation, reward, markers, and `extra` (the calibration
    stamp under ``extra["calibration"]``, then every other key the row carried)."""

    model_config = ConfigDict(extra="forbid")
    task_id: str
    scenario_id: str | None = None
    rollout_id: str | None = None
    rollout_index: int | None = None
    messages: list[Message]
    tools: list[dict[str, Any]] | None = None  # JSON schemas of the tools the agent was offered
    reward: float | None = None
    markers: dict[str, float | None] = Field(default_factory=dict)
    finish_reason: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


def _tools(value: Any, index: int | None) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if isinstance(value, str):  # the JSON text TRL also reads
        try:
            value = loads(value)
        except ValueError:
            value = None
    if not isinstance(value, list) or not all(isinstance(tool, Mapping) for tool in value):
        raise RowError(index, "tools", "tools is not a list of JSON schemas (or their JSON text)",
                       "write tools as a list of {type: 'function', function: {name, parameters}} objects")
    return [dict(tool) for tool in value]


def _system_turn(row: Mapping[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A flat row's `system_prompt` as the first turn (the conversation of a flat row holds no system turn)."""
    system = row.get("system_prompt")
    if row.get("messages") is None and isinstance(system, str) and system and \
            not any(message.get("role") == "system" for message in messages):
        return [{"role": "system", "content": system}, *messages]
    return messages


def _completion_turns(row: Mapping[str, Any], index: int | None) -> list[dict[str, Any]] | None:
    """A TRL prompt/completion row's completion as the agent's turns (the conversation reads only its prompt);
    None when the row's trajectory is elsewhere (messages, steps, final_text) or it has no completion."""
    completion = row.get("completion")
    if completion is None or any(row.get(key) is not None for key in ("messages", "steps", "final_text")):
        return None
    if isinstance(completion, str):
        return [{"role": "assistant", "content": completion}]
    return conversation({"messages": completion}, index)


def from_row(row: Mapping[str, Any], index: int | None = None) -> Rollout:
    """The schema's Rollout of one row (any shape the row contract reads: flat `prompt` + `steps` +
    `final_text`, OpenAI / Anthropic `messages`, TRL prompt/completion, whose completion becomes the agent's turns).

    The calibration stamp (``calibration``, else ``extra.calibration``) is validated as a Calibration and carried
    on ``rollout.extra["calibration"]``; the row's ``extra`` keys and every key the Rollout has no field for ride
    along in ``extra`` unchanged. A malformed row, stamp, reward or marker is a RowError naming the field.
    """
    if type(row) is not dict and not isinstance(row, Mapping):
        raise RowError(index, None, f"row is {type(row).__name__}, not an object",
                       "pass one row as a dict (from_row reads one row; loop over a list)")
    messages = _system_turn(row, conversation(row, index))
    completion = _completion_turns(row, index)
    stamp = calibration_of(row, index)
    extra: dict[str, Any] = {}
    carried = row.get("extra")
    if isinstance(carried, Mapping):
        extra.update(carried)
    elif carried is not None:
        extra["extra"] = carried  # not an object: kept as it was, under its own name
    extra.update({key: value for key, value in row.items() if key not in _FIELDS and key not in _TRAJECTORY_KEYS})
    extra.pop(CALIBRATION, None)
    if completion is not None:  # read into the messages: not kept twice
        messages += completion
        extra.pop("completion", None)
    if stamp is not None:
        extra = {CALIBRATION: stamp.model_dump(mode="json", exclude_none=True), **extra}
    scenario = row.get("scenario_id")
    fields = {"task_id": task_key(row), "scenario_id": None if scenario is None else str(scenario),
              "rollout_id": row.get("rollout_id"), "rollout_index": row.get("rollout_index"), "messages": messages,
              "tools": _tools(row.get("tools"), index), "reward": reward_of(row, index),
              "markers": row.get("markers") or {}, "finish_reason": row.get("finish_reason"), "extra": extra}
    try:
        return Rollout.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or None
        raise RowError(index, field, f"{error['msg']} (got {error.get('input')!r})",
                       "fix that field of the row (markers {name: number or null}, rollout_index an integer, "
                       "rollout_id and finish_reason text)") from None


def to_row(rollout: Rollout | Mapping[str, Any]) -> dict[str, Any]:
    """The row of a Rollout: `messages`, the task (`scenario_id` when it has one, `task_id`), reward, markers,
    the calibration stamp written out again as ``row["calibration"]``, and every other ``extra`` key as a row key.

    Every report reads the row as it read the original: the same task_key, reward, markers, stamp and
    conversation. A dict is validated as a Rollout first (a Rollout's ``model_dump()`` reads back).
    """
    if not isinstance(rollout, Rollout):
        if not isinstance(rollout, Mapping):
            raise RowError(None, None, f"to_row got a {type(rollout).__name__}, not a Rollout",
                           "pass wai.from_row(row), or its model_dump()")
        try:
            rollout = Rollout.model_validate(dict(rollout))
        except ValidationError as exc:
            error = exc.errors()[0]
            raise RowError(None, ".".join(str(part) for part in error["loc"]) or None,
                           f"not a Rollout: {error['msg']}", "pass wai.from_row(row), or its model_dump()") from None
    row: dict[str, Any] = {key: value for key, value in rollout.extra.items() if key != CALIBRATION}
    if rollout.scenario_id is not None:
        row["scenario_id"] = rollout.scenario_id
    if rollout.task_id != rollout.scenario_id:
        row["task_id"] = rollout.task_id
    for key in ("rollout_id", "rollout_index", "finish_reason", "tools"):
        value = getattr(rollout, key)
        if value is not None:
            row[key] = value
    row["messages"] = [message.model_dump(exclude_none=True) for message in rollout.messages]
    row["reward"] = rollout.reward
    if rollout.markers:
        row["markers"] = dict(rollout.markers)
    stamp = rollout.extra.get(CALIBRATION)
    if stamp is not None:
        row[CALIBRATION] = stamp
    return row
