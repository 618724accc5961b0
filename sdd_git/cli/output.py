"""Rendering helpers shared by the commands: JSON documents, plain lines, the root in use."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from sdd_git.root import Root, find_root


def current_root() -> Root:
    return find_root(Path.cwd())


def current_root_unless(named: object) -> Root | None:
    """The root here; outside one, None where she named what to read (else the error)."""
    from sdd_git.errors import SddError

    try:
        return current_root()
    except SddError:
        if named is None:
            raise
        return None


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def shown_in_full(
    items: Sequence[Any], as_json: bool, to_json: Callable[[Any], Any], empty: str
) -> bool:
    """--json: the items as JSON; none: `empty` said. True when the command has nothing more to
    show."""
    if as_json:
        emit_json([to_json(item) for item in items])
        return True
    if not items:
        say(empty)
        return True
    return False


def say(text: str) -> None:
    """A human sentence about what happened; stdout stays for the result itself."""
    click.echo(text, err=True)


def table(rows: Sequence[tuple[str, ...]], headers: tuple[str, ...]) -> None:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    lines = (
        "  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip()
        for row in (headers, *rows)
    )
    click.echo("\n".join(lines))  # one write: a thousand echo calls cost more than the rows


def json_option(func: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(func)
