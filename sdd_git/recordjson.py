"""A frozen record as the JSON a command prints (`--json`): its fields in their own order and
under their own names, tuples as lists and a nested record as its own JSON. One rule, so a
record's JSON cannot drift from its fields; a record names only what it leaves out or renames."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import fields
from typing import Any


def record_json(
    record: Any, *, omit: Collection[str] = (), rename: Mapping[str, str] | None = None
) -> dict[str, Any]:
    names = rename or {}
    return {
        names.get(f.name, f.name): _plain(getattr(record, f.name))
        for f in fields(record)
        if f.name not in omit
    }


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    as_json = getattr(value, "as_json", None)
    return as_json() if callable(as_json) else value
