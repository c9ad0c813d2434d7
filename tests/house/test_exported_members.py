"""The public face is one list (`_EXPORTS`): `__all__` and the type checkers' mirror agree with it, every public name
resolves, and an old name resolves with a warning naming the new one."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import whileai_train as wai


def test_all_is_sorted_and_is_the_exports_map() -> None:
    """`_EXPORTS` (name -> owning module) is the one list of the public face; `__all__` and the TYPE_CHECKING
    mirror (below) are checked against it, so a name becomes public only by an entry there."""
    assert wai.__all__ == sorted(wai.__all__)
    assert wai.__all__ == sorted(wai._EXPORTS)


def _init_tree() -> ast.Module:
    return ast.parse(Path(wai.__file__).read_text())


def test_all_is_a_literal_list() -> None:
    assigned = [node.value for node in _init_tree().body if isinstance(node, ast.Assign)
                and [getattr(target, "id", None) for target in node.targets] == ["__all__"]]
    assert len(assigned) == 1
    assert isinstance(assigned[0], ast.List)
    assert [ast.literal_eval(item) for item in assigned[0].elts] == wai.__all__


def test_lazy_names_and_the_type_checking_mirror_agree() -> None:
    """`_EXPORTS` (what runs) and the TYPE_CHECKING imports (what type checkers read) agree, name by name."""
    mirror: dict[str, str] = {}
    for node in _init_tree().body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                for alias in statement.names:
                    assert alias.asname is None
                    mirror[alias.name] = str(statement.module)
    assert mirror == wai._EXPORTS
    assert sorted(mirror) == wai.__all__
    for name, module in mirror.items():
        assert getattr(importlib.import_module(module), name) is getattr(wai, name)


def test_every_public_name_resolves() -> None:
    missing = [name for name in wai.__all__ if getattr(wai, name, None) is None]
    assert not missing


@pytest.mark.parametrize(("old", "new"), [("export_training", "export_dataset"), ("MetricSummary", "MarkerSummary"),
                                          ("OptimizeResult", "KeptRows"), ("Kept", "KeptRows"),
                                          ("Reading", "AlarmStatus"), ("Selection", "TrainStepCheck")])
def test_an_old_name_still_resolves_with_a_warning_naming_the_new(old: str, new: str) -> None:
    assert old not in wai.__all__ and old not in wai._EXPORTS
    with pytest.warns(DeprecationWarning, match=f"use whileai_train.{new}"):
        assert getattr(wai, old) is getattr(wai, new)


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        wai.not_a_thing  # noqa: B018
    except AttributeError as exc:
        assert "not_a_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
