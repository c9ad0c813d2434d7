"""The one rule for a tool result that reports failure, and its vocabulary (docs/tool_failures.md).

Tools say "it failed" in many ways; a result is failed when it says so in any of these:

* an object (a dict, or text holding one JSON object) with a truthy ``error``, a non-empty ``errors`` (GraphQL),
  ``ok`` or ``success`` false, ``is_error`` / ``isError`` true (Anthropic's tool_result, MCP's CallToolResult),
  ``failed`` true, a non-zero exit code (``exit_code``, ``exitCode``, ``returncode``, ``exit_status``), an HTTP
  status 400-599 under a code key (``status``, ``status_code``, ``statusCode``, ``http_status``, ``code``, ...),
  or a status word under a status key (``status``, ``state``, ``outcome``, ``result``, ``code``, ``error_code``);
* text that opens with such a status: ``404 Not Found``, ``HTTP/1.1 503 Service Unavailable``, ``Error: ...``,
  ``PermissionDenied: ...``, ``NotFoundError: ...``, ``ValueError: ...``, ``Traceback``, ``fatal: ...``, or that
  quotes a JSON error field (``"error":``, ``"ok": false``); a Python dict's text (what trl's tool loop writes
  for a tool's dict result, ``str(result)``) is read as the object it holds;
* a tool_result block marked ``is_error`` (the reader passes it beside the result).

A status word is one of FAILURE_WORDS in any case, its parts joined by ``_``, ``-``, a space or nothing
(``not_found``, ``NotFound``, ``not-found``, ``NOT FOUND``). A user's own convention joins through ``failure=``
(:func:`failure_rule`): extra words, or a function of the result that answers True, False or None (no opinion:
the rule decides).

:func:`result_failed` is the rule; :class:`FailureRule` is how every reader applies it: the same verdict, with a
cheap test first (an object's text holding none of the keys the rule reads, no `false` and no escape cannot be
failed, so it is never parsed) and a result's JSON parsed once, only when it can change the answer. A property test
pins the two equal.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from whileai_train.errors import ConfigError
from whileai_train.rows.content import content_text, is_parts
from whileai_train.rows.json_text import loads

__all__ = ["DEFAULT_FAILURE", "FAILURE_WORDS", "FailureFunctionError", "FailureRule", "failure_rule", "result_failed", "tool_failed"]

# Status words that mean a call failed, parts separated by "_". Sources: the HTTP reason phrases of 4xx and 5xx
# (RFC 9110, section 15), the gRPC status codes that are errors (grpc.io, "Status codes and their use in gRPC"),
# and the words tool and agent frameworks write in a result's status (error / failed / failure / timeout /
# rate_limited). Not here: words that are a success for some tool (cancelled is what cancel_order answers,
# unknown and pending are not failures).
FAILURE_WORDS: tuple[str, ...] = (
    "error", "errored", "failed", "failure", "fail", "fatal", "exception", "crashed",
    "not_found", "no_such_file", "permission_denied", "access_denied", "denied", "forbidden",
    "unauthorized", "unauthorised", "unauthenticated", "payment_required",
    "timeout", "time_out", "timed_out", "request_timeout", "gateway_timeout", "deadline_exceeded",
    "rate_limited", "rate_limit_exceeded", "too_many_requests", "throttled", "quota_exceeded",
    "resource_exhausted", "unavailable", "service_unavailable", "bad_gateway", "conflict", "already_exists",
    "gone", "invalid", "invalid_request", "invalid_argument", "invalid_input", "bad_request",
    "unprocessable_entity", "unprocessable_content", "precondition_failed", "failed_precondition",
    "not_allowed", "method_not_allowed", "not_acceptable", "not_implemented", "unimplemented", "internal_error",
    "internal_server_error", "data_loss", "out_of_range", "rejected", "declined", "aborted",
)

# Words that open a failed text result whatever follows them ("Failed to connect", "Error 12"); any other status
# word opens one only as a status (followed by ":", "]", "!", " -", a line break or the end: "Not found: A1",
# "PermissionDenied"), so a file that starts "timeout = 30" is not a failure.
_OPENERS = ("error", "errored", "failed", "failure", "fail", "fatal", "exception", "traceback", "panic", "timed_out")

_SET_KEYS = ("error", "errors")  # failed when truthy
_FALSE_KEYS = ("ok", "success")  # failed when false
_TRUE_KEYS = ("is_error", "isError", "failed")  # failed when true
_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "exit_status")
_CODE_KEYS = ("status", "status_code", "statusCode", "http_status", "httpStatus", "http_code", "response_code",
              "code")
_STATUS_KEYS = ("status", "state", "outcome", "result", "code", "error_code", "errorCode")
_VERDICT_KEYS = frozenset(_SET_KEYS + _FALSE_KEYS + _TRUE_KEYS + _EXIT_KEYS + _CODE_KEYS + _STATUS_KEYS)
_SET, _FALSE, _TRUE, _EXIT, _CODE, _STATUS = 1, 2, 4, 8, 16, 32
# key -> how the object rule reads it (a key can be read two ways: `status` as a code and as a word)
_READS = {key: sum(bit for bit, keys in ((_SET, _SET_KEYS), (_FALSE, _FALSE_KEYS), (_TRUE, _TRUE_KEYS),
                                        (_EXIT, _EXIT_KEYS), (_CODE, _CODE_KEYS), (_STATUS, _STATUS_KEYS))
                   if key in keys) for key in _VERDICT_KEYS}
_HEAD_CHARS = 200  # a text result's opening, where a status would be
_LITERAL_CHARS = 100_000  # the longest Python dict text read as an object (a tool result's size, not a file's)


# Every way the object rule can find a failure needs one of its keys, spelled as the rule reads them (error, errors,
# is_error, isError, error_code, errorCode; failed; exit_code, exitCode, exit_status; returncode, code, status_code,
# http_code, response_code; status, statusCode, http_status, httpStatus; state; outcome; result), or `false` (ok or
# success false); an escape can spell any of them in other characters. A text holding none of these pieces cannot
# be a failed object, whatever it holds, so it is not parsed.
_PIECES = ("rror", "fail", "false", "exit", "code", "tatus", "state", "outcome", "result", "\\")


def _may_fail(text: str) -> bool:
    """Whether the object `text` holds can be failed: one of its pieces is in it (the cheap test)."""
    for piece in _PIECES:
        if piece in text:
            return True
    return False


def _parts(words: Iterable[str]) -> list[list[str]]:
    """Each word's parts, lower case (split at `_`, `-` and spaces), longest word first (an alternation is greedy)."""
    split = {tuple(re.split(r"[\s_-]+", word.strip().lower())) for word in words if word.strip()}
    return [list(parts) for parts in sorted(split, key=lambda parts: len("".join(parts)), reverse=True)]


def _words_pattern(words: Iterable[str]) -> str:
    """A regex of the words, each with `_`, `-`, a space or nothing between its parts."""
    return "|".join(r"[\s_-]?".join(map(re.escape, parts)) for parts in _parts(words))


def _forms(words: Iterable[str]) -> frozenset[str]:
    """Every way a status value spells the words, lower case: parts joined by `_`, `-`, a space or nothing."""
    return frozenset(joint.join(parts) for parts in _parts(words) for joint in ("_", "-", " ", ""))


def _python_object(text: str) -> Any:
    """The object a Python dict's text holds, or None: trl's tool loop hands a tool's dict result to the model as
    str(result) (``{'status': 'not_found'}``), which is not JSON. Read as a literal only (ast.literal_eval: no
    name is looked up, nothing runs), and only up to _LITERAL_CHARS."""
    if len(text) > _LITERAL_CHARS:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


class FailureFunctionError(Exception):
    """A user's failure= function raised; the reader that called the rule names the row and the result."""


class FailureRule:
    """The failure rule as every reader applies it: `rule(result, is_error=False) -> bool`.

    The default vocabulary (FAILURE_WORDS), plus `words`; `function(result)` asked first when given (True or
    False decides, None leaves it to the words). Built once per call by :func:`failure_rule`.
    """

    __slots__ = ("_head", "_status", "function", "words")

    def __init__(self, words: Iterable[str] = (), function: Callable[[Any], bool | None] | None = None) -> None:
        self.words = tuple(FAILURE_WORDS) + tuple(words)
        self.function = function
        vocabulary = _words_pattern(self.words)
        self._status = _forms(self.words)
        self._head = re.compile(
            r"\s*(?:\[|\*\*|<)?\s*(?:"
            r"(?:HTTP/\d(?:\.\d)?\s+[45]\d\d(?!\d))"  # a status line
            rf"|(?:[45]\d\d(?!\d)(?:\s*$|[\s:,.-]+(?:{vocabulary})))"  # 404 Not Found, 500: internal error
            rf"|(?:(?:{_words_pattern(_OPENERS)})(?![a-z0-9]))"  # Error ..., Failed to ..., Traceback
            # any other status word, as a status: NotFound, not found: ..., PermissionDenied: ..., NotFoundError
            rf"|(?:(?:{vocabulary})(?:[\s_-]?(?:error|exception))?(?=\s*(?:[:\]!]|$)|\s*\n|\s+-))"
            r"|(?:[a-z_][\w.]*(?-i:Error|Exception)(?![a-z0-9]))"  # ValueError: ..., requests.HTTPError
            r")", re.IGNORECASE)

    def __call__(self, result: Any, is_error: bool = False) -> bool:
        """Whether `result` reports failure (`is_error`: the block it came in says so)."""
        if result.__class__ is dict and self.function is None and not is_error:  # a flat row's result: no layers
            return False if _VERDICT_KEYS.isdisjoint(result) else self._object_failed(result)
        return self._decide(result, is_error, True)

    def full(self, result: Any, is_error: bool = False) -> bool:
        """The rule without its cheap test: every object parsed and read. What __call__ must equal (a test pins it)."""
        return self._decide(result, is_error, False)

    def _decide(self, result: Any, is_error: bool, cheap: bool) -> bool:
        if is_error:
            return True
        if self.function is not None:
            verdict = self._ask(result)
            if verdict is not None:
                return verdict
        if result.__class__ is str or isinstance(result, str):
            head = result[:_HEAD_CHARS].lstrip()
            if head[:1] != "{":
                return self._text_failed(head)
            if cheap and not _may_fail(result):  # nothing in it can make the object a failure: not parsed
                return False
            return self._object_text_failed(result, head)
        if cheap and result.__class__ is dict and _VERDICT_KEYS.isdisjoint(result):
            return False  # none of the keys the object rule reads
        return self._other_failed(result)

    def _ask(self, result: Any) -> bool | None:
        """The user's function's verdict on `result` (None: no opinion); what it raises, as a FailureFunctionError."""
        try:
            verdict = self.function(result)  # type: ignore[misc]
        except Exception as exc:
            raise FailureFunctionError(f"the failure= function raised {type(exc).__name__}: {exc}") from exc
        return None if verdict is None else bool(verdict)

    def _text_failed(self, head: str) -> bool:
        """A text result: it opens with a failure status, or quotes a JSON error field."""
        return self._head.match(head) is not None or '"error":' in head or '"ok": false' in head

    def _object_text_failed(self, text: str, head: str) -> bool:
        try:
            value = loads(text)
        except json.JSONDecodeError:
            value = _python_object(text)
            if value is None:  # cut or malformed: its head is all there is to read
                return '"error":' in head or '"ok": false' in head
        return self._other_failed(value)

    def _other_failed(self, result: Any) -> bool:
        if isinstance(result, Mapping):
            return self._object_failed(result)
        if is_parts(result):  # a result as content parts (MCP content, Anthropic blocks): read as its text
            return self(content_text(result))
        return False

    def _object_failed(self, result: Mapping[str, Any]) -> bool:
        statuses = self._status
        for key in result:  # only the keys the rule reads (a tool result has a few keys)
            reads = _READS.get(key)
            if reads is None:
                continue
            value = result[key]
            kind = value.__class__
            if reads & _SET and value:
                return True
            if reads & _FALSE and value is False:
                return True
            if reads & _TRUE and value is True:
                return True
            if reads & _EXIT and kind is int and value != 0:
                return True
            if reads & _CODE and (kind is int or (kind is str and len(value) == 3 and value.isdigit())) \
                    and 400 <= int(value) <= 599:
                return True
            if reads & _STATUS and kind is str and value.strip().lower() in statuses:
                return True
        return False


DEFAULT_FAILURE = FailureRule()


def failure_rule(failure: Any) -> FailureRule:
    """`failure=` as a FailureRule: None (the vocabulary), extra status words (a list), or a function of a tool result
    that answers True (failed), False (not failed) or None (the vocabulary decides); a ConfigError otherwise."""
    if failure is None:
        return DEFAULT_FAILURE
    if isinstance(failure, FailureRule):
        return failure
    if callable(failure):
        return FailureRule(function=failure)
    fix = ('Fix: failure=["declined_by_bank"] (extra status words) or failure=lambda result: ... returning True, '
           "False or None")
    if isinstance(failure, (str, bytes)):
        raise ConfigError(f"failure={failure!r} is a string; it would be read letter by letter. {fix}")
    if isinstance(failure, Mapping) or not isinstance(failure, Iterable):
        raise ConfigError(f"failure is a {type(failure).__name__}, not a list of words or a function. {fix}")
    words = list(failure)
    for word in words:
        if not isinstance(word, str) or not word.strip():
            raise ConfigError(f"failure= holds {word!r}; each extra word must be non-empty text. {fix}")
    return FailureRule(words=words) if words else DEFAULT_FAILURE


def result_failed(result: Any, is_error: bool = False) -> bool:
    """The rule itself (the default vocabulary, every object text parsed): what every reader's verdict equals."""
    return DEFAULT_FAILURE.full(result, is_error)


def tool_failed(result: Any) -> bool:
    """Whether a tool result reports failure, by the default vocabulary (:data:`DEFAULT_FAILURE`)."""
    return DEFAULT_FAILURE(result)
