"""The rules of the house that an import can break (docs/architecture.md), read from the source with `ast`.

Every import counts, at module level or inside a function: a lazy import still makes the arrow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import whileai_train

PACKAGE = Path(whileai_train.__file__).resolve().parent

# the rooms that work on rows before and after training: never reach the training loop's rooms
OFFLINE_ROOMS = ("rows", "errors", "report", "stats", "tables",
                 "gates", "select", "judge", "measure", "markers", "exporters", "progress")
LOOP_ROOMS = {"callbacks", "runs", "server", "commands", "demos", "cli"}
HEAVY = {"torch", "transformers", "trl"}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "whileai_train":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level) for every import in `path`; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, id(node) in top))
    return found


def _room_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py") if len(relative.parts) > 1 else relative.stem


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_stats_imports_nothing_of_ours() -> None:
    ours = [(path.name, module) for path in _modules() if _room_of(path) == "stats"
            for module, _ in _imports(path) if _room(module) not in (None, "stats")]
    assert ours == []


def test_offline_rooms_never_import_the_training_loop_rooms() -> None:
    upward = [(str(path.relative_to(PACKAGE)), module) for path in _modules()
              if _room_of(path) in OFFLINE_ROOMS
              for module, _ in _imports(path) if _room(module) in LOOP_ROOMS]
    assert upward == []


def test_the_sampler_never_imports_the_training_loop_rooms() -> None:
    """sampling/ is below callbacks/ (the monitor's holdout), commands/ (eval) and the public evaluate: it samples
    and scores, and never reaches a run, a server or a callback."""
    upward = [(str(path.relative_to(PACKAGE)), module) for path in _modules() if _room_of(path) == "sampling"
              for module, _ in _imports(path) if _room(module) in LOOP_ROOMS]
    assert upward == []


def test_markers_never_import_measure() -> None:
    """measure/ reads markers; both summarise a marker column through tables/marker_column, the rule below them."""
    upward = [(str(path.relative_to(PACKAGE)), module) for path in _modules() if _room_of(path) == "markers"
              for module, _ in _imports(path) if _room(module) == "measure"]
    assert upward == []


def test_only_callbacks_import_the_training_stack_at_module_level() -> None:
    heavy = [(str(path.relative_to(PACKAGE)), module) for path in _modules() if _room_of(path) != "callbacks"
             for module, top in _imports(path) if top and module.split(".")[0] in HEAVY]
    assert heavy == []


def test_rooms_import_one_another_without_a_circle() -> None:
    """Every import counts, those only type checkers read included: a type named across rooms is an arrow too."""
    arrows: dict[str, set[str]] = {}
    for path in _modules():
        source = _room_of(path)
        if source == "__init__":
            continue  # the public face imports every room (lazily, or for type checkers only)
        for module, _ in _imports(path):
            target = _room(module)
            if target is not None and target not in (source, "__init__"):
                arrows.setdefault(source, set()).add(target)
    circles: list[list[str]] = []

    def walk(room: str, trail: list[str]) -> None:
        for target in sorted(arrows.get(room, ())):
            if target in trail:
                circles.append([*trail[trail.index(target):], target])
            else:
                walk(target, [*trail, target])

    for room in sorted(arrows):
        walk(room, [room])
    assert circles == []


def test_recipes_import_only_the_public_package_and_the_demos() -> None:
    """A recipe is what a user copies: it reaches the library by `whileai_train` (the public list) and builds its
    world from `whileai_train.demos`, never from a room's internals."""
    recipes = PACKAGE.parent / "recipes"
    scripts = sorted(recipes.rglob("*.py"))
    assert scripts, f"no recipe scripts under {recipes}"
    internal = [(str(path.relative_to(recipes)), module) for path in scripts
                for module, _ in _imports(path)
                if _room(module) not in (None, "__init__", "demos")]
    assert internal == []
