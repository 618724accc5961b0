"""An action in the person's words: what will happen and with which inputs. Never a diff.

Each tool says its own action (`action` and `describe` on its class, with the shared words of
`tools/actionwords`); this module is where the runner, the stops and her page ask for them.
`sdd stops show STOP` shows all of it. `heading` is the same action in one short line, for her
page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Every control character shown as an escape, newlines kept with keep_newlines=True; callers of
# this module import it from here.
from sdd_git.shown_text import visible as visible
from sdd_git.tools.actionwords import any_action, plain, with_purpose, write_words


def describe(
    tool: str, args: dict[str, Any], sandbox: str | None = None, root: Path | None = None
) -> str:
    """The action a stop would run, in plain words, with every input it would run with.
    `root`: the product, to name the connector a pull request or deploy goes through and the
    kind a connector's name stands for."""
    from sdd_git.tools.toolbox import DECLARED

    found = DECLARED.get(tool)
    if found is None:
        return with_purpose(any_action(tool, args), args).rstrip("\n")
    return found.describe(args, root=root, sandbox=sandbox)


def write_changed(args: dict[str, Any], said: str, root: Path) -> str | None:
    """Why a write_file stop's words no longer hold for the file as it is now (it said
    "Create" and a file is there now, or the old file's size changed since), or None when they
    still do: her answer allowed the action those words named, and no other."""
    now = write_words(args.get("path"), str(args.get("content", "")), root)
    if said.startswith(f"{now}, starting:"):
        return None
    return f"{plain(args.get('path'))} changed since the stop asked; the write would now be: {now}"


def heading(tool: str | None, args: dict[str, Any], root: Path | None = None) -> str:
    """The action in one short line, for her page: "Create src/search.py (2 lines)", "Replace
    README.txt: 3 lines become 4". What it holds (the content, the whole command) goes below
    it, never into it."""
    if tool == "write_file":
        return write_words(args.get("path"), str(args.get("content", "")), root, short=True)
    if tool is None:
        return "Go on"
    shown = {k: v for k, v in args.items() if k != "purpose"}
    return describe(tool, shown, root=root).split("\n", 1)[0].rstrip(":.")
