"""The one reader of a row's trajectory: what the agent was told, said and called, in order, and what came back.

:func:`read_trajectory` reads a row once into a :class:`Trajectory`; every check in a call takes what it needs
from that one reading: the events (markers: trace flags, grounding), and the agent's parts (the gates' features,
the tables, duplicates): its texts, its calls, its turns, its failed calls. Both row shapes read the same way:

* a flat row: ``prompt`` (a string, or TRL's conversational prompt), ``system_prompt`` / ``system``, ``steps``
  (tool calls ``{tool, arguments, result}``, user turns ``{user}``, agent turns ``{text}``) and ``final_text``
  (else a ``completion``: a string, or TRL's conversational completion);
* ``messages`` as OpenAI writes them (``tool_calls`` with JSON-text or object arguments, ``tool`` turns naming
  their ``tool_call_id``) or as Anthropic does (content blocks: ``tool_use`` calls with ``input``, ``tool_result``
  blocks riding in a user turn with their ``is_error``; a top-level ``system``), content read by the
  message-text rule (rows/content.py).

Each event is a tuple whose first item says what it is:

    (HEARD, text)   the prompt, a system or user turn: what the agent was told
    (SAID, text)    the agent's own words (an agent turn, the text beside a tool call, the final reply)
    (CALLED, call)  a tool call (a :class:`Call`), before its result
    (RESULT, call)  the same call's result, once it came back

A row the events cannot be read from (no ``steps`` nor ``messages``, a step or message that is not an object, a
call without a name, arguments that are not a JSON object, ...) is still read for its parts, leniently, as the
gates always read them; the first such fault is kept as ``problem`` (a RowError naming the row and the field),
which :meth:`Trajectory.checked_events` raises for the checks that must read a trajectory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from whileai_train.errors import RowError, ToolArgumentsError
from whileai_train.rows.content import as_text, content_text, read_content
from whileai_train.rows.failure import DEFAULT_FAILURE, FailureFunctionError, FailureRule
from whileai_train.rows.json_text import loads, tool_arguments
from whileai_train.rows.shapes import FOREIGN_ITEMS, read_shape
from whileai_train.rows.steps import (
    NO_RESULT,
    STEP_CALL,
    STEP_NOT_OBJECT,
    STEP_TEXT,
    STEP_USER,
    final_is_own_turn,
    walk_steps,
)

__all__ = ["CALLED", "HEARD", "MEMO_ENTRIES", "RESULT", "SAID", "AgentParts", "Call", "ReadMemo", "Trajectory",
           "read_trajectory", "text_of"]

HEARD, SAID, CALLED, RESULT = 0, 1, 2, 3


def text_of(value: Any) -> str:
    """A value as text by the message-text rule; a value JSON cannot write (a circular object) as its str()."""
    try:
        return content_text(value)
    except (TypeError, ValueError):
        return str(value)


class Call:
    """One tool call: its name, decoded arguments, its result as given (None while none came back), whether that
    result reports failure (by the reading's failure rule), and where it sits in the row. Calls read under one
    :class:`ReadMemo` whose arguments were written the same share one arguments dict: read it, never change it.
    `written`: the arguments as the row wrote them when that was JSON text (else None), what a check that
    remembers its verdict per distinct call keys it by."""

    __slots__ = ("_failed", "_rule", "_text", "arguments", "name", "raw_result", "where", "written")

    def __init__(self, name: str, arguments: dict[str, Any], where: int | tuple[str, int, int],
                 written: str | None = None) -> None:
        self.name = name
        self.arguments = arguments
        self.written = written
        self.raw_result: Any = None
        self.where = where  # a flat row's step number, or (a field template, its two numbers) in messages
        self._failed = False
        self._rule: FailureRule | None = None  # set when the verdict is left to the first reader that asks
        self._text: str | None = None

    @property
    def failed(self) -> bool:
        """Whether the result reports failure (False while no result came back)."""
        rule = self._rule
        if rule is not None:
            self._rule = None
            self._failed = rule(self.raw_result)
        return self._failed

    @property
    def result(self) -> str | None:
        """The result as text (JSON for a structured result); None when no result came back."""
        if self._text is None and self.raw_result is not None:
            self._text = text_of(self.raw_result)
        return self._text

    @property
    def field(self) -> str:
        """Where the call sits in the row, as an error or a report names it."""
        where = self.where
        if where.__class__ is int:
            return f"steps[{where}]"
        template, first, second = where  # type: ignore[misc]
        return template.format(first, second)  # type: ignore[no-any-return]


class AgentParts(NamedTuple):
    """What the agent did in a row: its texts in order (its turns, then the final reply), its tool calls (name, and
    the arguments as given: a flat row's object as the tuple of its items, messages' as their JSON text), the
    turns of the trajectory and the calls whose result reports failure."""

    texts: list[str]
    calls: list[tuple[str, Any]]
    turns: int
    errors: int


class Trajectory:
    """A row read once: its events, the agent's parts, and the first fault that keeps the events from being read."""

    __slots__ = ("calls", "errors", "events", "problem", "texts", "turns")

    def __init__(self) -> None:
        self.events: list[tuple[int, Any]] = []
        self.texts: list[str] = []
        self.calls: list[tuple[str, Any]] = []
        self.turns = 0
        self.errors = 0
        self.problem: RowError | None = None

    @property
    def parts(self) -> AgentParts:
        """What the agent did (the gates' and tables' reading)."""
        return AgentParts(self.texts, self.calls, self.turns, self.errors)

    def checked_events(self) -> list[tuple[int, Any]]:
        """The events; raises the row's fault when it has one (a check that must read a trajectory)."""
        if self.problem is not None:
            raise self.problem
        return self.events

    def _fault(self, error: RowError) -> None:
        if self.problem is None:
            self.problem = error


# A task's rollouts sit together in a row set and repeat its calls and results: a memo keeps the recent distinct
# texts and is emptied when it holds this many, so what it holds never grows with the rows (held long, a memo the
# size of the rows made the garbage collector walk every row at 100k; bench/gates.py)
MEMO_ENTRIES = 4096


class ReadMemo:
    """What one call's reading of many rows has decoded already: argument texts -> their object, and result texts
    -> failed (under a rule without a user function). Rollouts of one task repeat their calls and tool results, so
    a gate decodes each distinct text once; a memo lives as long as the call that made it."""

    __slots__ = ("arguments", "reading", "verdicts")

    def __init__(self) -> None:
        self.arguments: dict[str, dict[str, Any]] = {}
        self.verdicts: dict[str, bool] = {}
        self.reading: _Reading | None = None  # how its rows are read, made once


class _Reading(NamedTuple):
    """How one row is read: the failure rule, whether events are kept, the memo's tables (None: no memo)."""

    rule: FailureRule
    with_events: bool
    with_parts: bool
    arguments: dict[str, dict[str, Any]] | None
    verdicts: dict[str, bool] | None


class _Unjudged(FailureRule):
    """The rule of a reading that counts no failed call (errors=False): no result is judged."""

    __slots__ = ()

    def __call__(self, result: Any, is_error: bool = False) -> bool:
        return False


_UNJUDGED = _Unjudged()

# the readings without a memo, made once: (rule, events, parts) -> how
_PLAIN = {(rule, events, parts): _Reading(rule, events, parts, None, None)
          for rule in (DEFAULT_FAILURE, _UNJUDGED) for events in (True, False) for parts in (True, False)}


def read_trajectory(row: Any, index: int | None = None, failure: FailureRule = DEFAULT_FAILURE, *,
                    events: bool = True, parts: bool = True, errors: bool = True,
                    memo: ReadMemo | None = None) -> Trajectory:
    """The row's trajectory, read once (see the module docstring); `failure` decides which results failed.

    events=False reads the agent's parts only (no events, no call decoded, no fault kept), parts=False its events
    only (a call's failure decided when a check first asks): the same parts and events, for a check that needs
    nothing else (tests pin each reading to the full one). errors=False (with events=False) judges no result:
    the same parts with no failed call counted, for a check that reads their sizes only. `memo`: one ReadMemo
    for the rows a call reads (each distinct argument and result text decoded once; the same trajectories)."""
    if row.__class__ is not dict and not isinstance(row, Mapping):
        raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
    rule = failure if errors else _UNJUDGED
    if memo is None:
        how = _PLAIN.get((rule, events, parts)) or _Reading(rule, events, parts, None, None)
    else:
        kept = memo.reading
        if kept is not None and kept.rule is rule and kept.with_events is events and kept.with_parts is parts:
            how = kept
        else:
            how = memo.reading = _Reading(rule, events, parts, memo.arguments,
                                          memo.verdicts if failure.function is None and errors else None)
    out = Trajectory()
    messages = row.get("messages")
    if messages is None:
        _read_flat(out, row, index, how)
    elif messages.__class__ is not list:
        out._fault(RowError(index, "messages", f"messages is {type(messages).__name__}, not a list",
                            "write messages as a list of {role, content} objects"))
    else:
        try:
            _read_messages(out, row, messages, index, how, strict=True)
        except _Foreign:  # another tool's chat shape: read as the intake reads it (rows/shapes.py), once
            out = Trajectory()
            shaped = read_shape(row, index)  # a row that shape cannot be read in is refused (a RowError)
            _read_messages(out, shaped, shaped["messages"], index, how, strict=False)
    return out


class _Foreign(Exception):
    """Raised inside the messages walk at what only another tool's shape writes (a legacy function_call, a
    function-role turn, a Responses item, a call or a tool turn without an id): the row is read through
    rows/shapes.py instead. Rows already in the rooms' shape never pay for that check."""


def _read_messages(out: Trajectory, row: Mapping[str, Any], messages: list[Any], index: int | None, how: _Reading,
                   *, strict: bool) -> None:
    system = row.get("system")  # Anthropic's system prompt sits beside its messages
    if system is not None and how.with_events:
        out.events.append((HEARD, text_of(system)))
    _walk_messages(out, messages, index, how, skip_first_user=True, field="messages", strict=strict)


def _no_trajectory(index: int | None) -> RowError:
    return RowError(index, "steps", "row has neither `steps` nor `messages`, so there is no trajectory to read",
                    "keep the trajectory on the row: `steps` (an empty list when the agent made no tool call) "
                    "or OpenAI `messages`")


def _arguments(out: Trajectory, raw: Any, index: int | None, field: str) -> dict[str, Any]:
    """A call's arguments decoded (rows.json_text.tool_arguments); a fault kept, and {} read, when they are not an
    object."""
    try:
        return tool_arguments(raw, index, field)
    except ToolArgumentsError as exc:
        out._fault(exc)
        return {}


def _text_arguments(out: Trajectory, text: str, how: _Reading, index: int | None, where: tuple[str, int, int],
                    suffix: str) -> dict[str, Any]:
    """Arguments written as JSON text, decoded (from the memo when it has them)."""
    memo = how.arguments
    if memo is not None:
        decoded = memo.get(text)
        if decoded is not None:
            return decoded
    try:
        decoded = loads(text) if text else {}
    except ValueError:
        decoded = None
    if decoded.__class__ is not dict:  # not an object: the rule's reading and its fault
        return _arguments(out, text, index, where[0].format(where[1], where[2]) + suffix)
    if memo is not None:
        if len(memo) >= MEMO_ENTRIES:
            memo.clear()
        memo[text] = decoded
    return decoded  # type: ignore[return-value]


def _failed(how: _Reading, result: Any, is_error: bool = False) -> bool:
    """The rule's verdict on a result (a text's from the memo when it has it)."""
    verdicts = how.verdicts
    if verdicts is None or is_error or result.__class__ is not str:
        return how.rule(result, is_error)
    failed = verdicts.get(result)
    if failed is None:
        if len(verdicts) >= MEMO_ENTRIES:
            verdicts.clear()
        failed = verdicts[result] = how.rule(result)
    return failed


def _function_error(index: int | None, field: str, error: FailureFunctionError) -> RowError:
    return RowError(index, field, str(error), "make the failure= function return True, False or None for every "
                                               "tool result")


def _read_flat(out: Trajectory, row: Mapping[str, Any], index: int | None, how: _Reading) -> None:
    events, texts, calls = out.events, out.texts, out.calls
    append = events.append
    rule, with_events, with_parts = how.rule, how.with_events, how.with_parts
    lazy = not with_parts and rule.function is None  # events only: a failure is decided when a check asks
    judged = rule is not _UNJUDGED
    get = row.get
    if with_events:  # what the agent was told: the prompt, then the system prompt
        prompt = get("prompt")
        if prompt.__class__ is str:
            append((HEARD, prompt))
        elif isinstance(prompt, list):  # a conversational prompt (TRL): its system and user turns
            for message in prompt:
                if isinstance(message, Mapping) and message.get("role") in ("system", "user"):
                    append((HEARD, text_of(message.get("content"))))
        elif prompt is not None:
            append((HEARD, text_of(prompt)))
        system = get("system_prompt") or get("system")
        if system.__class__ is str:
            append((HEARD, system))
    steps = get("steps")
    if steps.__class__ is list:
        walked: list[Any] = steps
    else:
        walked = []
        out._fault(_no_trajectory(index) if steps is None else RowError(
            index, "steps", f"steps is {type(steps).__name__}, not a list",
            "write steps as a list of {tool, arguments, result} / {user} / {text} objects"))
    turns = errors = 0
    number = -1
    try:
        for number, kind, step, tool, raw, text, result in walk_steps(walked):
            if kind == STEP_NOT_OBJECT:
                out._fault(RowError(index, f"steps[{number}]", f"step is {type(step).__name__}, not an object",
                                    "write each step as {tool, arguments, result}, {user} or {text}"))
                continue
            turns += 1
            if text:
                said = text if text.__class__ is str else text_of(text)
                if with_parts:
                    texts.append(said)
            if kind == STEP_CALL:
                name = tool if tool.__class__ is str else str(tool)
                if with_parts:
                    calls.append((name, tuple(raw.items()) if raw.__class__ is dict else raw))
                if not with_events:
                    if judged and result is not None and result is not NO_RESULT and (
                            rule(result) if result.__class__ is dict else _failed(how, result)):
                        errors += 1
                    continue
                if text:
                    append((SAID, said))
                call = Call(name, raw if raw.__class__ is dict else _arguments(
                    out, raw, index, f"steps[{number}].arguments"), number, raw if raw.__class__ is str else None)
                append((CALLED, call))
                if result is not NO_RESULT:
                    if result is None:
                        call.raw_result = ""
                    else:
                        call.raw_result = result
                        if lazy:
                            call._rule = rule
                        elif rule(result) if result.__class__ is dict else _failed(how, result):
                            call._failed = True
                            errors += 1
                    append((RESULT, call))
            elif kind == STEP_USER:
                append((HEARD, text_of(tool)))
            elif kind == STEP_TEXT:
                append((SAID, said if text else text_of(text)))
    except FailureFunctionError as error:
        raise _function_error(index, f"steps[{number}].result", error) from error.__cause__
    final = get("final_text")
    if final is None:
        final = get("completion")
    if final.__class__ is str:
        if final_is_own_turn(steps, final):
            if with_events:
                append((SAID, final))
            if with_parts:
                texts.append(final)
            turns += 1
    elif isinstance(final, list):  # a conversational completion (TRL): every message in it is the agent's side
        more = Trajectory()
        _walk_messages(more, final, index, how, skip_first_user=False, field="completion")
        events.extend(event for event in more.events if event[0] == SAID)
        texts.extend(more.texts)
        calls.extend(more.calls)
        turns += more.turns
        errors += more.errors
    elif final is not None:
        out._fault(RowError(index, "final_text", f"final_text is {type(final).__name__}, not text",
                            "write the agent's last reply as a string (or null when it ended on a tool call)"))
    out.turns = turns
    out.errors = errors


def _walk_messages(out: Trajectory, messages: list[Any], index: int | None, how: _Reading, *,
                   skip_first_user: bool, field: str, strict: bool = False) -> None:
    """OpenAI or Anthropic messages into `out`: every message but the system turns and (with `skip_first_user`)
    the first user turn is a turn of the trajectory; a tool result is matched to its call by id, else to the oldest
    call still waiting."""
    events, texts, calls = out.events, out.texts, out.calls
    append = events.append
    rule, with_events, with_parts, memo, verdicts = how
    lazy = not with_parts and rule.function is None  # events only: a failure is decided when a check asks
    pending: dict[str, Call] = {}
    waiting: list[Call] = []
    seen_user = not skip_first_user
    turns = errors = 0
    number = -1
    call_field = field + "[{0}].tool_calls[{1}]"
    try:
        for message in messages:  # hot path: exact types first, field names only on a fault
            number += 1
            if message.__class__ is not dict and not isinstance(message, Mapping):
                out._fault(RowError(index, f"{field}[{number}]", "message is not an object",
                                    "write each message as {role, content}"))
                continue
            get = message.get
            role = get("role")
            content = get("content")
            if content.__class__ is str:
                text, blocks = content, None
            elif content is None:
                text, blocks = "", None
            else:
                blocks = read_content(content)
                text = blocks.text
            if role == "assistant":
                turns += 1
                if text:
                    if with_parts:
                        texts.append(text)
                    if with_events:
                        append((SAID, text))
                tool_calls = get("tool_calls")
                if tool_calls:
                    call_number = -1
                    for raw in tool_calls:
                        call_number += 1
                        function = raw.get("function", raw) if raw.__class__ is dict or isinstance(raw, Mapping) \
                            else None
                        if function.__class__ is not dict and not isinstance(function, Mapping) \
                                or not function.get("name"):
                            out._fault(RowError(index, call_field.format(number, call_number),
                                                "tool call has no function name", "write tool calls as {id, type: "
                                                "function, function: {name, arguments}}"))
                            continue
                        name = function["name"]
                        if name.__class__ is not str:
                            name = str(name)
                        arguments = function.get("arguments")
                        if with_parts:
                            calls.append((name, arguments if arguments.__class__ is str else as_text(arguments)))
                        if not with_events:
                            continue
                        where = (call_field, number, call_number)
                        known = memo.get(arguments) if memo is not None and arguments.__class__ is str else None
                        if known is not None:
                            decoded = known
                        elif arguments.__class__ is str:
                            decoded = _text_arguments(out, arguments, how, index, where, ".function.arguments")
                        else:
                            decoded = _arguments(out, arguments, index,
                                                 call_field.format(number, call_number) + ".function.arguments")
                        call = Call(name, decoded, where, arguments if arguments.__class__ is str else None)
                        call_id = raw.get("id")
                        if not call_id:
                            if strict:
                                raise _Foreign
                            call_id = f"call_{number}_{call_number}"
                        pending[call_id if call_id.__class__ is str else str(call_id)] = call
                        waiting.append(call)
                        append((CALLED, call))
                elif strict and get("function_call") is not None:
                    raise _Foreign
                if blocks is not None and blocks.calls:
                    _tool_use(out, blocks.calls, number, field, index, pending, waiting, how)
            elif role == "tool":
                turns += 1
                if lazy:
                    call_id = get("tool_call_id")
                    if strict and not call_id:
                        raise _Foreign
                    _result(out, text, call_id, None, pending, waiting, rule)
                    continue
                known_verdict = verdicts.get(content) if verdicts is not None and blocks is None and content is not None \
                    else None
                failed = _failed(how, content) if known_verdict is None else known_verdict
                if failed:
                    errors += 1
                if with_events:
                    call_id = get("tool_call_id")
                    if strict and not call_id:
                        raise _Foreign
                    found = pending.pop(call_id, None) if call_id.__class__ is str else None
                    if found is None:  # an id given another way, or none: _result's matching
                        _result(out, text, call_id, failed, pending, waiting)
                    else:  # the common case, as _result reads it
                        found.raw_result = found._text = text
                        found._failed = failed
                        append((RESULT, found))
            elif role == "user":
                results = blocks.results if blocks is not None else ()
                for _, block in results:  # Anthropic: each tool_result is a tool turn of its own
                    turns += 1
                    result = block.get("content")
                    failed = _failed(how, result, bool(block.get("is_error")))
                    if failed:
                        errors += 1
                    if with_events:
                        _result(out, text_of(result), block.get("tool_use_id"), failed, pending, waiting)
                if text or not results:
                    if seen_user:
                        turns += 1
                    if with_events:
                        append((HEARD, text))
                seen_user = True
            elif role == "system":
                if with_events:
                    append((HEARD, text))
            else:
                if strict and (role == "function" or role is None and get("type") in FOREIGN_ITEMS):
                    raise _Foreign
                out._fault(RowError(index, f"{field}[{number}].role", f"role is {role!r}",
                                    "use one of system, user, assistant, tool"))
                turns += 1
    except FailureFunctionError as error:
        raise _function_error(index, f"{field}[{number}].content", error) from error.__cause__
    out.turns += turns
    out.errors += errors


def _tool_use(out: Trajectory, blocks: list[tuple[int, Mapping[str, Any]]], number: int, field: str,
              index: int | None, pending: dict[str, Call], waiting: list[Call], how: _Reading) -> None:
    """Anthropic tool_use blocks as calls: `input` is the arguments object, `id` what its tool_result names."""
    template = field + "[{0}].content[{1}]"
    for position, block in blocks:
        name = block.get("name")
        if not name:
            out._fault(RowError(index, template.format(number, position), "tool_use block has no name",
                                "write tool_use blocks as {type: tool_use, id, name, input}"))
            continue
        name = str(name)
        arguments = block.get("input")
        if how.with_parts:
            out.calls.append((name, as_text(arguments)))
        if not how.with_events:
            continue
        where = (template, number, position)
        call = Call(name, _arguments(out, arguments, index, template.format(number, position) + ".input"), where)
        pending[str(block.get("id"))] = call
        waiting.append(call)
        out.events.append((CALLED, call))


def _result(out: Trajectory, text: str, call_id: Any, failed: bool | None, pending: dict[str, Call],
            waiting: list[Call], rule: FailureRule | None = None) -> None:
    """A tool result: the result of the call it names, else of the oldest call still waiting, else something the
    agent was told (HEARD). `failed` None: left to `rule` when a check asks (the result's text is the rule's)."""
    found = None if call_id is None else pending.pop(call_id if call_id.__class__ is str else str(call_id), None)
    if found is None:
        found = next((call for call in waiting if call.raw_result is None), None)
        if found is None:
            out.events.append((HEARD, text))
            return
    found.raw_result = text
    found._text = text
    if failed is None:
        found._rule = rule
    else:
        found._failed = failed
    out.events.append((RESULT, found))
