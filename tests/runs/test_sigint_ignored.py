"""A process started from a background job (a CI script, nohup, `cmd &`) inherits SIGINT ignored, and Python
then raises no KeyboardInterrupt: a Modal-style preemption by SIGINT would be lost and training would go on.
wai.track(preempted_by=(KeyboardInterrupt,)) says so, with the fix, once at construction; with SIGINT at its
default handler it says nothing."""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.callbacks.test_callback import lm_dataset, trainer_args

import whileai_train as wai

pytestmark = pytest.mark.trainer
SAID = "SIGINT is ignored in this process"


@pytest.fixture()
def sigint_as_found() -> Iterator[None]:
    found = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, found)


def test_track_warns_when_a_sigint_preemption_cannot_be_seen(sigint_as_found: None, tiny_model: Any,
                                                              tiny_tokenizer: Any, tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    from transformers import Trainer

    trainer = Trainer(model=tiny_model, args=trainer_args(tmp_path), train_dataset=lm_dataset(tiny_tokenizer))
    caplog.set_level(logging.WARNING, logger="whileai_train.callbacks")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    wai.track(trainer, preempted_by=(KeyboardInterrupt,))
    assert SAID not in caplog.text
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wai.track(trainer)  # no SIGINT preemption asked for: nothing to say
    assert SAID not in caplog.text
    wai.track(trainer, preempted_by=(KeyboardInterrupt,))
    assert caplog.text.count(SAID) == 1
    assert "Fix: signal.signal(signal.SIGINT, signal.default_int_handler) before training" in caplog.text
