"""A routine file, `.sdd/roles/ROLE/routines/NAME.yaml`: what fires it, what it takes and returns.

A routine belongs to one role. Its trigger is `on:` (main-build-failed, pr-merged, `push BRANCH`,
`file-changed GLOB`) or `schedule:` (cron). Its boundary may only add stops (`ask_first`): a rule
that widens what a role may do comes from the person's role file, never from a routine. A problem
names the file, the line and the key, and says how to fix it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import beneath
from sdd_git.errors import RecordError, UsageError
from sdd_git.paths import display
from sdd_git.root import Root
from sdd_git.routines.triggers import KINDS, ON_TRIGGERS
from sdd_git.routines.triggers import Event as Event  # re-exported: readers name it here
from sdd_git.trust.ledger import Ledger
from sdd_git.trust.pending import Unconfirmed
from sdd_git.trust.words import mapping_changes

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,63}\Z")
KEYS = ("name", "on", "schedule", "input", "expected", "boundary", "when_source_missing", "paused")
_BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}\Z")


@dataclass(frozen=True)
class Routine:
    name: str
    role: str
    path: Path
    input: str
    expected: str
    on: str | None = None  # "pr-merged", "push main", "file-changed src/**", ...
    schedule: str | None = None  # cron, five fields
    ask_first: tuple[dict[str, Any], ...] = ()  # rules that add stops, as {tool, inputs?}
    paused: bool = False
    when_source_missing: str = "report"

    @property
    def trigger(self) -> str:
        return f"on: {self.on}" if self.on is not None else f"schedule: {self.schedule}"

    @property
    def event_kind(self) -> str:
        return "schedule" if self.on is None else self.on.split(" ", 1)[0]

    @property
    def argument(self) -> str | None:
        """The branch of `push BRANCH`, the glob of `file-changed GLOB`."""
        if self.on is None or " " not in self.on:
            return None
        return self.on.split(" ", 1)[1]

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "trigger": self.trigger,
            "paused": self.paused,
            "input": self.input,
            "expected": self.expected,
            "when_source_missing": self.when_source_missing,
            "ask_first": list(self.ask_first),
            "path": str(self.path),
        }


def main_branch(root: Root) -> str:
    """`main_branch:` in `.sdd/config.yaml`, or `main`."""
    from sdd_git.settings import settings

    found = settings(root)
    value = found.get("main_branch", "main")
    if not isinstance(value, str) or not _BRANCH.match(value) or ".." in value:
        raise RecordError(
            f"{found.where('main_branch')}: key 'main_branch' must be a branch name, not {value!r}",
            hint="write main_branch: main",
        )
    return value


def glob_matches(pattern: str, path: str) -> bool:
    """A path glob as people write them: `*` within one folder, `**` across folders."""
    out = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.fullmatch("".join(out), path) is not None


def listens(routine: Routine, event: Event) -> bool:
    """Whether this routine runs for this event, paused or not (the caller decides on pausing)."""
    if routine.event_kind != event.kind:
        return False
    # An event addressed to one routine (a schedule slot, `sdd routine fire`) is that
    # routine's alone: a worker never runs the other listeners for it.
    if event.routine is not None or event.kind == "schedule":
        return event.routine in (routine.name, f"{routine.role}/{routine.name}")
    if event.kind == "push":
        return event.branch == routine.argument
    if event.kind == "file-changed":
        return routine.argument is not None and glob_matches(routine.argument, event.ref)
    return True


def routines_folder(root: Root, role: str) -> Path:
    return root.sdd / "roles" / role / "routines"


def routine_paths(root: Root, refused: list[str] | None = None) -> list[Path]:
    """Each routine file, `.sdd/roles/ROLE/routines/NAME.yaml`. A link (a routines folder, a
    routine file) is never followed: it is said in `refused`. (A role folder that is a link is
    said by the role list, and holds no routine here.)"""
    found: list[Path] = []
    said: list[str] = []
    roles: tuple[str, ...] = ()
    try:
        roles = beneath.entries(root.path, ".sdd/roles").folders
    except beneath.Refused as exc:
        said.append(exc.message)
    for role in roles:
        try:
            listed = beneath.entries(root.path, f".sdd/roles/{role}/routines")
        except beneath.Refused as exc:
            said.append(exc.message)
            continue
        said.extend(listed.refused)
        found += [root.sdd / "roles" / role / "routines" / n for n in listed.files]
    if refused is not None:
        refused.extend(said)
    return sorted(p for p in found if p.suffix == ".yaml")


def load_routines(root: Root) -> tuple[list[Routine], list[RecordError]]:
    """Every routine of the root, and the problems of the files that do not load (a link
    among them: refused, and said)."""
    found: list[Routine] = []
    refused: list[str] = []
    paths = routine_paths(root, refused)
    problems: list[RecordError] = [beneath.Refused(why) for why in refused]
    for path in paths:
        try:
            found.append(read_routine(path, root.path))
        except RecordError as exc:
            problems.append(exc)
    return found, problems


def find_routine(root: Root, name: str) -> Routine:
    """`NAME`, or `ROLE/NAME` when two roles have a routine of that name (a copied role)."""
    role, _, bare = name.rpartition("/")
    routines, problems = load_routines(root)
    matches = [r for r in routines if r.name == bare and (not role or r.role == role)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UsageError(
            f"more than one role has a routine '{bare}': "
            + ", ".join(f"{r.role}/{r.name}" for r in matches),
            hint=f"name it with its role, e.g. {matches[0].role}/{bare}",
        )
    for problem in problems:  # the routine may be there, in a file that does not load
        if Path(str(problem).split(":", 1)[0]).stem == bare:
            raise problem
    raise UsageError(
        f"no routine '{name}'",
        hint="see the routines with: sdd routine list",
    )


def _key_line(text: str, key: str) -> int:
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    return text[: match.start()].count("\n") + 1 if match else 1


def read_routine(path: Path, within: Path | None = None) -> Routine:
    """The routine file at `path`, read with no link followed beneath `within`, the product
    holding it. Not given: the product whose `.sdd/roles/ROLE/routines/NAME.yaml` it is, or
    none for a file elsewhere (one she named)."""
    from sdd_git.yamlio import parse_yaml

    parts = path.parts
    if within is None and len(parts) > 5 and parts[-5:-3] == (".sdd", "roles"):
        within = path.parents[4] if parts[-2] == "routines" else None

    try:
        if within is not None:
            text = beneath.read_text(within, path)
        else:
            text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{display(path)}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise RecordError(f"{display(path)}: cannot be read ({exc.strerror})") from None
    return parse_routine(parse_yaml(text, path), path, text)


def parse_routine(data: Any, path: Path, text: str = "") -> Routine:
    """Check a routine's fields; the first problem raises, with file, line and key."""
    where = display(path)

    def fail(key: str | None, message: str, hint: str) -> RecordError:
        line = _key_line(text, key) if key else 1
        at = f" key '{key}':" if key else ""
        return RecordError(f"{where}:{line}:{at} {message}", hint=hint)

    if not isinstance(data, dict):
        raise fail(None, "a routine is a mapping of keys to values", "write name:, on:, input:")
    if True in data:  # `on:` read by a YAML 1.1 loader is the boolean True
        data = {("on" if k is True else k): v for k, v in data.items()}
    for key in data:
        if key not in KEYS:
            raise fail(str(key), f"unknown key '{key}'", "the keys are: " + ", ".join(KEYS))
    role = path.parent.parent.name
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise fail("name", f"'{name}' is not a routine name", "use a-z, 0-9 and '-', e.g. nightly")
    if name != path.stem:
        raise fail("name", f"the name '{name}' differs from the file's ({path.stem})",
                   f"write name: {path.stem}, or rename the file to {name}.yaml")  # fmt: skip
    on, schedule = data.get("on"), data.get("schedule")
    if (on is None) == (schedule is None):
        raise fail(
            "on" if on is not None else None,
            "a routine has exactly one trigger: on: or schedule:",
            'write on: pr-merged (or main-build-failed, push main, file-changed "src/**"), '
            'or schedule: "0 9 * * 1-5"',
        )
    if on is not None:
        on = _check_on(on, fail)
    if schedule is not None:
        schedule = _check_schedule(schedule, fail)
    texts = {}
    for key in ("input", "expected"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise fail(key if key in data else None, f"'{key}' must be a sentence",
                       f'write {key}: "..." in plain words')  # fmt: skip
        texts[key] = value.strip()
    missing = data.get("when_source_missing", "report")
    if missing != "report":
        raise fail(
            "when_source_missing",
            f"'{missing}' is not allowed: a missing source is reported, never replaced",
            "write when_source_missing: report",
        )
    paused = data.get("paused", False)
    if not isinstance(paused, bool):
        raise fail("paused", f"must be true or false, not {paused!r}", "write paused: false")
    return Routine(
        name=name,
        role=role,
        path=path,
        input=texts["input"],
        expected=texts["expected"],
        on=on,
        schedule=schedule,
        ask_first=_check_boundary(data.get("boundary"), fail),
        paused=paused,
    )


def _one_line(value: Any, key: str, fail: Any, hint: str) -> str:
    """A trigger's text, on one line. It goes into the hooks' index, one line each, and onto
    screens and CI files: a line break or a terminal escape in it would write lines of its own
    there."""
    if not isinstance(value, str):
        raise fail(key, f"must be text, not {value!r}", hint)
    if _unprintable(value.strip()):
        raise fail(key, f"{value!r} holds a control character or a line break", hint)
    return value


def _check_on(value: Any, fail: Any) -> str:
    hint = 'write on: pr-merged, main-build-failed, push main, or file-changed "src/**"'
    value = _one_line(value, "on", fail, hint)
    words = value.strip().split(None, 1)
    kind = words[0] if words else ""
    if kind not in ON_TRIGGERS:
        raise fail("on", f"'{value}' is not a trigger", hint)
    argument = words[1].strip().strip("'\"") if len(words) > 1 else ""
    takes = KINDS[kind].argument
    if takes and not argument:
        raise fail("on", f"'{kind}' needs a {takes}", hint)
    if not takes and argument:
        raise fail("on", f"'{kind}' takes nothing after it", hint)
    if kind == "push" and (not _BRANCH.match(argument) or ".." in argument):
        raise fail("on", f"'{argument}' is not a branch name", "write on: push main")
    if kind == "file-changed" and (argument.startswith("/") or ".." in argument.split("/")):
        raise fail("on", f"'{argument}' must be a glob inside the product", 'e.g. "src/**"')
    return f"{kind} {argument}" if argument else kind


def _check_schedule(value: Any, fail: Any) -> str:
    from cronsim import CronSim, CronSimError

    hint = 'five fields: minute hour day month weekday, e.g. schedule: "0 9 * * 1-5"'
    text = _one_line(value, "schedule", fail, hint)
    from datetime import UTC, datetime

    try:
        CronSim(text, datetime.now(UTC))
    except CronSimError as exc:
        raise fail("schedule", f"'{text}' is not a schedule: {exc}", hint) from None
    return text.strip()


def _unprintable(text: str) -> bool:
    """Control, format (bidi, zero-width) and line or paragraph separator characters."""
    import unicodedata

    return any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text)


def _check_boundary(value: Any, fail: Any) -> tuple[dict[str, Any], ...]:
    from sdd_git.toolnames import TOOL_CLASSES

    if value is None:
        return ()
    hint = "a routine may only add stops: boundary: {ask_first: [{tool: write_file}]}"
    if not isinstance(value, dict) or set(value) - {"ask_first"}:
        raise fail("boundary", "only ask_first rules are allowed in a routine", hint)
    rules = value.get("ask_first") or []
    if not isinstance(rules, list):
        raise fail("boundary", "ask_first must be a list of rules", hint)
    out = []
    for rule in rules:
        if not isinstance(rule, dict) or rule.get("tool") not in TOOL_CLASSES:
            raise fail("boundary", f"{rule!r} is not a rule naming a tool", hint)
        if set(rule) - {"tool", "inputs"} or not isinstance(rule.get("inputs", {}), dict):
            raise fail("boundary", f"{rule!r}: a rule holds tool and inputs only", hint)
        out.append(dict(rule))
    return tuple(out)


def ledger_key(root: Root, routine: Routine) -> str:
    """The routine's file as her trust ledger names it: its path in the product."""
    try:
        return routine.path.resolve().relative_to(root.path).as_posix()
    except ValueError:
        return str(routine.path)


def surface(routine: Routine) -> dict[str, Any]:
    """A routine's grant surface: the whole routine as it loads (comments grant nothing)."""
    return {
        "name": routine.name,
        "role": routine.role,
        "on": routine.on,
        "schedule": routine.schedule,
        "input": routine.input,
        "expected": routine.expected,
        "ask_first": [dict(r) for r in routine.ask_first],
        "paused": routine.paused,
        "when_source_missing": routine.when_source_missing,
    }


def pending_item(root: Root, routine: Routine, ledger: Ledger | None) -> Unconfirmed | None:
    """The routine when she has not confirmed it as it is (None: confirmed, or a CI engine)."""
    key = ledger_key(root, routine)
    now = surface(routine)
    if ledger is None or ledger.confirmed(key, now):
        return None
    before = ledger.before(key)
    changes = [new_routine_words(routine)] if before is None else mapping_changes(before, now)
    return Unconfirmed(
        key, "routine", f"routine {routine.role}/{routine.name}", tuple(changes), now, routine.path
    )


def new_routine_words(routine: Routine) -> str:
    """A routine she has not seen, in one line: who it starts, when, with what."""
    from sdd_git.trust.words import rule, shown

    said = (
        f"new to you: it starts the role {routine.role} {routine.trigger}, with the input "
        f"{shown(routine.input)}, expecting {shown(routine.expected)}"
    )
    if routine.ask_first:
        said += "; it always asks first before " + ", ".join(rule(r) for r in routine.ask_first)
    return said + ("; it is paused" if routine.paused else "")
