"""The policy to sample: a loaded model, or one loaded from a folder or hub id (a PEFT adapter on its base).

A path that does not load is a ConfigError naming it and the fix; loading happens before anything is written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whileai_train.errors import ConfigError

__all__ = ["Policy", "load_policy"]


@dataclass
class Policy:
    """A model ready to sample, its tokenizer, the name rows record, and the adapter path when it is one."""

    model: Any
    tokenizer: Any
    name: str
    adapter: str | None = None


def _fail(what: Any, exc: BaseException) -> ConfigError:
    return ConfigError(f"model {str(what)!r} does not load ({type(exc).__name__}: {exc}). Fix: pass a folder written "
                       "by save_pretrained (a PEFT adapter folder loads on its base), a hub id this machine can "
                       "reach, or a loaded model with tokenizer=")


def load_policy(model: Any, tokenizer: Any = None, *, name: str | None = None) -> Policy:
    """`model` as a Policy: a loaded model is used as is (tokenizer= is then required); a path or hub id is
    loaded with transformers, an adapter folder (adapter_config.json) on the base model it names."""
    if not isinstance(model, (str, os.PathLike)):
        if not hasattr(model, "generate"):
            raise ConfigError(f"model is a {type(model).__name__}, not a model that generates. Fix: pass a "
                              "transformers causal LM, or the folder / hub id it loads from")
        if tokenizer is None:
            raise ConfigError("a loaded model needs its tokenizer. Fix: evaluate(model, ..., tokenizer=tokenizer)")
        given = name or getattr(getattr(model, "config", None), "_name_or_path", None) or type(model).__name__
        return Policy(model, tokenizer, str(given))
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model)
    adapter_config = path / "adapter_config.json"
    try:
        if adapter_config.is_file():
            base = json.loads(adapter_config.read_text(encoding="utf-8"))["base_model_name_or_path"]
            from peft import PeftModel

            adapted = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), str(path))
            has_tokenizer = (path / "tokenizer_config.json").is_file()
            tok = tokenizer or AutoTokenizer.from_pretrained(str(path) if has_tokenizer else base)
            return Policy(adapted, tok, name or str(base), adapter=str(model))
        loaded = AutoModelForCausalLM.from_pretrained(str(model))
        tok = tokenizer or AutoTokenizer.from_pretrained(str(model))
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
        raise _fail(model, exc) from exc
    return Policy(loaded, tok, name or str(model))
