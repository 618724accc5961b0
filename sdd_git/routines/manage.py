"""The person's operations on routine files: create, edit, pause, resume, delete, list, show.

Every change is a person command (never from inside a role run, under the record's lock), is
checked by reading back exactly what is about to be written (a bad schedule or trigger is refused
with nothing written), keeps the person's comments and key order, and refreshes the hooks' index
so that the shell hooks know at once who listens."""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import beneath
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError, UsageError
from sdd_git.paths import display
from sdd_git.root import Root
from sdd_git.routines.routine import (
    NAME_PATTERN,
    Routine,
    find_routine,
    ledger_key,
    load_routines,
    parse_routine,
    read_routine,
    routines_folder,
    surface,
)
from sdd_git.sink import person_write, refuse_inside_run

MISSING_WORDS = "it is reported, never replaced by stale or cached data"
# What a key of the file is called on the command line, for errors about options.
_OPTIONS = {
    "on": "--on",
    "schedule": "--schedule",
    "input": "--input",
    "expected": "--expected",
    "name": "NAME",
    "boundary": "--ask-first",
}
_OPTION_HINTS = {
    "on": 'use --on pr-merged, --on main-build-failed, --on "push main" or --on '
    '"file-changed src/**"',
    "schedule": "five fields: minute hour day-of-month month weekday, "
    'e.g. --schedule "0 9 * * 1-5"',
    "input": 'say what the routine takes, in plain words: --input "the failed job\'s log"',
    "expected": 'say what it returns, in plain words: --expected "a short diagnosis"',
    "boundary": "--ask-first takes a tool name, e.g. --ask-first write_file",
}


@dataclass(frozen=True)
class Draft:
    """A routine checked and ready to write: what the person is shown and asked to confirm."""

    routine: Routine
    text: str


def refresh_index(root: Root) -> None:
    """Rewrite the hooks' index of listening routines."""
    from sdd_git.routines.hookindex import write_index

    write_index(root)


def draft(
    root: Root,
    role: str,
    name: str,
    *,
    on: str | None,
    schedule: str | None,
    input: str,
    expected: str,
    ask_first: Sequence[str] = (),
) -> Draft:
    """Check a new routine and render its file; nothing is written."""
    from sdd_git.roles.registry import find_role, repo_role_path

    if (on is None) == (schedule is None):
        raise UsageError(
            "a routine has exactly one trigger: --on EVENT or --schedule CRON",
            hint=_OPTION_HINTS["on"] + ', or --schedule "0 9 * * 1-5"',
        )
    if not NAME_PATTERN.match(name):
        raise UsageError(
            f"'{name}' is not a routine name", hint="use a-z, 0-9 and '-', e.g. main-build-watch"
        )
    profile, _ = find_role(root, role)
    if profile.path is None or not repo_role_path(root, role).is_file():
        raise UsageError(
            f"'{role}' is {profile.source}: routines belong to a role with a file in "
            f".sdd/roles/{role}/",
            hint="give the routine to a role of this repo (sdd role list shows them)",
        )
    path = routines_folder(root, role) / f"{name}.yaml"
    if path.exists():
        raise UsageError(
            f"{role} already has a routine '{name}' ({display(path)})",
            hint=f"change it with: sdd routine edit {role}/{name} ...",
        )
    fields: list[tuple[str, Any]] = [("name", name)]
    fields.append(("on", on) if on is not None else ("schedule", _quoted(schedule or "")))
    fields += [("input", _quoted(input)), ("expected", _quoted(expected))]
    if ask_first:
        fields.append(("boundary", _boundary(ask_first)))
    fields += [("when_source_missing", "report"), ("paused", False)]
    text = _dump(fields)
    routine = _from_options(path, text)
    for key, given in (("input", input), ("expected", expected)):
        if getattr(routine, key) != given.strip():
            raise UsageError(f"{_OPTIONS[key]}: these words could not be written and read back")
    return Draft(routine, text)


def create(root: Root, made: Draft) -> Routine:
    """Write a drafted routine; its name must still be free."""
    with person_write(root):
        path = made.routine.path
        if path.exists():
            raise UsageError(
                f"{made.routine.role} already has a routine '{made.routine.name}' "
                f"({display(path)})",
                hint=f"change it with: sdd routine edit {made.routine.role}/{made.routine.name}",
            )
        write_text_atomic(path, made.text)
        _confirm(root, read_routine(path, root.path), "sdd routine create")
    refresh_index(root)
    return made.routine


def edit(
    root: Root,
    name: str,
    *,
    on: str | None = None,
    schedule: str | None = None,
    input: str | None = None,
    expected: str | None = None,
) -> Routine:
    """Change a routine's trigger, input or expected result; checked before it is written."""
    if on is not None and schedule is not None:
        raise UsageError(
            "a routine has exactly one trigger: give --on or --schedule, not both",
            hint=_OPTION_HINTS["on"],
        )
    updates: dict[str, Any] = {}
    if on is not None:
        updates["on"] = on
    if schedule is not None:
        updates["schedule"] = _quoted(schedule)
    for key, value in (("input", input), ("expected", expected)):
        if value is not None:
            updates[key] = _quoted(value)
    if not updates:
        raise UsageError(
            "nothing to change",
            hint="give at least one of --on, --schedule, --input, --expected",
        )
    return _change(root, name, updates)


def set_paused(root: Root, name: str, paused: bool, *, confirms: bool = False) -> Routine:
    """Pause or resume a routine: a paused routine runs nothing when its event comes.
    `confirms`: she was shown the routine and said yes (`sdd routine resume`), so it is hers
    as it is; otherwise it is hers only if it was before (see `ledger.record_written`)."""
    return _change(root, name, {"paused": paused}, confirms=confirms)


def delete(root: Root, name: str) -> Routine:
    """Remove a routine's file. Its past runs stay in the run logs."""
    with person_write(root):
        routine = _find_file(root, name)
        routine.path.unlink()
    refresh_index(root)
    return routine


def show(root: Root, name: str) -> Routine:
    return find_routine(root, name)


def list_routines(root: Root) -> tuple[list[Routine], list[RecordError]]:
    """Every routine by role and name, and the problems of the files that do not load."""
    found, problems = load_routines(root)
    return sorted(found, key=lambda r: (r.role, r.name)), problems


def describe(root: Root, routine: Routine) -> list[tuple[str, str]]:
    """Every field of a routine, in plain words: what the person reads before confirming."""
    from sdd_git.roles.profile import Rule, rule_words
    from sdd_git.routines.fire import trigger_words
    from sdd_git.runner.words import visible

    lines = [
        ("routine", routine.name),
        ("owner", f"the role {routine.role}"),
        ("trigger", trigger_words(root, routine)),
        # A routine file may come with a cloned product: its words are shown as they are, a
        # terminal escape in them never hides the rest of what she reads.
        ("input", visible(routine.input, keep_newlines=False)),
        ("expected result", visible(routine.expected, keep_newlines=False)),
        ("when the source is missing", MISSING_WORDS),
    ]
    if routine.ask_first:
        rules = [Rule(str(r["tool"]), r.get("inputs")) for r in routine.ask_first]
        lines.append(("always asks first", "; ".join(rule_words(r) for r in rules)))
    lines.append(("paused", "yes" if routine.paused else "no"))
    return lines


def _change(root: Root, name: str, updates: dict[str, Any], confirms: bool = False) -> Routine:
    from sdd_git.trust import ledger

    with person_write(root):
        routine = _find_file(root, name)
        text = beneath.read_text(root.path, routine.path)
        new_text = _edited(routine.path, text, updates)
        changed = _from_options(routine.path, new_text)
        _same_but(routine, changed, updates)
        if new_text != text:
            write_text_atomic(routine.path, new_text)
        if confirms:
            _confirm(root, changed, "sdd routine resume")
        else:  # hers if it was hers before: an edit never confirms what a merge brought
            key = ledger_key(root, routine)
            ledger.record_written(root, key, surface(routine), surface(changed), "sdd routine edit")
    refresh_index(root)
    return changed


def _confirm(root: Root, routine: Routine, how: str) -> None:
    from sdd_git.trust import ledger

    ledger.record(root, [(ledger_key(root, routine), surface(routine))], how)


def _find_file(root: Root, name: str) -> Routine:
    refuse_inside_run()  # already refused by person_write; said here for the reader
    return find_routine(root, name)


def _same_but(before: Routine, after: Routine, updates: dict[str, Any]) -> None:
    """The edit changed what it was asked to, and nothing else (a YAML quirk could)."""
    touched = set(updates)
    if touched & {"on", "schedule"}:
        touched |= {"on", "schedule"}
    for field in dataclasses.fields(Routine):
        if field.name in touched:
            continue
        if getattr(before, field.name) != getattr(after, field.name):
            raise RecordError(
                f"{display(before.path)}: could not edit this file without changing '{field.name}'",
                hint="edit the file by hand, then check it with: sdd routine show "
                f"{before.role}/{before.name}",
            )
    for key in ("input", "expected"):
        if key in updates and getattr(after, key) != str(updates[key]).strip():
            raise UsageError(f"{_OPTIONS[key]}: these words could not be written and read back")


def _from_options(path: Path, text: str) -> Routine:
    """The routine `text` holds, read as every reader will read it; a problem is said in terms
    of the command's options, since the text is not written yet."""
    from sdd_git.yamlio import parse_yaml

    try:
        return parse_routine(parse_yaml(text, path), path, text)
    except RecordError as exc:
        message = re.sub(rf"^{re.escape(display(path))}:\d+:\s*", "", exc.message)
        key = re.match(r"key '([a-z_]+)':\s*", message)
        if key is None:
            raise UsageError(message, hint=exc.hint) from None
        option = _OPTIONS.get(key.group(1), key.group(1))
        raise UsageError(
            f"{option}: {message[key.end() :]}; nothing was written",
            hint=_OPTION_HINTS.get(key.group(1), exc.hint),
        ) from None


def _quoted(text: str) -> Any:
    """Free text, double-quoted: a YAML 1.1 reader and 1.2 writer then agree on every word."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    return DoubleQuotedScalarString(text)


def _boundary(tools: Sequence[str]) -> dict[str, Any]:
    return {"ask_first": [{"tool": tool} for tool in dict.fromkeys(tools)]}


def _editor() -> Any:
    from ruamel.yaml import YAML

    editor = YAML(typ="rt")
    editor.width = 4096
    editor.preserve_quotes = True
    return editor


def _dump(fields: list[tuple[str, Any]]) -> str:
    from ruamel.yaml.comments import CommentedMap

    document = CommentedMap()
    for key, value in fields:
        document[key] = value
    buffer = io.StringIO()
    _editor().dump(document, buffer)
    return buffer.getvalue()


def _edited(path: Path, text: str, updates: dict[str, Any]) -> str:
    """`text` with `updates` applied, comments and key order kept; a new trigger takes the
    place of the old one."""
    from sdd_git.yamlio import round_trip_load

    editor = _editor()
    document = round_trip_load(editor, text, path)
    if not hasattr(document, "insert"):
        raise RecordError(
            f"{display(path)}:1: a routine is a mapping of keys to values",
            hint="fix the file by hand: name:, on:, input:, expected:",
        )
    for key, value in updates.items():
        if key in ("on", "schedule"):
            triggers = [k for k in list(document) if k in ("on", "schedule") or k is True]
            if triggers and triggers != [key]:  # the other trigger: replaced where it stood
                position = list(document).index(triggers[0])
                for old in triggers:
                    del document[old]
                document.insert(position, key, value)
                continue
        document[key] = value  # in place: the comment at the end of its line stays
    buffer = io.StringIO()
    editor.dump(document, buffer)
    return buffer.getvalue()
