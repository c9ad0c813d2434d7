"""A model spec (a constitution) as an object with a version, so adherence can be compared across versions.

A spec is a living document (a model spec as an object): ``load_spec`` wraps the
``{source, traits: [{id, name, principle, authority}]}`` shape (what the character recipe writes), from a dict
or a JSON file, into a :class:`Spec` whose version is a hash of its traits, so any edit to a principle (or a
trait added, dropped or reordered) changes it. ``spec.behaviors()`` are the trait ids, ready for
``must_not_regress=``; ``stamp_spec(rows, spec)`` tags every row with ``spec_id`` and ``spec_version``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from whileai_train.errors import InputError, RowError
from whileai_train.rows.intake import take_rows

__all__ = ["Spec", "Trait", "load_spec", "stamp_spec"]

_VERSION_HEX = 12  # 48 bits of sha256: two versions of one spec collide with odds of about 1 in 10^14


class Trait(BaseModel):
    """One principle of the spec: its id (the behaviour's marker name), name, text and authority."""

    model_config = ConfigDict(extra="allow", frozen=True)
    id: str
    name: str | None = None
    principle: str
    authority: str | int | float | None = None  # a level name ("platform", "user") or a rank


class Spec(BaseModel):
    """A versioned spec: `version` is a content hash of the traits (12 hex digits of sha256)."""

    model_config = ConfigDict(frozen=True)
    id: str
    source: str | None = None
    version: str
    traits: list[Trait] = Field(default_factory=list)

    def behaviors(self) -> list[str]:
        """The trait ids, in order: the behaviours a delta_report(must_not_regress=...) guards."""
        return [trait.id for trait in self.traits]

    def __str__(self) -> str:
        lines = [f"spec {self.id} version {self.version}: {len(self.traits)} traits"
                 + (f" (from {self.source})" if self.source else "")]
        for trait in self.traits:
            authority = f" [{trait.authority}]" if trait.authority is not None else ""
            lines.append(f"  {trait.id}{authority}: {trait.principle}")
        return "\n".join(lines)


def _version(traits: list[Trait]) -> str:
    canonical = json.dumps([trait.model_dump(mode="json") for trait in traits], sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:_VERSION_HEX]


def _read(path: Path) -> Any:
    if not path.exists():
        raise InputError(f"{path}: no such file. Fix: pass the spec as a dict, or the path of its JSON file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a JSON spec ({exc}). Fix: write the spec as JSON: "
                         "{\"source\": ..., \"traits\": [{\"id\", \"name\", \"principle\", \"authority\"}]}") from None


def _traits(raw: Any, where: str) -> list[Trait]:
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}: `traits` is {type(raw).__name__ if raw is not None else 'missing'}, not a "
                         "non-empty list. Fix: give the spec traits: [{\"id\", \"name\", \"principle\", \"authority\"}]")
    traits: list[Trait] = []
    seen: set[str] = set()
    for number, item in enumerate(raw):
        field = f"{where}: traits[{number}]"
        if not isinstance(item, Mapping):
            raise InputError(f"{field} is a {type(item).__name__}, not an object. Fix: write each trait as "
                             "{\"id\", \"name\", \"principle\", \"authority\"}")
        trait_id, principle = item.get("id"), item.get("principle")
        if not isinstance(trait_id, str) or not trait_id.strip():
            raise InputError(f"{field}.id is {trait_id!r}. Fix: give every trait a non-empty string id "
                             "(it becomes the behaviour's marker name)")
        if trait_id in seen:
            raise InputError(f"{field}.id {trait_id!r} is used twice. Fix: give every trait its own id")
        if not isinstance(principle, str) or not principle.strip():
            raise InputError(f"{field}.principle is {principle!r}. Fix: write the trait's principle as text")
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            raise InputError(f"{field}.name is {type(name).__name__}, not text. Fix: write the name as a string")
        seen.add(trait_id)
        traits.append(Trait.model_validate(dict(item)))
    return traits


def load_spec(obj_or_path: Spec | Mapping[str, Any] | str | os.PathLike[str]) -> Spec:
    """A Spec from a dict ({source, traits: [...]}, optionally id), a JSON file's path, or a Spec (returned)."""
    if isinstance(obj_or_path, Spec):
        return obj_or_path
    if isinstance(obj_or_path, (str, os.PathLike)):
        path = Path(obj_or_path)
        raw, where = _read(path), str(path)
    elif isinstance(obj_or_path, Mapping):
        raw, where = obj_or_path, "spec"
    else:
        raise InputError(f"load_spec got a {type(obj_or_path).__name__}. Fix: pass the spec as a dict "
                         "{source, traits: [...]} or the path of its JSON file")
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: the spec is a {type(raw).__name__}, not an object. Fix: write "
                         "{\"source\": ..., \"traits\": [...]}")
    traits = _traits(raw.get("traits"), where)
    source = raw.get("source")
    source_text = None if source is None else str(source)
    spec_id = raw.get("id") or raw.get("name") or source_text or "spec"
    return Spec(id=str(spec_id), source=source_text, version=_version(traits), traits=traits)


def stamp_spec(rows: Sequence[Mapping[str, Any]], spec: Spec | Mapping[str, Any] | str | os.PathLike[str]
               ) -> list[dict[str, Any]]:
    """New rows tagged with spec_id and spec_version (the spec may be anything load_spec takes); the input rows
    are not changed."""
    rows = take_rows(rows, "stamp_spec")
    loaded = load_spec(spec)
    spec_id, version = loaded.id, loaded.version
    out: list[dict[str, Any]] = []
    append = out.append
    for index, row in enumerate(rows):
        if row.__class__ is not dict and not isinstance(row, Mapping):
            raise RowError(index, None, f"row is {type(row).__name__}, not an object", "pass rows as dicts")
        append({**row, "spec_id": spec_id, "spec_version": version})
    return out
