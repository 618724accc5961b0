"""`sdd config show`: her merged settings, and which file each value came from."""

from __future__ import annotations

import json
from typing import Any

import click

from sdd_git.cli.output import current_root, emit_json, json_option


@click.group("config")
def config() -> None:
    """Her settings: the user file, .sdd/config.yaml and .sdd/config.local.yaml, merged."""


@config.command("show")
@click.option("--origin", "with_origin", is_flag=True, help="Say which file each value is from.")
@json_option
def show(with_origin: bool, as_json: bool) -> None:
    """Print the merged settings, one `key=value` a line (later layers win)."""
    from sdd_git.paths import display
    from sdd_git.settings import shown_values

    values = shown_values(current_root())
    if as_json:
        emit_json([value.as_json() for value in values])
        return
    lines = []
    for value in values:
        line = f"{value.key}={_text(value.value)}"
        if with_origin:
            where = display(value.origin) if value.origin is not None else "(default)"
            line = f"{where}\t{line}"
        lines.append(line)
    if lines:
        click.echo("\n".join(lines))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
