"""`sdd role ...`: role files, the registry and the lattice (running a role comes later)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say, table

PRODUCES = ("reading", "scenario", "code", "release-notes", "plan", "review", "other")


def _warn(warnings: list[str] | tuple[str, ...]) -> None:
    for line in warnings:
        click.echo(line, err=True)


@click.group()
def role() -> None:
    """Create, edit, list and share roles (.sdd/roles/NAME/ROLE.md)."""


@role.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include hidden roles.")
@json_option
def role_list(show_all: bool, as_json: bool) -> None:
    """List roles: pinned first, then by label."""
    from sdd_git.roles.lattice import spawnable
    from sdd_git.roles.registry import load_registry

    registry = load_registry(current_root())
    _warn(registry.warnings)
    roles = [r for r in registry.roles if show_all or not r.hidden]
    roles.sort(key=lambda r: (not r.pinned, r.label.casefold(), r.name))
    if as_json:
        emit_json(
            [
                {
                    "name": r.name,
                    "label": r.label,
                    "job": r.job,
                    "level": int(r.level) if float(r.level).is_integer() else r.level,
                    "delegation": r.delegation,
                    "spawnable": spawnable(r, registry.roles),
                    "pinned": r.pinned,
                    "hidden": r.hidden,
                    "source": r.source,
                }
                for r in roles
            ]
        )
        return
    rows = [
        (
            ("* " if r.pinned else "  ") + r.name,
            r.label,
            r.level_text,
            r.delegation,
            r.source + (" (hidden)" if r.hidden else ""),
            r.job,
        )
        for r in roles
    ]
    table(rows, ("  NAME", "LABEL", "LEVEL", "DELEGATION", "SOURCE", "JOB"))


@role.command("show")
@click.argument("name")
@json_option
def role_show(name: str, as_json: bool) -> None:
    """The profile, boundary, routines and recent runs of a role."""
    from sdd_git.roles.inspect import describe_role

    view, warnings = describe_role(current_root(), name)
    _warn(warnings)
    if as_json:
        emit_json(view)
        return
    echo = click.echo
    echo(f"{view['name']}  ({view['label']}, {view['source']})")
    echo(f"job: {view['job']}")
    echo(
        f"level: {view['level']}   delegation: {view['delegation']}   produces: {view['produces']}"
    )
    if view["scope"]:
        echo(f"scope: {view['scope']}")
    echo(f"may spawn: {', '.join(view['spawnable']) or 'nothing'}")
    flags = [f for f in ("pinned", "hidden") if view[f]]
    if flags:
        echo("flags: " + ", ".join(flags))
    if view["skills"]:
        echo("skills: " + ", ".join(view["skills"]))
    boundary = view["boundary"]
    echo("always allow: " + (_rules(boundary["always_allow"]) or "nothing"))
    echo("ask first: " + (_rules(boundary["ask_first"]) or "nothing"))
    echo("routines: " + (", ".join(view["routines"]) or "none"))
    echo("recent runs: " + (", ".join(view["recent_runs"]) or "none"))
    if view["path"]:
        echo(f"file: {view['path']}")
    if view["description"]:
        echo("")
        echo(view["description"])


def _rules(rules: list[dict[str, Any]]) -> str:
    import json

    return "; ".join(
        r["tool"] + (f" {json.dumps(r['inputs'], sort_keys=True)}" if "inputs" in r else "")
        for r in rules
    )


@role.command("create")
@click.argument("name")
@click.option("--job", required=True, help="The role's one job (a blank job writes nothing).")
@click.option("--label", help="How the role is shown (default: from the name).")
@click.option("--description", help="The durable description: standing rules.")
@click.option("--template", help="Start from a shipped template or a folder in templates/.")
@click.option("--level", type=float, help="Privilege level (default 0).")
@click.option("--delegation", type=click.Choice(["allow", "deny"]), help="Default: deny.")
@click.option("--produces", type=click.Choice(PRODUCES), help="What the role produces.")
def role_create(
    name: str,
    job: str,
    label: str | None,
    description: str | None,
    template: str | None,
    level: float | None,
    delegation: str | None,
    produces: str | None,
) -> None:
    """Create a role in .sdd/roles/NAME/ROLE.md."""
    from sdd_git.roles.manage import create

    path = create(
        current_root(),
        name,
        job,
        label=label,
        description=description,
        template=template,
        level=level,
        delegation=delegation,
        produces=produces,
    )
    say(f"created role {name}")
    click.echo(_relative(path))


@role.command("edit")
@click.argument("name")
@click.option("--job")
@click.option("--label")
@click.option("--description", help="Replace the durable description (the file's body).")
@click.option("--level", type=float)
@click.option("--delegation", type=click.Choice(["allow", "deny"]))
@click.option("--produces", type=click.Choice(PRODUCES))
def role_edit(
    name: str,
    job: str | None,
    label: str | None,
    description: str | None,
    level: float | None,
    delegation: str | None,
    produces: str | None,
) -> None:
    """Change fields of a role; with no option, open $EDITOR on its ROLE.md and check it after."""
    from sdd_git.roles import manage

    root = current_root()
    updates: dict[str, Any] = {}
    for key, value in (
        ("job", job),
        ("label", label),
        ("toolPolicy.delegation", delegation),
        ("produces", produces),
    ):
        if value is not None:
            updates[key] = value
    if level is not None:
        updates["level"] = int(level) if level.is_integer() else level
    if updates or description is not None:
        manage.edit(root, name, updates, description)
        say(f"updated role {name}")
        return
    working, resumed = manage.begin_editor_edit(root, name)
    if resumed:
        say(f"continuing your unsaved edit from {_relative(working)}")
    click.edit(filename=str(working))
    changed = manage.finish_editor_edit(root, name)
    say(f"updated role {name}" if changed else f"role {name} is unchanged")


def _flag_command(command: str, key: str, value: bool, help_text: str) -> None:
    @role.command(command, help=help_text)
    @click.argument("name")
    def run(name: str) -> None:
        from sdd_git.roles.manage import set_flag

        set_flag(current_root(), name, key, value)
        say(f"{name}: {key} {'on' if value else 'off'}")


_flag_command("pin", "pinned", True, "Keep a role at the top of the list.")
_flag_command("unpin", "pinned", False, "Stop pinning a role.")
_flag_command(
    "hide", "hidden", True, "Leave a role out of `role list` (its routines keep running)."
)
_flag_command("unhide", "hidden", False, "Show a hidden role again.")


@role.command("duplicate")
@click.argument("name")
def role_duplicate(name: str) -> None:
    """Copy a role as NAME-copy: profile, settings, skills, routines, boundary; no conversation."""
    from sdd_git.roles.manage import duplicate

    new_name = duplicate(current_root(), name)
    say(f"duplicated {name} as {new_name} (its conversation and memory stay behind)")
    click.echo(new_name)


@role.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask.")
def role_delete(name: str, yes: bool) -> None:
    """Remove a role's profile, routines, conversation and memory. Product files stay."""
    from sdd_git.roles.manage import delete

    root = current_root()
    if not yes:
        click.echo(
            f"Delete role {name} with its routines, conversation and memory? [y/N] ",
            nl=False,
            err=True,
        )
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            say("nothing was deleted")
            return
    deleted = delete(root, name)
    say(
        f"deleted {_relative(deleted.profile)}"
        + (f" and {_relative(deleted.local)}" if deleted.local else "")
    )


@role.command("share")
@click.argument("name")
@click.option("--force", is_flag=True, help="Replace templates/NAME/ if it exists.")
def role_share(name: str, force: bool) -> None:
    """Write templates/NAME/ for the team: job, description, skills, routines, boundary."""
    from sdd_git.roles.manage import share

    target = share(current_root(), name, force)
    say("shared without conversation, memory, logins or secrets; commit it to share it")
    click.echo(_relative(target))


@role.command("add")
@click.argument("source", metavar="DIR")
@click.option("--name", help="The new role's name (default: the template's).")
def role_add(source: str, name: str | None) -> None:
    """Add a template (a folder, a templates/ entry or a shipped one) as a new role."""
    from sdd_git.roles.manage import add

    new_name = add(current_root(), source, name)
    say(f"added role {new_name}")
    click.echo(new_name)


@role.command("validate")
@click.argument("path", required=False, type=click.Path(path_type=Path))
def role_validate(path: Path | None) -> None:
    """Check role files (default: every role and template of this repo)."""
    from sdd_git.errors import SddError
    from sdd_git.roles.manage import validate
    from sdd_git.root import find_root

    try:
        root = find_root(Path.cwd())
    except SddError:
        if path is None:
            raise
        root = None
    results = validate(root, path)
    failed = 0
    for checked in results:
        for problem in checked.problems:
            prefix = "error" if problem.severity == "error" else "warning"
            click.echo(f"{prefix}: {problem.render()}", err=True)
            if problem.hint and problem.severity == "error":
                click.echo(f"hint: {problem.hint}", err=True)
        failed += 0 if checked.ok else 1
    say(f"checked {len(results)} role file(s): {failed} with errors")
    if failed:
        sys.exit(1)


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
