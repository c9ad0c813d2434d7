"""The message-text rule: what a message's ``content`` says, in the shapes other tools write it.

* a string (OpenAI chat, TRL, the platform): as it is; None (an assistant turn that only calls tools): "";
* a list of parts or blocks:

  - text parts, read as their text: ``{"type": "text", "text"}`` (OpenAI chat, HF/TRL datasets, Anthropic),
    ``input_text`` / ``output_text`` (OpenAI Responses), ``{"type": "refusal", "refusal"}`` (OpenAI), and a part
    with a ``text`` and no type; a data set's null-filled keys beside them (``"image": None``) change nothing;
  - ``tool_use`` blocks (Anthropic): tool calls, ``input`` their arguments; ``tool_result`` blocks: tool results,
    ``content`` a string or blocks, ``is_error`` their own failure flag. The readers (rows.conversation, the
    trajectory reader) turn them into calls and results; they are not text;
  - any other part (image, image_url, input_image, audio, input_audio, file, document, thinking, ...) is not
    text: a reader of text skips it, an exporter refuses the row (:func:`plain_text`), never a stringified list;

  the texts of a message's text parts are joined with nothing between them, as chat templates render a parts
  list (each part's text written in turn);
* anything else (an object, a number, a list that is not parts): its JSON text (:func:`as_text`), the text a
  structured tool result is written as.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from whileai_train.errors import RowError

__all__ = ["TEXT_PARTS", "Blocks", "as_text", "content_text", "is_parts", "non_text_error", "part_type",
           "plain_text", "read_content"]

# built once: json.dumps(default=) builds one a call
_TEXT_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def as_text(value: Any) -> str:
    """Message content as text: a string as it is, None as "", anything else as its JSON (the rule), as
    ``json.JSONEncoder(ensure_ascii=False, default=str)`` writes it (one encoder, built once)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _TEXT_ENCODER.encode(value)


# part type -> the key its text is under
TEXT_PARTS: dict[str, str] = {"text": "text", "input_text": "text", "output_text": "text", "refusal": "refusal"}


def part_type(part: Any) -> str | None:
    """A part's type: its `type`, "text" for a part with a `text` and no type, None for something not a part."""
    if part.__class__ is not dict and not isinstance(part, Mapping):
        return None
    kind = part.get("type")
    if kind.__class__ is str:
        return kind  # type: ignore[no-any-return]
    return "text" if kind is None and "text" in part else None


def is_parts(value: Any) -> bool:
    """Whether `value` is a list of content parts (each an object with a `type`, or a `text`); an empty list is
    one with no parts (an assistant turn that only calls tools, as some data sets write it)."""
    return value.__class__ is list and all(part_type(part) is not None for part in value)


def _part_text(part: Mapping[str, Any], kind: str) -> str:
    text = part.get(TEXT_PARTS[kind])
    return text if text.__class__ is str else as_text(text)


class Blocks(NamedTuple):
    """A content value read whole: its text, its tool_use and tool_result blocks (each with its position in the
    list), and its parts that are not text (position, type)."""

    text: str
    calls: list[tuple[int, Mapping[str, Any]]]
    results: list[tuple[int, Mapping[str, Any]]]
    other: list[tuple[int, str]]


def read_content(content: Any) -> Blocks:
    """`content` read by the rule: the text, the call and result blocks, the non-text parts."""
    if content.__class__ is str:
        return Blocks(content, [], [], [])
    if content is None:
        return Blocks("", [], [], [])
    if content.__class__ is not list or not is_parts(content):  # an object, a number: its JSON text
        return Blocks(as_text(content), [], [], [])
    texts: list[str] = []
    calls: list[tuple[int, Mapping[str, Any]]] = []
    results: list[tuple[int, Mapping[str, Any]]] = []
    other: list[tuple[int, str]] = []
    for number, part in enumerate(content):
        kind = part_type(part)
        if kind in TEXT_PARTS:
            texts.append(_part_text(part, kind))  # type: ignore[arg-type]
        elif kind == "tool_use":
            calls.append((number, part))
        elif kind == "tool_result":
            results.append((number, part))
        else:
            other.append((number, str(kind)))
    return Blocks(texts[0] if len(texts) == 1 else "".join(texts), calls, results, other)


def content_text(content: Any) -> str:
    """The text of `content` by the rule (non-text parts and call/result blocks skipped)."""
    if content.__class__ is str:
        return content  # type: ignore[no-any-return]
    if content is None:
        return ""
    if content.__class__ is not list:  # an object, a number: its JSON text (only a list holds parts)
        return as_text(content)
    return read_content(content).text


def non_text_error(index: int | None, field: str, number: int, kind: str) -> RowError:
    """The error for a part an export cannot write as text: names the row, the message's field and the part."""
    return RowError(index, f"{field}[{number}]",
                    f"content part {number} is a {kind!r} part, not text: a plain-text export cannot hold it, "
                    "and writing the parts list as its JSON would train the model on that JSON",
                    "drop the non-text parts from the row (or leave the row out of a text-only export); parts of "
                    "type text, input_text and output_text are written as their text")


def plain_text(content: Any, index: int | None, field: str) -> str:
    """`content` as the text an export writes: the rule's text; a non-text part (or a call or result block where
    none belongs) is a RowError naming the row, the field and the part."""
    if content.__class__ is str:
        return content  # type: ignore[no-any-return]
    if content.__class__ is not list:  # an object, a number: its JSON text (only a list holds parts)
        return "" if content is None else as_text(content)
    read = read_content(content)
    if read.other:
        number, kind = read.other[0]
        raise non_text_error(index, field, number, kind)
    blocks = read.calls + read.results
    if blocks:
        number, block = min(blocks, key=lambda item: item[0])
        raise non_text_error(index, field, number, str(block.get("type")))
    return read.text
