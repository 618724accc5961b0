"""`sdd role ...`: role files, the registry and the lattice (running a role comes later)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sdd_git.cli.complete import role_names
from sdd_git.cli.output import current_root, current_root_unless, emit_json, json_option, say, table

if TYPE_CHECKING:
    from sdd_git.roles.manage import Added, Confirm
    from sdd_git.roles.profile import RoleProfile, Rule

PRODUCES = ("reading", "scenario", "code", "release-notes", "plan", "review", "other")
_HOSTS = {"claude": "Claude Code", "copilot": "GitHub Copilot"}


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
    from sdd_git.cli.progress import SlowBar
    from sdd_git.roles.registry import load_registry

    bar = SlowBar("reading role files")
    try:
        registry = load_registry(current_root(), progress=bar)
    finally:
        bar.done()
    _warn(registry.warnings)
    roles = [r for r in registry.roles if show_all or not r.hidden]
    roles.sort(key=lambda r: (not r.pinned, r.label.casefold(), r.name))
    if as_json:
        emit_json([_list_row(r, registry.roles) for r in roles])
        return
    rows = [
        (
            ("* " if r.pinned else "  ") + r.name,
            r.label,
            r.level_text,
            r.delegation,
            r.source
            + (" (hidden)" if r.hidden else "")
            + (" (not confirmed)" if r.trust is not None and not r.trust.counts else ""),
            r.job,
        )
        for r in roles
    ]
    table(rows, ("  NAME", "LABEL", "LEVEL", "DELEGATION", "SOURCE", "JOB"))


def _list_row(r: RoleProfile, roles: tuple[RoleProfile, ...]) -> dict[str, Any]:
    from sdd_git.roles.lattice import spawnable

    row: dict[str, Any] = {
        "name": r.name,
        "label": r.label,
        "job": r.job,
        "level": r.level_shown,
        "delegation": r.delegation,
        "spawnable": spawnable(r, roles),
        "pinned": r.pinned,
        "hidden": r.hidden,
        "source": r.source,
    }
    if r.trust is not None:
        # Added for every role file not shipped with sdd: whether she confirmed what it grants
        # ("trusted"), or not ("untrusted", "changed": see `sdd trust review`).
        row["trust"] = r.trust.state
    elif r.source not in ("builtin", "template"):
        row["trust"] = "trusted"
    return row


@role.command("show")
@click.argument("name", shell_complete=role_names)
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
        f"level: {view['level']}   delegation: {view['delegation']}   produces: "
        + (view["produces"] or "not said (read and draft tools only)")
    )
    if view["scope"]:
        echo(f"scope: {view['scope']}")
    echo(f"may spawn: {', '.join(view['spawnable']) or 'nothing'}")
    flags = [f for f in ("pinned", "hidden") if view[f]]
    if flags:
        echo("flags: " + ", ".join(flags))
    if view["skills"]:
        echo("skills: " + ", ".join(view["skills"]))
    tools = view.get("tools")
    echo("tools: " + ("all" if tools is None else ", ".join(tools) or "none"))
    boundary = view["boundary"]
    echo("always allow: " + (_rules(boundary["always_allow"]) or "nothing"))
    echo("ask first: " + (_rules(boundary["ask_first"]) or "nothing"))
    _show_trust(view)
    echo("routines: " + (", ".join(view["routines"]) or "none"))
    echo("recent runs: " + (", ".join(view["recent_runs"]) or "none"))
    if view["path"]:
        host = _HOSTS.get(view["source"])
        owner = f" ({host}'s file, read where it is; sdd edits only its own keys)" if host else ""
        echo(f"file: {view['path']}{owner}")
    if view["description"]:
        echo("")
        echo(view["description"])


def _rules(rules: list[dict[str, Any]]) -> str:
    import json

    def one(rule: dict[str, Any]) -> str:
        if "prefix" in rule:  # a command-prefix rule: never shown as the whole tool
            return f"{rule['tool']} prefix {json.dumps(' '.join(rule['prefix']))}"
        shown = f" {json.dumps(rule['inputs'], sort_keys=True)}" if "inputs" in rule else ""
        return f"{rule['tool']}{shown}"

    return "; ".join(one(r) for r in rules)


def _show_trust(view: dict[str, Any]) -> None:
    """Whether she confirmed what the role's file grants, and how to confirm it."""
    from sdd_git.trust.words import role_changes

    trust = view.get("trust")
    if not trust:
        if view.get("source") not in ("builtin", "template"):
            click.echo("trust: you confirmed what this file grants; it counts")
        return
    if trust["state"] == "trusted":
        when = f" at {trust['at']}" if trust.get("at") else ""
        click.echo(f"trust: you confirmed what this file grants{when}; it counts")
        return
    why = (
        "it changed since you confirmed it"
        if trust["state"] == "changed"
        else ("you have not confirmed it")
    )
    click.echo(f"trust: what this file grants does not count yet ({why}); it grants:")
    for line in role_changes(None, trust.get("surface")):
        click.echo(f"  - {line}")
    click.echo(f"  to confirm it: sdd role trust {view['name']}, or sdd trust review")


def _in_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _answer(question: str) -> str | None:
    """Her answer to a [y/N] question, read from stdin, terminal or not; None at end of input."""
    click.echo(f"{question} [y/N] ", nl=False, err=True)
    line = sys.stdin.readline()
    if not line or not sys.stdin.isatty():
        click.echo("", err=True)  # a terminal echoes her Enter; a pipe or end of input does not
    return line.strip().lower() if line else None


def _list_rules(rules: tuple[Rule, ...], intro: str) -> None:
    from sdd_git.roles.profile import rule_words

    say(intro)
    for rule in rules:
        say(f"  - {rule_words(rule)}")


def _rules_question(yes: bool) -> Confirm:
    """Shows everything a template grants (rules, model, level, ...) and asks whether to keep
    it (`--yes`: kept)."""

    def confirm(lines: list[str], where: Path) -> bool:
        say(f"{_relative(where)} grants the role:")
        for line in lines:
            say(f"  - {line}")
        if yes:
            return True
        return _answer("Keep what it grants?") in ("y", "yes")

    return confirm


def _report_rules(added: Added, again: str) -> None:
    """What became of a template's always_allow rules; `again`: how to add it keeping them."""
    if added.paused_routines:
        names = ", ".join(f"{added.name}/{r}" for r in added.paused_routines)
        say(f"its routines arrived paused: {names}; read each (sdd routine show NAME), then "
            "resume it (sdd routine resume NAME)")  # fmt: skip
    if added.kept:
        say(f"kept {len(added.kept)} always_allow rule(s): they count for {added.name}")
    if added.left_out:
        say(
            f"left out {len(added.left_out)} always_allow rule(s) you did not confirm: "
            f"{added.name} asks you before those actions"
        )
        say(
            f"hint: to keep them, {again} (after `sdd role delete {added.name} --yes`), "
            "or answer its stop with `sdd allow STOP --always`"
        )
    if not added.confirmed:
        say(
            f"what else {added.name}'s file grants waits for your confirmation: nothing of it "
            "counts, and the role does not run, until you confirm it (sdd trust review)"
        )


@role.command("create")
@click.argument("name", shell_complete=role_names)
@click.option("--job", required=True, help="The role's one job (a blank job writes nothing).")
@click.option("--label", help="How the role is shown (default: from the name).")
@click.option("--description", help="The durable description: standing rules.")
@click.option("--template", help="Start from a shipped template or a folder in templates/.")
@click.option("--level", type=float, help="Privilege level (default 0).")
@click.option("--delegation", type=click.Choice(["allow", "deny"]), help="Default: deny.")
@click.option(
    "--produces",
    type=click.Choice(PRODUCES),
    help="What the role produces (asked in a terminal; needed otherwise, unless --template).",
)
@click.option(
    "--yes", is_flag=True, help="Keep a shared template's always_allow rules without asking."
)
def role_create(
    name: str,
    job: str,
    label: str | None,
    description: str | None,
    template: str | None,
    level: float | None,
    delegation: str | None,
    produces: str | None,
    yes: bool,
) -> None:
    """Create a role in .sdd/roles/NAME/ROLE.md."""
    from sdd_git.roles.manage import create

    root = current_root()
    if produces is None and template is None and job.strip() and _in_terminal():
        # What it produces decides the tools it is offered: asked, never assumed.
        produces = click.prompt(
            f"What does {name} produce? (code: write files, run commands, commit and push; "
            "review: read only; other: every tool)",
            type=click.Choice(PRODUCES),
            err=True,
        )
    added = create(
        root,
        name,
        job,
        label=label,
        description=description,
        template=template,
        level=level,
        delegation=delegation,
        produces=produces,
        confirm=_rules_question(yes),
    )
    if template is not None:
        _refresh_routine_index(root)  # a template's routines listen once created
    say(f"created role {name}")
    if template is not None:
        _report_rules(added, "create it again with --yes")
    click.echo(_relative(added.path))


@role.command("edit")
@click.argument("name", shell_complete=role_names)
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
    given = {"job": job, "label": label, "toolPolicy.delegation": delegation, "produces": produces}
    updates: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
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
    @click.argument("name", shell_complete=role_names)
    def run(name: str) -> None:
        from sdd_git.roles.manage import set_flag

        written = set_flag(current_root(), name, key, value)
        said = f"{name}: {key} {'on' if value else 'off'}"
        if written.name == "role-view.json":
            said += " (in your view of this product's roles; its own file is unchanged)"
        say(said)


_flag_command("pin", "pinned", True, "Keep a role at the top of the list.")
_flag_command("unpin", "pinned", False, "Stop pinning a role.")
_flag_command(
    "hide", "hidden", True, "Leave a role out of `role list` (its routines keep running)."
)
_flag_command("unhide", "hidden", False, "Show a hidden role again.")


@role.command("duplicate")
@click.argument("name", shell_complete=role_names)
def role_duplicate(name: str) -> None:
    """Copy a role as NAME-copy: profile, settings, skills, routines, boundary; no conversation."""
    from sdd_git.roles.manage import duplicate

    root = current_root()
    added = duplicate(root, name)
    _refresh_routine_index(root)  # the copy's routines listen too
    say(f"duplicated {name} as {added.name} (its conversation and memory stay behind)")
    if added.left_out:
        say(
            f"left out {len(added.left_out)} always_allow rule(s) of the pack {name} that you "
            f"have not trusted (`sdd role trust {name}` first to copy them)"
        )
    click.echo(added.name)


@role.command("delete")
@click.argument("name", shell_complete=role_names)
@click.option("--yes", is_flag=True, help="Do not ask.")
def role_delete(name: str, yes: bool) -> None:
    """Remove a role's profile, routines, conversation and memory. Product files stay."""
    from sdd_git.errors import UsageError
    from sdd_git.roles.manage import delete

    root = current_root()
    if not yes:
        answer = _answer(f"Delete role {name} with its routines, conversation and memory?")
        if answer is None:
            raise UsageError(
                "no answer: nothing was deleted",
                hint=f"to delete without asking: sdd role delete {name} --yes",
            )
        if answer not in ("y", "yes"):
            say("nothing was deleted")
            return
    deleted = delete(root, name)
    _refresh_routine_index(root)  # its routines went with it
    say(
        f"deleted {_relative(deleted.profile)}"
        + (f" and {_relative(deleted.local)}" if deleted.local else "")
    )


@role.command("share")
@click.argument("name", shell_complete=role_names)
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
@click.option("--yes", is_flag=True, help="Keep the template's always_allow rules without asking.")
def role_add(source: str, name: str | None, yes: bool) -> None:
    """Add a template (a folder, a templates/ entry, a shipped one, or a single role file such
    as another host's .claude/agents/NAME.md) as a new role.

    Rules that let the role act without asking (boundary.always_allow) are listed, and kept
    only if you answer yes (or pass --yes); with any other answer, the role is added without
    them."""
    from sdd_git.roles.manage import add

    root = current_root()
    added = add(root, source, name, _rules_question(yes))
    _refresh_routine_index(root)  # a template's routines listen once added
    say(f"added role {added.name}")
    _report_rules(added, f"add the template again with `sdd role add {source} --yes`")
    click.echo(added.name)


@role.command("trust")
@click.argument("name", shell_complete=role_names)
@click.option("--yes", is_flag=True, help="Confirm without asking.")
def role_trust(name: str, yes: bool) -> None:
    """Confirm what a role's file grants (its rules, model, level, ...), as shown here.

    A file that is not shipped with sdd (this repo's roles, another host's agent files, your
    packs) grants only once you confirm it, and only while it stays as you confirmed it."""
    from sdd_git.roles import manage
    from sdd_git.roles.registry import find_role
    from sdd_git.sink import refuse_inside_run
    from sdd_git.trust.words import role_changes

    refuse_inside_run()  # before the question: a role run never gets to answer it
    root = current_root()
    profile, warnings = find_role(root, name)
    _warn(warnings)
    trust = profile.trust
    if trust is None and profile.source in ("builtin", "template"):
        say(f"{name} is shipped with sdd; nothing to confirm")
        return
    if trust is None or trust.counts:
        say(f"you confirmed what {name}'s file grants already; it counts")
        return
    say(f"{trust.source} grants {name}:")
    for line in role_changes(None, trust.surface):
        say(f"  - {line}")
    how = "sdd role trust --yes"
    if not yes:
        answer = _answer("Confirm what it grants?")
        if answer not in ("y", "yes"):
            # As with `sdd role add`: no answer is not a yes, and not an error either.
            say(f"nothing was recorded; what {name}'s file grants still does not count")
            say(f"hint: to confirm it: sdd role trust {name}, and answer y (or pass --yes)")
            return
        how = f"sdd role trust, answered {answer}"
    manage.trust(root, profile, how)
    say(f"confirmed what {name}'s file grants: it counts until the file changes it")


@role.command("rules")
@click.argument("name", shell_complete=role_names)
@click.option(
    "--revoke",
    type=int,
    metavar="N",
    help="Take rule N (as listed) out of the role's file; a person command.",
)
@json_option
def role_rules(name: str, revoke: int | None, as_json: bool) -> None:
    """List the role's saved rules (always allow, ask first), numbered from 1: what each
    allows, when and from which stop it was saved, and whether it counts."""
    from sdd_git.roles import rules

    root = current_root()
    if revoke is not None:
        from sdd_git.sink import refuse_inside_run

        refuse_inside_run()
        gone = rules.revoke(root, name, revoke)
        if as_json:
            emit_json({"role": name, "revoked": gone.as_json()})
        else:
            say(f"revoked rule {gone.number} of {name}: {gone.words()}")
        return
    _, listed = rules.list_rules(root, name)
    if as_json:
        emit_json({"role": name, "rules": [r.as_json() for r in listed]})
        return
    if not listed:
        say(f"{name} has no saved rule: every consequential action stops for you")
        return
    for item in listed:
        counts = (
            "" if item.counts else "  (does not count until you confirm the file: sdd trust review)"
        )
        click.echo(f"{item.number}. {item.words()}")
        click.echo(f"   {item.origin()}{counts}")


@role.command("validate")
@click.argument("path", required=False, type=click.Path(path_type=Path))
def role_validate(path: Path | None) -> None:
    """Check role files (default: every role and template of this repo)."""
    from sdd_git.roles.manage import validate

    root = current_root_unless(path)
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


def _refresh_routine_index(root: Any) -> None:
    """Routines came or went with a role: the git hooks' index of who listens follows."""
    from sdd_git.routines.manage import refresh_index

    refresh_index(root)


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
