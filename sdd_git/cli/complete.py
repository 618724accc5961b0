"""Shell completion of the ids she types: role, change, stop, run and routine names.

Click completes commands and options itself (`_SDD_COMPLETE=bash_source sdd`, see
docs/completion.md); these complete the values. Each reads only folder and file names under the
sdd root, never a file's text: completion runs on every Tab, and a name that is not an id's
shape (a control character, a space from a merged file's name) is left out rather than shown."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click
from click.shell_completion import CompletionItem

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/#-]{0,120}")


def _root(ctx: click.Context) -> Path | None:
    """The sdd root above the folder the command would run in (`-C DIR` included)."""
    top = ctx.find_root()
    start = Path(top.params.get("directory") or ".").resolve()
    for folder in (start, *start.parents):
        if (folder / ".sdd" / "config.yaml").is_file():
            return folder
    return None


def _names(folder: Path, suffix: str = "", dirs: bool = False) -> list[str]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.is_symlink() or not (entry.is_dir() if dirs else entry.is_file()):
            continue
        if suffix and not entry.name.endswith(suffix):
            continue
        found.append(entry.name[: len(entry.name) - len(suffix)] if suffix else entry.name)
    return found


def _items(names: list[str], incomplete: str) -> list[CompletionItem]:
    chosen = sorted({n for n in names if _ID.fullmatch(n) and n.startswith(incomplete)})
    return [CompletionItem(name) for name in chosen]


def role_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    root = _root(ctx)
    names = _names(root / ".sdd" / "roles", dirs=True) if root else []
    return _items([*names, "executor", "supervisor"], incomplete)


def change_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    root = _root(ctx)
    names = _names(root / "changes", dirs=True) if root else []
    return _items([n for n in names if n.startswith("CH-")], incomplete)


def stop_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    root = _root(ctx)
    return _items(_names(root / ".sdd" / "local" / "stops", ".json") if root else [], incomplete)


def run_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    root = _root(ctx)
    return _items(_names(root / ".sdd" / "role-runs", ".jsonl") if root else [], incomplete)


def runs_or_roles(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    return [*run_ids(ctx, param, incomplete), *role_names(ctx, param, incomplete)]


def routine_names(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    root = _root(ctx)
    names: list[str] = []
    if root is not None:
        for role in _names(root / ".sdd" / "roles", dirs=True):
            names += _names(root / ".sdd" / "roles" / role / "routines", ".yaml")
    return _items(names, incomplete)
