"""Skills: folders with a SKILL.md (the Agent Skills standard)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sdd_git.cli.output import (
    current_root,
    current_root_unless,
    emit_json,
    json_option,
    say,
    shown_in_full,
    table,
)


def _warn(lines: tuple[str, ...] | list[str]) -> None:
    for line in lines:
        click.echo(line, err=True)


@click.group("skill")
def skill() -> None:
    """Skills: folders with a SKILL.md (the Agent Skills standard)."""


@skill.command("list")
@json_option
def skill_list(as_json: bool) -> None:
    """The product's skills, from .sdd/skills, .agents/skills, .claude/skills, .github/skills."""
    from sdd_git.roles.skills import discover

    root = current_root()
    catalog = discover(root.path)
    _warn(catalog.warnings)
    found = sorted(catalog.skills.values(), key=lambda s: s.name)
    empty = "no skills yet: add a folder with a SKILL.md to .sdd/skills/ (or .agents/skills/)"
    if shown_in_full(found, as_json, lambda s: s.as_json(root.path), empty):
        return
    table(
        [(s.name, s.source, " ".join(s.description.split())[:70]) for s in found],
        ("NAME", "FOUND IN", "DESCRIPTION"),
    )


@skill.command("show")
@click.argument("name")
@json_option
def skill_show(name: str, as_json: bool) -> None:
    """One skill: its frontmatter fields, its files and its instructions."""
    from sdd_git.errors import RecordError
    from sdd_git.roles.skills import body, discover, resources

    root = current_root()
    catalog = discover(root.path)
    found = catalog.get(name.removeprefix("/"))
    if found is None:
        known = ", ".join(sorted(catalog.skills)) or "none yet"
        raise RecordError(f"no skill '{name}' in this product", hint=f"its skills: {known}")
    files = resources(found, root.path)
    text = body(found, root.path)
    if as_json:
        emit_json({**found.as_json(root.path), "files": files, "body": text})
        return
    view = found.as_json(root.path)
    for key in ("name", "description", "path", "license", "compatibility"):
        if view[key]:
            click.echo(f"{key}: {view[key]}")
    if found.allowed_tools:
        # sdd reads it and grants nothing: the role's boundary decides every call.
        click.echo(f"allowed-tools: {' '.join(found.allowed_tools)} (not a grant in sdd)")
    for key, value in found.metadata.items():
        click.echo(f"metadata.{key}: {value}")
    if files:
        click.echo("files: " + ", ".join(files))
    click.echo("")
    click.echo(text)


@skill.command("validate")
@click.argument("path", required=False, type=click.Path(path_type=Path))
def skill_validate(path: Path | None) -> None:
    """Check SKILL.md files against the Agent Skills standard (default: the product's and its
    templates'). Errors name file, line and key."""
    from sdd_git.roles.skills import check_file, discover, files_to_check, for_role

    root = current_root_unless(path)
    paths = files_to_check(root.path if root else None, path)
    if path is not None and not paths:
        click.echo(f"error: no SKILL.md in {path}", err=True)
        click.echo("hint: a skill is a folder holding a SKILL.md; name it or its parent", err=True)
        sys.exit(1)
    failed = 0
    for file in paths:
        checked = check_file(file)
        for problem in checked.problems:
            prefix = "error" if problem.severity == "error" else "warning"
            click.echo(f"{prefix}: {problem.render()}", err=True)
            if problem.hint:
                click.echo(f"hint: {problem.hint}", err=True)
        failed += 0 if checked.ok else 1
    if path is None and root is not None:
        from sdd_git.roles.registry import load_registry

        catalog = discover(root.path)
        _warn([w for w in catalog.warnings if "is shadowed by" in w])
        for role in load_registry(root).roles:
            _warn(for_role(catalog, role.skills, role.path, root.path)[1])
    say(f"checked {len(paths)} skill file(s): {failed} with errors")
    if failed:
        sys.exit(1)


@skill.command("save")
@click.argument("name")
@click.option("--from", "run_id", metavar="RUN", help="The completed run to save as a draft.")
@click.option("--accept", is_flag=True, help="Make the draft NAME one of the product's skills.")
@click.option("--force", is_flag=True, help="Replace a draft or a skill of that name.")
def skill_save(name: str, run_id: str | None, accept: bool, force: bool) -> None:
    """Save a completed run as a draft skill (--from RUN NAME), then accept it (--accept NAME).

    The draft is .sdd/local/skill-drafts/NAME/SKILL.md: read and correct it first. Accepting
    moves it to .sdd/skills/NAME/, where runs find it."""
    from sdd_git.errors import UsageError
    from sdd_git.runner import skill_from_run

    if (run_id is None) == (not accept):
        raise UsageError(
            "say either --from RUN (save a draft) or --accept (accept the draft)",
            hint="sdd skill save --from RUN NAME, then: sdd skill save --accept NAME",
        )
    root = current_root()
    if accept:
        path = skill_from_run.accept_draft(root, name, force=force)
        click.echo(path.relative_to(root.path).as_posix())
        say(f"accepted the skill '{name}': runs find it now; a task calls it with /{name}")
        say(f"hint: give it to a role by adding {name} to skills: in its ROLE.md")
        return
    assert run_id is not None
    draft = skill_from_run.save_draft(root, run_id, name, force=force)
    click.echo(draft.path.relative_to(root.path).as_posix())
    say(f"saved a draft skill '{name}' from run {draft.run} of {draft.role}; no run sees it yet")
    if draft.replaces is not None:
        replaced = draft.replaces.relative_to(root.path).as_posix()
        say(f"note: accepting it with --force replaces the skill in {replaced}")
    say(f"hint: read and correct it, then accept it with: sdd skill save --accept {name}")
