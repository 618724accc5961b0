"""Saved files as an event source: a path a `file-changed GLOB` routine listens for writes
`file-changed`, and a role, skill or routine file is checked on save, its mistakes said with
file and line at once."""

from __future__ import annotations

from pathlib import Path

from sdd_git.errors import RecordError
from sdd_git.events.sources.emit import Emitter, stamp
from sdd_git.routines.routine import glob_matches

ROLE_FILES = (".sdd/roles/**/ROLE.md", "templates/*/ROLE.md")
ROUTINE_FILES = (".sdd/roles/*/routines/*.yaml", "templates/*/routines/*.yaml")


def file_changed(emit: Emitter, rel: str) -> int:
    return emit.write("file-changed", rel, None)


def check_file(emit: Emitter, path: Path, rel: str) -> None:
    """Check a role, skill or routine file that was saved, and say what is wrong at once."""
    if not path.is_file():
        return
    if any(glob_matches(g, rel) for g in ROLE_FILES):
        _check_role(emit, path, rel)
    elif path.name == "SKILL.md":
        _check_skill(emit, path, rel)
    elif any(glob_matches(g, rel) for g in ROUTINE_FILES):
        from sdd_git.routines.routine import read_routine

        try:
            read_routine(path, emit.root.path)
        except RecordError as exc:
            emit.problem(exc.message, exc.hint)
            return
        emit.say(f"{stamp()} ok: {rel}")


def _check_role(emit: Emitter, path: Path, rel: str) -> None:
    from sdd_git.roles.rolefile import RoleFileError, read_role

    try:
        parsed = read_role(path, folder_name=path.parent.name)
    except RoleFileError as exc:
        for problem in exc.problems:
            emit.problem(problem.render(), problem.hint)
        return
    except RecordError as exc:
        emit.problem(exc.message, exc.hint)
        return
    for warning in parsed.warnings:
        emit.problem(warning.render(), warning.hint, "warning")
    emit.say(f"{stamp()} ok: {rel}")


def _check_skill(emit: Emitter, path: Path, rel: str) -> None:
    from sdd_git.roles.skills import check_file as check_skill

    checked = check_skill(path)
    for problem in checked.problems:
        emit.problem(problem.render(), problem.hint, problem.severity)
    if checked.ok:
        emit.say(f"{stamp()} ok: {rel}")
