"""`sdd hooks install | uninstall | status`: sdd's git hooks (sdd_git/events/hooks.py)."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say, table


@click.group("hooks")
def hooks() -> None:
    """sdd's git hooks: post-merge, post-rewrite and reference-transaction fire routines.

    A hook already there is kept and run first (renamed HOOK.legacy, its exit code kept);
    uninstall puts it back. SDD_SKIP_HOOKS=1 skips sdd's part of every hook.
    """


@hooks.command("install")
def hooks_install() -> None:
    """Install the hooks into the repository's hooks folder (not where core.hooksPath points)."""
    from sdd_git.events import hooks as core
    from sdd_git.routines.routine import load_routines

    root = current_root()
    changes = core.install(root)
    for change in changes:
        say(f"{change.name}: {change.words}")
    _, problems = load_routines(root)
    for problem in problems:  # left out of the index: such a routine fires nothing yet
        say(f"warning: {problem.message} (this routine fires nothing until it loads)")
    say(f"hooks folder: {changes[0].path.parent}" if changes else "nothing to install")


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
            "not these"
        )
    if found.listening:
        say(f"routines listen for: {', '.join(found.listening)} (main branch: {found.main})")
    else:
        say("no routine listens: the hooks exit without starting Python")
