"""Check rows against the chat template that will train them: which template that is, the arguments encoding it
wants, what survives its rendering, and the length in tokens.

The template that renders a row depends on the trainer (docs/trl_facts.md). SFTTrainer with
``assistant_only_loss=True`` renders with the tokenizer's own template when it has ``{% generation %}`` markers, else
with the training template TRL swaps in (``trl.chat_template_utils.get_training_chat_template``, called here so the
choice is TRL's own), and raises for a template it has no training variant of: the export refuses that before
writing anything. Prompt/completion rows (``completion_only_loss``) and DPOTrainer render with the tokenizer's own
template. DeepSeek-V3 is why this matters: its own template concatenates the arguments (it wants a JSON string) while
TRL's training variant applies ``| tojson`` (it wants a dict).

What survives is read off the template, not assumed: each distinct shape of conversation is rendered once with
markers in place of the texts and arguments, and every agent turn's text and calls are looked for in what the
trainer trains (the assistant mask, or the tokens after the prompt). A template that renders one call per turn
(gpt-oss), drops text beside a call (Llama 3.1, gpt-oss, DeepSeek-V3 after its first call turn) or trains context is
counted by cause, and refused unless ``validate=False``.

Templates TRL does not ship are read the same way, by rendering (docs/trl_facts.md,
tests/exporters/test_exporters_template_zoo.py): the tool probe renders a call with the row's own tool schemas, tries the
call id forms templates demand (Mistral's 9 characters) and finds the arguments in every form templates write them
(JSON, ``<parameter=name>`` and ``<arg_key>``/``<arg_value>`` pairs, Python calls); the round trip reads the same
forms. A template that cannot train messages rows (no ``{% generation %}`` block, no TRL variant) gets
prompt/completion rows, one per agent turn, from the exporter (``assistant_only_refusal``). An exception raised by
a template or by TRL's helpers on it becomes a ChatTemplateError naming the template, the cause found and the fix.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from functools import cache
from typing import Any, Literal

from whileai_train.errors import ChatTemplateError, TemplateDropError
from whileai_train.exporters.inspect import trained_spans
from whileai_train.exporters.report import shown_rows
from whileai_train.exporters.shape import encode_messages

__all__ = ["DROP_CAUSES", "TemplateCheck", "assistant_only_refusal", "template_name"]

Trained = Literal["assistant_only", "completion", "whole"]

# What a template can lose of a row, by cause: the report's `template_drops` keys and how they read.
DROP_CAUSES = {
    "calls_after_first": "tool calls lost: the template renders one call per turn",
    "text_beside_call": "agent texts lost: the template drops text beside a tool call",
    "tool_calls": "tool calls lost: the template does not render them",
    "agent_text": "agent texts lost: the template does not render them",
    "untrained": "agent texts or calls rendered outside what the trainer trains",
    "context_trained": "samples whose user, system or tool text the trainer would train",
}

_PROBE_ARGS = {"probe_key": "probe_value_7"}
_ESCAPED = '\\"probe_key\\"'
# The probe renders a call to a tool with a full schema (description, properties, required): templates read
# different fields of it (Command R+ reads `required`), and some loop over the tools (Hermes 3 raises on None).
_PROBE_TOOL = {"type": "function", "function": {
    "name": "probe_tool", "description": "Probe the chat template.",
    "parameters": {"type": "object", "properties": {"probe_key": {"type": "string", "description": "A probe value."}},
                   "required": ["probe_key"]}}}
# The tool-call id forms templates demand, tried in this order by rendering: the first one the template renders a call
# with is the form the rows are written in. Ids like OpenAI's (kept as the rows carry them), then 9 alphanumerics
# (Mistral Nemo, Small 3.x: "Tool call IDs should be alphanumeric strings with length 9!").
_ID_FORMS: tuple[tuple[str | None, Callable[[int], str] | None], ...] = (
    (None, None),
    ("9 alphanumerics", lambda number: f"call{number:05d}"),
)


def _value_texts(value: Any) -> list[str]:
    """The texts a template may write one argument value as: JSON, or as it is (XML-style forms), or Python's."""
    texts = [json.dumps(value, ensure_ascii=False), json.dumps(value)]
    if isinstance(value, str):
        texts.append(value)
        texts.append(repr(value))
    else:
        texts.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        texts.append(str(value))  # `| string` of a Python value: True, None, [1, 2]
    return list(dict.fromkeys(texts))


def _alternatives(value: Any) -> str:
    return "(?:" + "|".join(re.escape(text) for text in _value_texts(value)) + ")"


# Each form a template writes an argument object in, as a pattern of its (key, value) pairs in order:
# JSON with any spacing (Command R+ indents it), `<parameter=key>value</parameter>` (Qwen3-Coder),
# `<arg_key>key</arg_key><arg_value>value</arg_value>` (GLM-4.5/4.6/4.7, Laguna), `key="value"` (Python calls).
_FORMS: tuple[tuple[str, Callable[[str, str], str], str, str, str], ...] = (
    ("JSON object", lambda key, value: re.escape(json.dumps(key)) + r"\s*:\s*" + value, r"\{\s*", r"\s*,\s*", r"\s*\}"),
    ("<parameter=name>value</parameter> pairs",
     lambda key, value: "<parameter=" + re.escape(key) + r">\s*" + value + r"\s*</parameter>", "", r"\s*", ""),
    ("<arg_key>/<arg_value> pairs",
     lambda key, value: "<arg_key>" + re.escape(key) + r"</arg_key>\s*<arg_value>\s*" + value + r"\s*</arg_value>",
     "", r"\s*", ""),
    ("Python call", lambda key, value: r"\b" + re.escape(key) + r"\s*=\s*" + value, r"\(\s*", r"\s*,\s*", r"\s*\)"),
)


def _argument_form(text: str, arguments: Any) -> str | None:
    """The form (a _FORMS name) in which `text` holds these arguments, or None. A JSON string is looked for as it is
    (a template that concatenates it), then as the object it encodes."""
    if isinstance(arguments, str):
        if arguments in text:
            return "JSON object"
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    for form in _argument_forms(arguments):  # the fast path: the JSON texts json.dumps writes
        if form in text:
            return "JSON object"
    if not isinstance(arguments, dict) or not arguments:
        return None
    for name, pair, start, between, end in _FORMS:
        pattern = start + between.join(pair(str(key), _alternatives(value)) for key, value in arguments.items()) + end
        if re.search(pattern, text):
            return name
    return None


@cache
def _shipped_templates() -> dict[str, str]:
    """The chat templates trl ships (trl/chat_templates/*.jinja), text -> name."""
    from importlib import resources

    folder = resources.files("trl").joinpath("chat_templates")
    return {entry.read_text(encoding="utf-8"): entry.name.removesuffix(".jinja")
            for entry in folder.iterdir() if entry.name.endswith(".jinja")}


def template_name(template: Any) -> str | None:
    """The name trl gives a chat template (its file in trl/chat_templates/, e.g. 'qwen2_5'), or None."""
    if isinstance(template, dict):
        template = template.get("default")
    return _shipped_templates().get(template) if isinstance(template, str) else None


def _label(name: str | None) -> str:
    return f"the {name} chat template" if name else "the tokenizer's chat template (not one trl ships)"


def _cause(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _trl_training_template(tokenizer: Any) -> tuple[str | None, str | None]:
    """(the template SFTTrainer(assistant_only_loss=True) renders with, None: the tokenizer's own; why it cannot
    train messages rows, None: it can), as trl 1.16 decides it: the template has {% generation %} markers, or trl
    ships a training variant of it. An exception from trl's helper (Hermes 3: it renders without tools and the
    template loops over tools=None) is a cause, not a crash."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    if has_generation_markers(tokenizer.chat_template):
        return None, None
    try:
        return get_training_chat_template(tokenizer), None
    except ValueError:
        return None, "it has no {% generation %} block and trl 1.16 ships no training template for it"
    except Exception as exc:  # noqa: BLE001 - the template, run by trl's helper, may raise anything
        return None, (f"it has no {{% generation %}} block, and trl's get_training_chat_template fails on it "
                      f"({_cause(exc)})")


def assistant_only_refusal(tokenizer: Any) -> str | None:
    """Why SFTTrainer(assistant_only_loss=True) cannot train messages rows with this tokenizer's template (None: it
    can); the exporter then writes prompt/completion rows (training.py)."""
    return _trl_training_template(tokenizer)[1]


def _training_template(tokenizer: Any, label: str) -> str | None:
    """The template SFTTrainer(assistant_only_loss=True) renders with (None: the tokenizer's own), as trl 1.16's
    SFTTrainer picks it; a typed error with the fixes where trl raises instead."""
    template, cause = _trl_training_template(tokenizer)
    if cause is not None:
        raise ChatTemplateError(
            f"{label} cannot train messages rows with SFTTrainer(assistant_only_loss=True): {cause}; nothing was "
            "written. Fix: set tokenizer.chat_template to a copy with {% generation %}...{% endgeneration %} around "
            "the assistant output; or export with mask_mode='final' or unroll=True (prompt/completion rows, trained "
            "with completion_only_loss, which needs no markers); or train messages rows with "
            "assistant_only_loss=False, which trains every token: the system prompt, the tool schemas, user turns "
            "and tool output")
    return template


def _argument_forms(arguments: Any) -> list[str]:
    if isinstance(arguments, str):
        return [arguments]
    forms = []
    for ascii_only in (False, True):
        forms.append(json.dumps(arguments, ensure_ascii=ascii_only))
        forms.append(json.dumps(arguments, ensure_ascii=ascii_only, separators=(",", ":")))
    return forms


_MARK = re.compile(r"\[wai:\d+(?:\.\d+)?\]")
_TAG = re.compile(r"</?[^<>\s]{1,40}>")
_PROSE = re.compile(r"[A-Za-z]{2,}\W{1,3}[A-Za-z]{2,}\W{1,3}[A-Za-z]{2,}")


def _mark(index: int, call: int | None = None) -> str:
    return f"[wai:{index}]" if call is None else f"[wai:{index}.{call}]"


def _content_kind(content: Any) -> int:
    return 0 if content is None else 1 if content == "" else 2


# One message as a template rendered it: its text and each call "trained", "untrained" (rendered, not trained) or
# "lost" (not rendered); the text None when the message has none.
_Kept = tuple[str | None, tuple[str, ...]]


class _Survival:
    """What one shape of conversation keeps of each message (a _Kept per message), and whether nothing is trained."""

    __slots__ = ("kept", "nothing_trained", "trailing")

    def __init__(self, kept: list[_Kept], nothing_trained: bool, trailing: bool = False) -> None:
        self.kept = kept
        self.nothing_trained = nothing_trained
        self.trailing = trailing  # the template's own prose trained after the last agent turn (Command R+)


class TemplateCheck:
    """Renders rows with the template that will train them: the encoding, what survives, the length in tokens.

    `trained` says which trainer reads the rows: "assistant_only" (SFT messages rows, assistant_only_loss=True),
    "completion" (SFT prompt/completion rows and DPO: the last message is what is trained), "whole" (OpenAI rows:
    no trainer known, every agent turn must survive the tokenizer's own template).
    """

    def __init__(self, tokenizer: Any, max_length: int | None, trained: Trained) -> None:
        if getattr(tokenizer, "chat_template", None) is None:
            raise ChatTemplateError("the tokenizer has no chat_template. Fix: load the instruct/chat tokenizer "
                                    "of the model you will train, or set tokenizer.chat_template")
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.trained = trained
        own = template_name(tokenizer.chat_template)
        self.chat_template = _training_template(tokenizer, _label(own)) if trained == "assistant_only" else None
        self.name = own if self.chat_template is None else template_name(self.chat_template)
        self.label = _label(self.name)
        self.encoding: Literal["dict", "json_string"] | None = None  # set by probe(), at the first row with calls
        self.drops: dict[str, int] = {}
        self.drop_rows: list[int] = []
        # set by probe(): the form of call ids the template demands, when not the rows' own (Mistral: 9 alphanumerics)
        self.id_form: str | None = None
        self._call_id: Callable[[int], str] | None = None
        self.argument_form: str | None = None  # set by probe(): how the template writes an argument object
        # set by the exporter when it chose prompt/completion rows for a template TRL cannot train messages rows with
        self.chosen: str | None = None
        self._specials: list[str] | None = None  # the tokenizer's special tokens, longest first (_prose_after)
        self.stop_token_trained = trained != "assistant_only" or self._stop_token_trained()
        self._survival: dict[tuple[Any, ...], _Survival] = {}

    def _stop_token_trained(self) -> bool:
        from trl.chat_template_utils import is_chat_template_stop_token_trained

        try:
            return bool(is_chat_template_stop_token_trained(self.tokenizer, chat_template=self.chat_template))
        except Exception:  # noqa: BLE001 - trl's check renders the template, which may raise anything: not trained
            return False

    def _render(self, messages: list[dict[str, Any]], tools: list[Any] | None, **options: Any) -> str:
        text = self.tokenizer.apply_chat_template(messages, tools=tools, tokenize=False,
                                                  chat_template=self.chat_template, **options)
        return text if isinstance(text, str) else str(text)

    # --- the call ids ---------------------------------------------------------------------------------------

    def encode(self, messages: list[dict[str, Any]], encoding: str | None = None) -> list[dict[str, Any]]:
        """Messages as the template renders them: arguments in `encoding` (default: the probed one), call ids in the
        form it demands (copies only what it changes)."""
        return self.recall(encode_messages(messages, encoding or self.encoding or "dict"))

    def recall(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages with each tool-call id (and each tool result's tool_call_id) rewritten to the form the template
        demands, numbered in order of appearance within the conversation; unchanged when the rows' own ids render."""
        make = self._call_id
        if make is None:
            return messages
        ids: dict[Any, str] = {}
        result = []
        for message in messages:
            calls = message.get("tool_calls")
            if calls:
                message = dict(message)
                message["tool_calls"] = [{**call, "id": ids.setdefault(call.get("id"), make(len(ids)))}
                                         for call in calls]
            elif message.get("role") == "tool" and "tool_call_id" in message:
                message = dict(message)
                message["tool_call_id"] = ids.setdefault(message["tool_call_id"], make(len(ids)))
            result.append(message)
        return result

    # --- the arguments encoding ---------------------------------------------------------------------------

    @staticmethod
    def _probe_messages(call_id: str, arguments: Any) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": "probe"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "probe_tool", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": call_id, "name": "probe_tool", "content": "ok"},
            {"role": "assistant", "content": "done"},
        ]

    def probe(self, index: int, tools: list[Any] | None = None) -> Literal["dict", "json_string"]:
        """'dict' or 'json_string': the arguments encoding the template renders as one argument object, in any form
        it writes one (JSON, <parameter=...> or <arg_key> pairs, a Python call), with call ids in the form it demands
        (tried by rendering, _ID_FORMS). Probed once, when row `index` is the first to carry a tool call, with that
        row's tool schemas (`tools`; else a full probe schema); a template that renders none is a typed error naming
        the cause found and the fix."""
        if self.encoding is None:
            self.encoding = self._find_encoding(index, tools)
        return self.encoding

    def _find_encoding(self, index: int, tools: list[Any] | None) -> Literal["dict", "json_string"]:
        schemas = tools or [_PROBE_TOOL]
        failures: list[BaseException] = []
        rendered = escaped = False
        for id_form, make in _ID_FORMS:
            call_id = "call_probe" if make is None else make(0)
            for encoding, arguments in (("dict", dict(_PROBE_ARGS)), ("json_string", json.dumps(_PROBE_ARGS))):
                try:
                    text = self._render(self._probe_messages(call_id, arguments), schemas)
                except Exception as exc:  # noqa: BLE001 - a template raises on what it does not take
                    failures.append(exc)
                    continue
                rendered = True
                if _ESCAPED in text:
                    escaped = True
                    continue
                form = _argument_form(text, _PROBE_ARGS)
                if form is not None:
                    self.id_form, self._call_id, self.argument_form = id_form, make, form
                    return encoding  # type: ignore[return-value]
        if not rendered and tools:
            try:  # the rows' schemas, or any? the same call with a full schema tells
                self._render(self._probe_messages("call_probe", dict(_PROBE_ARGS)), [_PROBE_TOOL])
            except Exception:  # noqa: BLE001
                pass
            else:
                raise ChatTemplateError(
                    f"row {index} carries tool calls, and {self.label} raises on the tool schemas given "
                    f"({_cause(failures[0])}) while it renders a call with a full schema (name, description, "
                    "parameters with properties, each with a description, and required). Fix: give each tool schema "
                    "the fields the template reads (read its tools loop), or use a template that renders your schemas")
        if not rendered:
            cause = f"it raises on every tool call it is given ({_cause(failures[-1])}), whatever the arguments "\
                    "encoding (a dict, a JSON string) and the call id form (OpenAI's, 9 alphanumerics)"
        elif escaped:
            cause = "it writes the arguments encoded twice (a JSON string inside JSON) from a dict and from a string"
        else:
            cause = ("it renders a tool call without its arguments in any form (JSON, <parameter=...> or <arg_key> "
                     "pairs, a Python call): it has no tool-call support, or no tool role")
        raise ChatTemplateError(
            f"row {index} carries tool calls, and {self.label} cannot train them: {cause}. Fix: use the chat "
            "template of a model that calls tools, or leave out the rows with tool calls (rows without them export "
            "with this template)")

    # --- rendering, length ----------------------------------------------------------------------------------

    def render(self, messages: list[dict[str, Any]], tools: list[Any] | None, index: int, **options: Any) -> str:
        try:
            return self._render(messages, tools, **options)
        except Exception as exc:
            if tools is None:
                try:
                    self._render(messages, [_PROBE_TOOL], **options)
                except Exception:  # noqa: BLE001
                    pass
                else:
                    raise ChatTemplateError(
                        f"row {index}: {self.label} renders a conversation only with tool schemas ({_cause(exc)}: it "
                        "loops over the tools). Fix: pass tools= to the export, or give each row its tools") from exc
            raise ChatTemplateError(
                f"row {index}: {self.label} cannot render this row ({exc}). Fix: reshape the row into what "
                "the template accepts (one tool call per agent turn for Llama 3.x, alternating user/assistant turns "
                "for Gemma), leave it out, or use a template that accepts it") from exc

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
        return self.tokens(self.render(context, tools, index, add_generation_prompt=True)) >= self.max_length

    # --- what survives ------------------------------------------------------------------------------------

    def survives(self, messages: list[dict[str, Any]], tools: list[Any] | None, index: int) -> _Survival:
        """What the template keeps of one sample's conversation (rendered once per shape of conversation)."""
        key = (tools is None, *((m["role"], _content_kind(m.get("content")), len(m.get("tool_calls") or ()),
                                 tuple(m)) for m in messages))
        found = self._survival.get(key)
        if found is None:
            found = self._survival[key] = self._survival_of(messages, tools, index)
        return found

    def _survival_of(self, messages: list[dict[str, Any]], tools: list[Any] | None, index: int) -> _Survival:
        skeleton: list[dict[str, Any]] = []
        for number, message in enumerate(messages):
            marked = dict(message)
            if _content_kind(message.get("content")) == 2:
                marked["content"] = _mark(number)
            calls = message.get("tool_calls")
            if calls:
                marked["tool_calls"] = [
                    {**call, "function": {**call["function"], "arguments": self._arguments(_mark(number, j))}}
                    for j, call in enumerate(calls)]
            skeleton.append(marked)
        rendered = self.render(skeleton, tools, index)
        if self.trained == "assistant_only":
            try:
                out = self.tokenizer.apply_chat_template(skeleton, tools=tools, chat_template=self.chat_template,
                                                         tokenize=True, return_dict=True,
                                                         return_assistant_tokens_mask=True)
            except Exception as exc:
                raise ChatTemplateError(
                    f"row {index}: {self.label} renders this row but its assistant mask cannot be read "
                    f"({_cause(exc)}), so SFTTrainer(assistant_only_loss=True) would fail on it. Fix: export with "
                    "unroll=True (prompt/completion rows, which need no assistant mask), or use a template whose "
                    "{% generation %} block renders") from exc
            trained = "\n".join(trained_spans(self.tokenizer, out["input_ids"], out["assistant_masks"]))
        elif self.trained == "completion":
            # the tokens after those the prompt (with its generation prompt) shares, as SFT and DPO cut them
            prompt = self.render(skeleton[:-1], tools, index, add_generation_prompt=True)
            cut = len(os.path.commonprefix([prompt, rendered]))
            start = rendered.rfind("[wai:", 0, cut)  # a cut inside a mark: the texts differ from that message on
            if start != -1 and rendered.find("]", start) >= cut:
                cut = start
            trained = rendered[cut:]
        else:
            trained = rendered

        def state(mark: str) -> str:
            return "trained" if mark in trained else "untrained" if mark in rendered else "lost"

        kept = [(state(_mark(number)) if _content_kind(message.get("content")) == 2 else None,
                 tuple(state(_mark(number, j)) for j in range(len(message.get("tool_calls") or ()))))
                for number, message in enumerate(messages)]
        return _Survival(kept, not trained.strip(), self.trained == "completion" and self._prose_after(trained))

    def _prose_after(self, trained: str) -> bool:
        """True when the trained text goes on, after the last agent mark, with words of the template's own (Command
        R+ appends a system instruction after every conversation): three words in a row, once special tokens and
        tags are taken out (an end of turn, a closing tag or a call id is not prose)."""
        marks = list(_MARK.finditer(trained))
        if not marks:
            return False
        tail = trained[marks[-1].end():]
        for token in self._special_tokens():
            tail = tail.replace(token, " ")
        return _PROSE.search(_TAG.sub(" ", tail)) is not None

    def _special_tokens(self) -> list[str]:
        tokens = self._specials
        if tokens is None:
            tokens = self._specials = sorted(map(str, getattr(self.tokenizer, "all_special_tokens", ()) or ()),
                                             key=len, reverse=True)
        return tokens

    def _arguments(self, mark: str) -> Any:
        arguments = {"wai": mark}
        return json.dumps(arguments) if self.encoding == "json_string" else arguments

    def count_drops(self, messages: list[dict[str, Any]], tools: list[Any] | None, index: int,
                    first: int) -> _Survival:
        """Count by cause (DROP_CAUSES) what the template loses of one sample's agent turns from `first` on (the
        turns it trains), and context it would train; a typed error when the trainer would train nothing of the
        sample (SFT then refuses the whole set). Returns the sample's survival (for missing_arguments)."""
        survival = self.survives(messages, tools, index)
        if survival.nothing_trained and self.trained == "assistant_only":
            raise ChatTemplateError(
                f"row {index}: {self.label} leaves no token of this row's agent turns inside its {{% generation %}} "
                "block, and SFTTrainer(assistant_only_loss=True) refuses a whole set with such a row. Fix: leave the "
                "row out, or use a template that renders its agent turns")
        before = sum(self.drops.values())
        context_trained = False
        for number, (text, calls) in enumerate(survival.kept):
            if number < first or messages[number]["role"] != "assistant":
                context_trained = context_trained or (text == "trained" and self.trained != "whole")
                continue
            lost = calls.count("lost")
            if lost:
                self._drop("calls_after_first" if len(calls) > 1 and calls[0] != "lost" else "tool_calls", lost)
            if text == "lost":
                self._drop("text_beside_call" if calls else "agent_text", 1)
            untrained = calls.count("untrained") + (text == "untrained")
            if untrained:
                self._drop("untrained", untrained)
        if context_trained or survival.trailing:
            self._drop("context_trained", 1)
        if sum(self.drops.values()) != before and (not self.drop_rows or self.drop_rows[-1] != index):
            self.drop_rows.append(index)
        return survival

    def _drop(self, cause: str, count: int) -> None:
        self.drops[cause] = self.drops.get(cause, 0) + count

    def missing_arguments(self, messages: list[dict[str, Any]], text: str, survival: _Survival, first: int) -> int:
        """Calls from message `first` on that the template renders (per `survival`) whose arguments do not appear
        in `text` as one argument object, in any form a template writes one (_FORMS)."""
        missing = 0
        for number in range(first, len(messages)):
            for call, kept in zip(messages[number].get("tool_calls") or (), survival.kept[number][1]):
                if kept != "lost" and _argument_form(text, call["function"]["arguments"]) is None:
                    missing += 1
        return missing

    # --- the report -----------------------------------------------------------------------------------------

    def warnings(self, validate: bool) -> list[str]:
        """The report's lines about the template: what it drops (written anyway: validate=False), an untrained stop."""
        lines = []
        if self.drops and not validate:
            lost = "; ".join(f"{count} {DROP_CAUSES[cause]}" for cause, count in self.drops.items())
            lines.append(f"{self.label} loses part of {len(self.drop_rows)} rows, written anyway (validate=False): "
                         f"{lost}")
        if not self.stop_token_trained:
            lines.append(f"{self.label} leaves the end-of-turn token out of the assistant mask: the model may not "
                         "learn to stop (trl warns too). Fix: put the end-of-turn token inside {% generation %}")
        return lines

    def refuse_drops(self, validate: bool) -> None:
        """Raise TemplateDropError (nothing written) when the template loses part of a row, unless validate=False."""
        if self.drops and validate:
            lost = "; ".join(f"{count} {DROP_CAUSES[cause]}" for cause, count in self.drops.items())
            shown = shown_rows(self.drop_rows)
            chosen = (f" ({self.chosen}; the export chose prompt/completion rows, one per agent turn, and they too "
                      "lose part of the rows)" if self.chosen else "")
            marks = (" or mark the template: a copy with {% generation %}...{% endgeneration %} around the assistant "
                     "output trains messages rows with assistant_only_loss=True;" if self.chosen else "")
            raise TemplateDropError(
                f"{self.label} would not train what {len(self.drop_rows)} rows hold (rows {shown}): {lost}{chosen}; "
                "nothing was written. Fix: give one tool call per agent turn and put an agent's words in a turn of "
                f"their own where the template drops them, use a template that renders them;{marks} or pass "
                "validate=False to train the rows without what the template drops (the report counts it)",
                rows=self.drop_rows, drops=self.drops)
