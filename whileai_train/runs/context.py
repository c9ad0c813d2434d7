"""The run's context: what it was trained with, kept in its summary and returned by get_run.

    summary["context"] = {"project", "group", "tags", "versions": {torch, transformers, trl, peft, whileai_train},
                          "args": TrainingArguments.to_sanitized_dict(), "model_config", "peft_config"}
    summary["project"], summary["group"]   texts, and summary["tags"] the tags joined by ", ", so the runs list
                                           (which carries a summary's top-level texts) can filter on them

`wai.run(..., project=, group=, tags=)` sets the first three; WhileCallback and the monitor add the trainer's
arguments, the model's config and its PEFT config at train begin, project from `args.project` and the name from
`args.run_name` (unless passed). Versions are read from the modules already imported (nothing is imported here).
A context that cannot be read is a warning; the run goes on without it.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from whileai_train.errors import ConfigError, name_list

__all__ = ["context_patch", "plain_json", "trainer_context", "versions"]

logger = logging.getLogger("whileai_train.runs")

_VERSIONED = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "whileai_train")


def _plain(item: Any) -> Any:
    if isinstance(item, (set, frozenset)):
        return sorted(item, key=str)
    tolist = getattr(item, "tolist", None)
    return tolist() if callable(tolist) else str(item)


def plain_json(value: Any) -> Any:
    """`value` as plain JSON: sets become sorted lists, numpy values numbers, anything else its text."""
    return json.loads(json.dumps(value, default=_plain))


def versions() -> dict[str, str]:
    """The versions of the libraries of the training stack this process has imported."""
    found = {}
    for name in _VERSIONED:
        module = sys.modules.get(name)
        version = getattr(module, "__version__", None) if module is not None else None
        if name == "whileai_train" and version is None:
            from importlib.metadata import PackageNotFoundError
            from importlib.metadata import version as dist_version

            try:
                version = dist_version("whileai_train")
            except PackageNotFoundError:
                version = None
        if version:
            found[name] = str(version)
    return found


def context_patch(project: str | None = None, group: str | None = None, tags: Sequence[str] | None = None,
                  **blocks: Any) -> dict[str, Any]:
    """The summary keys of a context (checked: a string where a list belongs is refused)."""
    for option, value in (("project", project), ("group", group)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"{option}={value!r} must be a non-empty string. Fix: pass {option}='my-{option}'.")
    listed = None if tags is None else name_list("tags", tags)
    context: dict[str, Any] = {"project": project, "group": group, "tags": listed, "versions": versions()}
    context.update({k: plain_json(v) for k, v in blocks.items() if v is not None})
    patch: dict[str, Any] = {"context": context}
    if project is not None:
        patch["project"] = project
    if group is not None:
        patch["group"] = group
    if listed:
        patch["tags"] = ", ".join(listed)
    return patch


def trainer_context(args: Any, model: Any) -> dict[str, Any]:
    """The trainer's arguments, the model's config and its PEFT config (each None where there is none)."""
    blocks: dict[str, Any] = {}
    to_dict = getattr(args, "to_sanitized_dict", None)
    blocks["args"] = to_dict() if callable(to_dict) else None
    config = getattr(model, "config", None)
    config_dict = getattr(config, "to_dict", None)
    blocks["model_config"] = config_dict() if callable(config_dict) else None
    peft = getattr(model, "peft_config", None)
    if isinstance(peft, dict) and peft:
        blocks["peft_config"] = {name: (c.to_dict() if callable(getattr(c, "to_dict", None)) else str(c))
                                 for name, c in peft.items()}
    return blocks
