"""What kind of value a file or a model gave, in the words an error shows her
("found a list", "not text")."""

from __future__ import annotations

from typing import Any


def kind_of(value: Any, *, json: bool = False) -> str:
    """The kind of a parsed YAML value, or with `json` in JSON's words (null, an object)."""
    if value is None:
        return "null" if json else "nothing"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object" if json else "a mapping"
    return type(value).__name__


def shown_kind(value: Any) -> str:
    """The kind with a yes/no or a number shown too: `2024 (a number)`, `true (a yes/no value)`."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (a yes/no value)"
    if isinstance(value, int | float):
        return f"{value} (a number)"
    return kind_of(value)


def json_kind(value: Any) -> str:
    """The kind of a JSON value (a model's tool arguments), in JSON's words."""
    return kind_of(value, json=True)
