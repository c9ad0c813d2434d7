"""attach_labels: stamp gold labels (people's, or a program's) on rows so judge_trust can measure the judge.

A label names its row by one of four key forms:

* the row's ``rollout_id``;
* ``"scenario_id#rollout_index"``;
* ``scenario_id`` and ``rollout_index`` as two fields (``{"scenario_id": "s1", "rollout_index": 0, "label": 1}``);
* the row's ``prompt``.

Labels come as a list of ``{"key": ..., "label": 0 or 1}`` (or with ``rollout_id`` / ``prompt`` /
``scenario_id`` + ``rollout_index`` in place of ``key``), or as a ``{key: label}`` dict. Nothing is changed
until every key is resolved: a key naming two rows (pooled runs on one pinned grid repeat scenario_id and
rollout_index) raises :class:`LabelError` before any row is stamped.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from whileai_train.errors import LabelError
from whileai_train.judge.defaults import LABEL_KINDS
from whileai_train.rows.intake import take_rows
from whileai_train.tables.defaults import SHOW_FIRST

__all__ = ["attach_labels", "gold_kind_of", "kind_words"]

_STRING_FORMS = ("rollout_id", "scenario_id#rollout_index", "prompt")


def kind_words(kind: str) -> str:
    """How a warning names what it measured against: "human labels", "gold labels (program)"."""
    return "human labels" if kind == "human" else f"gold labels ({kind})"


def gold_kind_of(row: Mapping[str, Any]) -> str:
    """Who wrote a row's gold_reward: human, program, model, or unknown (older rows with no record)."""
    kind = row.get("gold_kind")
    if kind is None:
        return "unknown"
    return LABEL_KINDS.get(str(kind).lower(), "unknown")


def _index(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """key form -> key text -> row indices."""
    forms: dict[str, dict[str, list[int]]] = {form: {} for form in _STRING_FORMS}
    for number, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise LabelError(f"row {number} is a {type(row).__name__}, not a dict. Fix: pass rows as dicts")
        rollout_id = row.get("rollout_id")
        if rollout_id is not None and rollout_id != "":
            forms["rollout_id"].setdefault(str(rollout_id), []).append(number)
        scenario_id, rollout_index = row.get("scenario_id"), row.get("rollout_index")
        if scenario_id is not None and rollout_index is not None:
            forms["scenario_id#rollout_index"].setdefault(f"{scenario_id}#{rollout_index}", []).append(number)
        prompt = row.get("prompt")
        if isinstance(prompt, str) and prompt:
            forms["prompt"].setdefault(prompt, []).append(number)
    return forms


def _label_value(raw: Any, shown_key: str) -> float:
    if isinstance(raw, bool):
        return 1.0 if raw else 0.0
    if isinstance(raw, (int, float)) and not math.isnan(raw) and 0.0 <= raw <= 1.0:
        return float(raw)
    raise LabelError(f"label for {shown_key} is {raw!r}. Fix: write each label as 1 (pass) or 0 (fail)")


def _entries(labels: Any) -> list[tuple[str, str | None, Any]]:
    """(key text, its form or None for "any string form", label) for every label."""
    out: list[tuple[str, str | None, Any]] = []
    if isinstance(labels, Mapping):
        for key, label in labels.items():
            if isinstance(key, tuple) and len(key) == 2:
                out.append((f"{key[0]}#{key[1]}", "scenario_id#rollout_index", label))
            else:
                out.append((str(key), None, label))
        return out
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise LabelError(f"labels is a {type(labels).__name__}. Fix: pass a list of {{'key': ..., 'label': 0 or 1}} "
                         "or a {key: label} dict")
    for number, item in enumerate(labels):
        if not isinstance(item, Mapping) or "label" not in item:
            raise LabelError(f"labels[{number}] is {item!r}. Fix: write each as {{'key': ..., 'label': 0 or 1}}")
        if item.get("key") is not None:
            out.append((str(item["key"]), None, item["label"]))
        elif item.get("rollout_id") is not None:
            out.append((str(item["rollout_id"]), "rollout_id", item["label"]))
        elif item.get("scenario_id") is not None and item.get("rollout_index") is not None:
            out.append((f"{item['scenario_id']}#{item['rollout_index']}", "scenario_id#rollout_index", item["label"]))
        elif item.get("prompt") is not None:
            out.append((str(item["prompt"]), "prompt", item["label"]))
        else:
            raise LabelError(f"labels[{number}] names no row. Fix: give it a key (rollout_id, "
                             "'scenario_id#rollout_index' or the prompt), or scenario_id and rollout_index")
    return out


def _short(text: str, width: int = 60) -> str:
    return repr(text if len(text) <= width else text[: width - 3] + "...")


def attach_labels(rows: Sequence[Mapping[str, Any]], labels: Any, kind: str = "human") -> list[dict[str, Any]]:
    """New rows with ``gold_reward`` and ``gold_kind`` stamped on the labelled ones (the input is not changed).

    ``kind`` says who wrote the labels: "human", "program" (a deterministic rule; "verifier" reads the same),
    or "model" (judge_trust does not count model gold unless told to). A key that names no row is warned about
    with its form; keys that name no row at all, or a key that names two rows, raise :class:`LabelError`.
    """
    rows = take_rows(rows, "attach_labels")
    if not isinstance(kind, str) or kind.lower() not in LABEL_KINDS:
        raise LabelError(f"kind={kind!r} is not a kind of label. Fix: pass kind='human', 'program' "
                         "('verifier' reads the same) or 'model'")
    gold_kind = LABEL_KINDS[kind.lower()]
    rows = list(rows)
    forms = _index(rows)
    entries = _entries(labels)
    if not entries:
        raise LabelError("no labels given. Fix: pass at least one {'key': ..., 'label': 0 or 1}")

    stamps: dict[int, tuple[float, str]] = {}
    unmatched: list[str] = []
    for shown, form, raw in entries:
        candidates = (form,) if form is not None else _STRING_FORMS
        hit_form, hits = None, None
        for name in candidates:
            found = forms[name].get(shown)
            if found:
                hit_form, hits = name, found
                break
        if hits is None:
            described = form or ("scenario_id#rollout_index" if "#" in shown else "rollout_id or prompt")
            unmatched.append(f"{_short(shown)} (as {described})")
            continue
        if len(hits) > 1:
            raise LabelError(
                f"label key {_short(shown)} (as {hit_form}) names {len(hits)} rows ({hits[:SHOW_FIRST]}); no row "
                "was changed. Pooled runs on one pinned grid repeat scenario_id and rollout_index. Fix: stamp a "
                "unique rollout_id on every row and key the labels by it")
        value = _label_value(raw, _short(shown))
        row_number = hits[0]
        if row_number in stamps and stamps[row_number][0] != value:
            raise LabelError(f"row {row_number} gets two different labels (the second from key {_short(shown)}); "
                             "no row was changed. Fix: keep one label per row")
        stamps[row_number] = (value, shown)

    if not stamps:
        raise LabelError(f"none of the {len(entries)} label keys names a row ({kind_words(gold_kind)}): "
                         f"{', '.join(unmatched[:SHOW_FIRST])}. Fix: key labels by rollout_id, "
                         "'scenario_id#rollout_index', scenario_id + rollout_index, or the exact prompt")
    if unmatched:
        more = f" and {len(unmatched) - SHOW_FIRST} more" if len(unmatched) > SHOW_FIRST else ""
        warnings.warn(f"attach_labels: {len(unmatched)} of {len(entries)} label keys name no row "
                      f"({kind_words(gold_kind)}): {', '.join(unmatched[:SHOW_FIRST])}{more}",
                      UserWarning, stacklevel=2)

    out: list[dict[str, Any]] = []
    for number, row in enumerate(rows):
        new = dict(row)
        if number in stamps:
            new["gold_reward"] = stamps[number][0]
            new["gold_kind"] = gold_kind
        out.append(new)
    return out
