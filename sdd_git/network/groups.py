"""Groups: the roles of one change, or of one connection spec, that the person talks to at once.

`sdd group create NAME --change CH | --connection SPEC` names a group; `sdd group say NAME "..."`
puts her message into each member's own conversation, marked with the group; `sdd group show`
lists the members and the group's messages. Members are worked out from the record each time, so
a role that starts working on the change later joins the group:

- of a change: the roles whose runs worked on it (`run_started.change` in the run logs), and the
  roles its route and its plan name;
- of a connection spec: the owners of its two sides.

A group is local state (`.sdd/local/groups/NAME.json`), like a conversation. Approval requests
and drafts are never copied to a group: they stay in each role's direct conversation.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdd_git import lockfile, statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError, SddError, UsageError
from sdd_git.recordjson import record_json
from sdd_git.roles.profile import NAME_PATTERN
from sdd_git.root import Root

GROUP_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}\Z")  # \Z, not `$`: no final newline
MESSAGE_LIMIT = 20_000


@dataclass(frozen=True)
class Group:
    name: str
    change: str | None  # a change's group, or
    connection: str | None  # a connection spec's group
    created_at: str
    members: tuple[str, ...]
    unknown: tuple[str, ...] = ()  # roles the record names that do not exist (left out)
    messages: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def source(self) -> str:
        return f"change {self.change}" if self.change else f"connection {self.connection}"

    def as_json(self) -> dict[str, Any]:
        return record_json(self)


def groups_folder(root: Root) -> Path:
    return root.local / "groups"


def group_path(root: Root, name: str) -> Path:
    return groups_folder(root) / f"{check_name(name)}.json"


def check_name(name: str) -> str:
    if not GROUP_NAME.match(name):
        raise UsageError(
            f"'{name}' is not a group name",
            hint="use lowercase letters, digits and '-', 1-40 characters (e.g. expenses-billing)",
        )
    return name


def create(
    root: Root, name: str, *, change: str | None = None, connection: str | None = None
) -> Group:
    """A new group of one change or one connection spec (person command)."""
    from sdd_git.records.decisions import now_iso
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    if (change is None) == (connection is None):
        raise UsageError(
            "a group is of one change or of one connection spec",
            hint="sdd group create NAME --change CH-0001, or --connection SPEC-0002",
        )
    path = group_path(root, name)
    with lockfile.hold(_lock(root, name)):
        if path.exists():
            raise RecordError(
                f"group {name} already exists", hint=f"see it with: sdd group show {name}"
            )
        if change is not None:
            change = _change(root, change)
        else:
            connection = _connection(root, str(connection))
        members, unknown = _members(root, change, connection)
        if not members:
            raise RecordError(
                f"{'change ' + str(change) if change else 'connection ' + str(connection)} has "
                "no roles yet: no run worked on it and nothing in the record names an owner",
                hint="run a role on it first (sdd work CH, or sdd role run NAME --change CH)",
            )
        group = Group(name, change, connection, now_iso(), members, unknown)
        _save(path, group)
    return group


def load(root: Root, name: str) -> Group:
    """The group as saved, with its members worked out again from the record."""
    path = group_path(root, name)
    if not path.is_file():
        raise RecordError(
            f"no group {name}",
            hint="create it: sdd group create NAME --change CH (or --connection SPEC)",
        )
    try:
        data = json.loads(statefolders.read_text(path))
        change, connection = data.get("change"), data.get("connection")
        saved = Group(
            str(data["name"]),
            str(change) if change else None,
            str(connection) if connection else None,
            str(data.get("created_at") or ""),
            tuple(str(m) for m in data.get("members") or ()),
            (),
            tuple(m for m in data.get("messages") or () if isinstance(m, dict)),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RecordError(f"{path}: not a group file ({exc})") from None
    try:
        members, unknown = _members(root, saved.change, saved.connection)
    except SddError:
        return saved  # the change or spec is gone or broken: the members as last saved
    return Group(
        saved.name,
        saved.change,
        saved.connection,
        saved.created_at,
        members,
        unknown,
        saved.messages,
    )


def say(root: Root, name: str, text: str) -> tuple[dict[str, Any], Group]:
    """The person's message, into each member's conversation (person command). Gives back the
    group's record of the message and the group."""
    from sdd_git.connectors.tokens import masker_for
    from sdd_git.records.decisions import now_iso
    from sdd_git.runner import conversation
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    text = text.strip()
    if not text:
        raise UsageError("the message is empty", hint=f'sdd group say {name} "..."')
    if len(text) > MESSAGE_LIMIT:
        raise UsageError(
            f"the message is {len(text):,} characters; a group message takes at most "
            f"{MESSAGE_LIMIT:,}"
        )
    mask = masker_for(root.path)
    text = mask(text)
    with lockfile.hold(_lock(root, name)):
        group = load(root, name)
        number = f"G{len(group.messages) + 1}"
        reached: list[dict[str, str]] = []
        for member in group.members:
            fields = {"from": "person", "group": name, "group_message": number, "text": text}
            sent = conversation.add_message(root, member, mask, **fields)
            reached.append({"role": member, "message": str(sent["id"])})
        message = {"id": number, "at": now_iso(), "from": "person", "text": text, "to": reached}
        group = Group(
            group.name,
            group.change,
            group.connection,
            group.created_at,
            group.members,
            group.unknown,
            (*group.messages, message),
        )
        _save(group_path(root, name), group)
    return message, group


def _save(path: Path, group: Group) -> None:
    data = group.as_json()
    data.pop("unknown")  # worked out again on each load
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _lock(root: Root, name: str) -> Path:
    return root.local / "locks" / f"group-{check_name(name)}.lock"


def _change(root: Root, change: str) -> str:
    from sdd_git.records import changes

    return changes.load(root, change).id


def _connection(root: Root, spec_id: str) -> str:
    from sdd_git.records.spec import read_spec

    path = root.spec_file(spec_id)
    if not re.fullmatch(r"SPEC-\d{4,}", spec_id) or not path.is_file():
        raise RecordError(f"no spec {spec_id}", hint="a spec id looks like SPEC-0002")
    if read_spec(path).meta.get("kind") != "connection":
        raise RecordError(
            f"{spec_id} is not a connection spec (its kind is not `connection`)",
            hint="a group of a feature's roles is made with --change CH",
        )
    return spec_id


def _members(
    root: Root, change: str | None, connection: str | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the roles that exist, the named roles that do not), in the order the record names them."""
    from sdd_git.roles.registry import find_role

    named = _connection_owners(root, connection) if connection else _change_roles(root, str(change))
    members, unknown = [], []
    for role in _unique(named):
        if not NAME_PATTERN.match(role):
            unknown.append(role)
            continue
        try:
            find_role(root, role)
        except SddError:
            unknown.append(role)
            continue
        members.append(role)
    return tuple(members), tuple(unknown)


def _connection_owners(root: Root, spec_id: str) -> list[str]:
    from sdd_git.records.spec import read_spec

    sides = read_spec(root.spec_file(spec_id)).meta.get("sides")
    if not isinstance(sides, list):
        raise RecordError(
            f"{spec_id}: a connection spec needs `sides:` with its two {{scope, owner}} items"
        )
    return [str(s["owner"]) for s in sides if isinstance(s, dict) and s.get("owner")]


def _change_roles(root: Root, change: str) -> list[str]:
    """The roles its route and plan name, then the roles whose runs worked on it."""
    from sdd_git.network.route import decide
    from sdd_git.records.plan import load_plan

    named: list[str] = []
    # No route yet (a broken spec, an owner not named): the runs still count.
    with contextlib.suppress(SddError):
        named += decide(root, change).roles
    try:
        plan = load_plan(root, change)
    except SddError:
        plan = None
    if plan is not None:
        named += [node.owner for node, _, _ in plan.walk() if node.owner]
    return named + _run_roles(root, change)


def _run_roles(root: Root, change: str) -> list[str]:
    """Every role of a run whose `run_started` names the change, oldest run first."""
    from sdd_git.runner.runlog import runs_folder

    folder = runs_folder(root)
    if not folder.is_dir():
        return []
    found: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):  # run ids start with their time
        try:
            with path.open(encoding="utf-8") as handle:
                first = json.loads(handle.readline())
        except (OSError, ValueError):
            continue
        if not isinstance(first, dict) or first.get("event") != "run_started":
            continue
        if first.get("change") == change:
            found += [str(r) for r in first.get("roles") or () if isinstance(r, str)]
    return found


def _unique(names: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))
