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
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any, Literal

from whileai_train.errors import ChatTemplateError, TemplateDropError
from whileai_train.exporters.inspect import trained_spans
from whileai_train.exporters.report import shown_rows

__all__ = ["DROP_CAUSES", "TemplateCheck", "template_name"]

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
_SHOWN = ('"probe_key": "probe_value_7"', '"probe_key":"probe_value_7"')
_ESCAPED = '\\"probe_key\\"'


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


def _training_template(tokenizer: Any, label: str) -> str | None:
    """The template SFTTrainer(assistant_only_loss=True) renders with (None: the tokenizer's own), as trl 1.16's
    SFTTrainer picks it; a typed error with the fixes where trl raises instead."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    if has_generation_markers(tokenizer.chat_template):
        return None
    try:
        return get_training_chat_template(tokenizer)
    except ValueError:
        raise ChatTemplateError(
            f"{label} has no {{% generation %}} markers and trl 1.16 ships no training template for it, so "
            "SFTTrainer(assistant_only_loss=True), which these messages rows need, raises 'The chat template is "
            "not training-compatible'; nothing was written. Fix: set tokenizer.chat_template to a copy with "
            "{% generation %}...{% endgeneration %} around the assistant output; or export with mask_mode='final' "
            "or unroll=True (prompt/completion rows, trained with completion_only_loss, which needs no markers); "
            "or train messages rows with assistant_only_loss=False, which trains every token: the system prompt, "
            "the tool schemas, user turns and tool output") from None


def _shows_once(text: str | None) -> bool:
    return text is not None and any(form in text for form in _SHOWN) and _ESCAPED not in text


def _argument_forms(arguments: Any) -> list[str]:
    if isinstance(arguments, str):
        return [arguments]
    forms = []
    for ascii_only in (False, True):
        forms.append(json.dumps(arguments, ensure_ascii=ascii_only))
        forms.append(json.dumps(arguments, ensure_ascii=ascii_only, separators=(",", ":")))
    return forms


def _mark(index: int, call: int | None = None) -> str:
    return f"[wai:{index}]" if call is None else f"[wai:{index}.{call}]"


def _content_kind(content: Any) -> int:
    return 0 if content is None else 1 if content == "" else 2


# One message as a template rendered it: its text and each call "trained", "untrained" (rendered, not trained) or
# "lost" (not rendered); the text None when the message has none.
_Kept = tuple[str | None, tuple[str, ...]]


class _Survival:
    """What one shape of conversation keeps of each message (a _Kept per message), and whether nothing is trained."""

    __slots__ = ("kept", "nothing_trained")

    def __init__(self, kept: list[_Kept], nothing_trained: bool) -> None:
        self.kept = kept
        self.nothing_trained = nothing_trained


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
        self.stop_token_trained = trained != "assistant_only" or self._stop_token_trained()
        self._survival: dict[tuple[Any, ...], _Survival] = {}

    def _stop_token_trained(self) -> bool:
        from trl.chat_template_utils import is_chat_template_stop_token_trained

        return bool(is_chat_template_stop_token_trained(self.tokenizer, chat_template=self.chat_template))

    def _render(self, messages: list[dict[str, Any]], tools: list[Any] | None, **options: Any) -> str:
        text = self.tokenizer.apply_chat_template(messages, tools=tools, tokenize=False,
                                                  chat_template=self.chat_template, **options)
        return text if isinstance(text, str) else str(text)

    # --- the arguments encoding ---------------------------------------------------------------------------

    def _probe(self, arguments: Any) -> str | None:
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": "probe"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_probe", "type": "function", "function": {"name": "probe_tool", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "call_probe", "name": "probe_tool", "content": "ok"},
            {"role": "assistant", "content": "done"},
        ]
        try:
            return self._render(messages, None)
        except Exception:  # noqa: BLE001 - a template may raise on the encoding it does not take (Qwen3.5 on a string)
            return None

    def probe(self, index: int) -> Literal["dict", "json_string"]:
        """'dict' or 'json_string': the arguments encoding the template renders as one object. Probed once, when
        row `index` is the first to carry a tool call; a template that renders none is an error for that row."""
        if self.encoding is None:
            if _shows_once(self._probe(dict(_PROBE_ARGS))):
                self.encoding = "dict"
            elif _shows_once(self._probe(json.dumps(_PROBE_ARGS))):
                self.encoding = "json_string"
            else:
                raise ChatTemplateError(
                    f"row {index} carries tool calls, and {self.label} renders tool-call arguments neither from a "
                    "dict nor from a JSON string (a probe call's arguments never appeared as one JSON object: it has "
                    "no tool-call support, or no tool role). Fix: use a chat template with tool calls and a tool "
                    "role, or leave out the rows with tool calls (rows without them export with this template)")
        return self.encoding

    # --- rendering, length ----------------------------------------------------------------------------------

    def render(self, messages: list[dict[str, Any]], tools: list[Any] | None, index: int, **options: Any) -> str:
        try:
            return self._render(messages, tools, **options)
        except Exception as exc:
            raise ChatTemplateError(
                f"row {index}: {self.label} cannot render this row ({exc}). Fix: reshape the row into what the "
                "template accepts (one tool call per agent turn for Llama 3.x, alternating user/assistant turns "
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
            out = self.tokenizer.apply_chat_template(skeleton, tools=tools, chat_template=self.chat_template,
                                                     tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
            trained = "\n".join(trained_spans(self.tokenizer, out["input_ids"], out["assistant_masks"]))
        elif self.trained == "completion":
            # the tokens after those the prompt (with its generation prompt) shares, as SFT and DPO cut them
            prompt = self.render(skeleton[:-1], tools, index, add_generation_prompt=True)
            trained = rendered[len(os.path.commonprefix([prompt, rendered])):]
        else:
            trained = rendered

        def state(mark: str) -> str:
            return "trained" if mark in trained else "untrained" if mark in rendered else "lost"

        kept = [(state(_mark(number)) if _content_kind(message.get("content")) == 2 else None,
                 tuple(state(_mark(number, j)) for j in range(len(message.get("tool_calls") or ()))))
                for number, message in enumerate(messages)]
        return _Survival(kept, not trained.strip())

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
        if context_trained:
            self._drop("context_trained", 1)
        if sum(self.drops.values()) != before and (not self.drop_rows or self.drop_rows[-1] != index):
            self.drop_rows.append(index)
        return survival

    def _drop(self, cause: str, count: int) -> None:
        self.drops[cause] = self.drops.get(cause, 0) + count

    def missing_arguments(self, messages: list[dict[str, Any]], text: str, survival: _Survival, first: int) -> int:
        """Calls from message `first` on that the template renders (per `survival`) whose arguments do not appear
        in `text` as one JSON value."""
        missing = 0
        for number in range(first, len(messages)):
            for call, kept in zip(messages[number].get("tool_calls") or (), survival.kept[number][1]):
                if kept != "lost" and not any(form in text for form in _argument_forms(call["function"]["arguments"])):
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
            raise TemplateDropError(
                f"{self.label} would not train what {len(self.drop_rows)} rows hold (rows {shown}): {lost}; nothing "
                "was written. Fix: give one tool call per agent turn and put an agent's words in a turn of their "
                "own where the template drops them, use a template that renders them, or pass validate=False to "
                "train the rows without what the template drops (the report counts it)",
                rows=self.drop_rows, drops=self.drops)
