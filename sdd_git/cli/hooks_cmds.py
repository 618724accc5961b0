"""`sdd hooks install | uninstall | status`: sdd's git hooks (sdd_git/events/hooks.py)."""

from __future__ import annotations

from typing import Any

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say, table


@click.group("hooks")
def hooks() -> None:
    """sdd's git hooks: post-merge, post-rewrite and reference-transaction fire routines.

    A hook already there is kept and run first (renamed HOOK.before-sdd, its exit code kept);
    uninstall puts it back. Beside pre-commit, sdd's hook is HOOK.legacy (pre-commit runs it);
    beside lefthook, HOOK.old; with husky, it stays in .git/hooks. `status` says what runs it.
    SDD_SKIP_HOOKS=1 skips sdd's part of every hook.
    """


@hooks.command("install")
@click.option(
    "--path",
    "into_hooks_path",
    is_flag=True,
    help="core.hooksPath is set: install into that folder, or print the lines to add where "
    "its manager rewrites it (husky).",
)
def hooks_install(into_hooks_path: bool) -> None:
    """Install the hooks where git runs them, beside pre-commit, lefthook or husky.

    With core.hooksPath set, this refuses unless --path is given."""
    from sdd_git.events import hooks as core
    from sdd_git.routines.routine import load_routines

    root = current_root()
    changes = core.install(root, into_hooks_path=into_hooks_path)
    for change in changes:
        say(f"{change.name}: {change.words}")
    _, problems = load_routines(root)
    for problem in problems:  # left out of the index: such a routine fires nothing yet
        say(f"warning: {problem.message} (this routine fires nothing until it loads)")
    say(f"hooks folder: {changes[0].path.parent}" if changes else "nothing to install")
    _print_lines(changes)


# Where the lines go in the manager's file.
_WHERE = {
    "lefthook": "merge the jobs into the hooks it has already",
    "husky": "first in the file: git's stdin is read by the first command that reads it",
}


def _print_lines(changes: list[Any]) -> None:
    """The lines a hook manager's own file needs, on stdout: they are what she copies."""
    by_file: dict[str, list[str]] = {}
    manager: dict[str, str] = {}
    for change in changes:
        if change.config is not None and change.lines is not None:
            by_file.setdefault(str(change.config), []).append(change.lines)
            manager[str(change.config)] = change.manager or ""
    for config, blocks in by_file.items():
        where = _WHERE.get(manager[config])
        say(f"add to {config}" + (f" ({where}):" if where else ":"))
        click.echo("".join(blocks), nl=False)


@hooks.command("uninstall")
def hooks_uninstall() -> None:
    """Remove the hooks sdd wrote and put back the ones they chained; others stay as they are."""
    from sdd_git.events import hooks as core

    for change in core.uninstall(current_root()):
        say(f"{change.name}: {change.words}")


@hooks.command("status")
@json_option
def hooks_status(as_json: bool) -> None:
    """Each hook: installed, not installed, chaining a hook, or changed by someone else."""
    from sdd_git.events import hooks as core

    found = core.status(current_root())
    if as_json:
        emit_json(found.as_json())
        return
    table([(h.name, h.words) for h in found.hooks], ("HOOK", "STATE"))
    say(f"hooks folder: {found.folder}")
    if found.hooks_path is not None:
        say(
            f"warning: core.hooksPath is set to {found.hooks_path}: git runs the hooks there, "
            f"not in {found.folder}"
        )
    if found.listening:
        say(f"routines listen for: {', '.join(found.listening)} (main branch: {found.main})")
    else:
        say("no routine listens: the hooks exit without starting Python")
