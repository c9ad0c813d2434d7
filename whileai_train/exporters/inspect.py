"""What a trainer will train: the token spans of a tokenized example that carry loss, decoded.

Used by the demo and the tests to show (and assert) that only the agent's turns are trained.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["trained_spans"]


def trained_spans(tokenizer: Any, input_ids: Sequence[int], trained: Sequence[bool | int]) -> list[str]:
    """The decoded runs of consecutive tokens whose `trained` flag is set (labels != -100, or a mask of 1)."""
    ids = [int(i) for i in input_ids]
    flags = [bool(f) for f in trained]
    spans: list[str] = []
    run: list[int] = []
    for token, flag in zip(ids, flags):
        if flag:
            run.append(token)
        elif run:
            spans.append(tokenizer.decode(run))
            run = []
    if run:
        spans.append(tokenizer.decode(run))
    return spans
