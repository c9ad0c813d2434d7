"""Check rows against the tokenizer they will train with: the arguments encoding, and the length in tokens.

The right encoding of a tool call's arguments is a property of the chat template (docs/trl_facts.md): Qwen2.5,
Llama 3.1 and gpt-oss render a dict with ``| tojson`` (a JSON string would be quoted twice); DeepSeek-V3's
template wants the string. We render one probe call both ways and keep the one that shows the object once.
"""

from __future__ import annotations

import json
from typing import Any

from whileai_train.errors import ChatTemplateError

__all__ = ["TemplateCheck", "choose_encoding"]

_PROBE_ARGS = {"probe_key": "probe_value_7"}
_SHOWN = ('"probe_key": "probe_value_7"', '"probe_key":"probe_value_7"')
_ESCAPED = '\\"probe_key\\"'


def _render(tokenizer: Any, messages: list[dict[str, Any]], tools: list[Any] | None) -> str:
    text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    return text if isinstance(text, str) else str(text)


def _probe(tokenizer: Any, arguments: Any) -> str | None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "probe"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_probe", "type": "function", "function": {"name": "probe_tool", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call_probe", "name": "probe_tool", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    try:
        return _render(tokenizer, messages, None)
    except Exception:  # noqa: BLE001 - a template may raise on the encoding it does not take (Qwen3.5 on a string)
        return None


def _shows_once(text: str | None) -> bool:
    return text is not None and any(form in text for form in _SHOWN) and _ESCAPED not in text


def choose_encoding(tokenizer: Any) -> str:
    """'dict' or 'json_string': the arguments encoding this tokenizer's chat template renders as one object."""
    if getattr(tokenizer, "chat_template", None) is None:
        raise ChatTemplateError("the tokenizer has no chat_template. Fix: load the instruct/chat tokenizer "
                                "of the model you will train, or set tokenizer.chat_template")
    if _shows_once(_probe(tokenizer, dict(_PROBE_ARGS))):
        return "dict"
    if _shows_once(_probe(tokenizer, json.dumps(_PROBE_ARGS))):
        return "json_string"
    raise ChatTemplateError(
        "the chat template renders tool-call arguments neither from a dict nor from a JSON string "
        "(a probe call's arguments never appeared as one JSON object). Fix: use a chat template with tool-call "
        "support, or export without tokenizer= and check the rendering yourself")


def _argument_forms(arguments: Any) -> list[str]:
    if isinstance(arguments, str):
        return [arguments]
    forms = []
    for ascii_only in (False, True):
        forms.append(json.dumps(arguments, ensure_ascii=ascii_only))
        forms.append(json.dumps(arguments, ensure_ascii=ascii_only, separators=(",", ":")))
    return forms


class TemplateCheck:
    """Renders rows with the tokenizer: counts tokens and finds each call's arguments in the text."""

    def __init__(self, tokenizer: Any, max_length: int | None) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.encoding = choose_encoding(tokenizer)

    def render(self, messages: list[dict[str, Any]], tools: list[Any] | None, index: int) -> str:
        try:
            return _render(self.tokenizer, messages, tools)
        except Exception as exc:
            raise ChatTemplateError(f"row {index}: the chat template failed on this row ({exc}). Fix: check the "
                                    "row's roles and tool calls against what the template accepts") from exc

    def tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def too_long(self, messages: list[dict[str, Any]], tools: list[Any] | None, index: int) -> tuple[bool, str]:
        """(over max_length, the rendered text) for one written sample."""
        text = self.render(messages, tools, index)
        return (self.max_length is not None and self.tokens(text) > self.max_length), text

    def context_fills(self, context: list[dict[str, Any]], tools: list[Any] | None, index: int) -> bool:
        """True when the context before the first trained turn alone reaches max_length tokens."""
        if self.max_length is None or not context:
            return False
        try:
            text = self.tokenizer.apply_chat_template(context, tools=tools, tokenize=False, add_generation_prompt=True)
        except Exception as exc:
            raise ChatTemplateError(f"row {index}: the chat template failed on this row ({exc}). Fix: check the "
                                    "row's roles and tool calls against what the template accepts") from exc
        return self.tokens(str(text)) >= self.max_length

    def missing_arguments(self, messages: list[dict[str, Any]], text: str) -> tuple[int, int]:
        """(calls checked, calls whose arguments do not appear in `text` as one JSON value)."""
        checked = missing = 0
        for message in messages:
            for call in message.get("tool_calls") or ():
                checked += 1
                if not any(form in text for form in _argument_forms(call["function"]["arguments"])):
                    missing += 1
        return checked, missing
