"""What waits for her: events (and handoff wakes) that arrived while a grant they need was not
confirmed (CONTRACT §13). Nothing is lost: each waits in `.sdd/local/events/waiting/`, is said
in `sdd trust review`, `sdd stops`, `sdd routine history` and her page, and runs once she
confirms (`sdd trust accept`), or goes when she drops it (`sdd trust drop`)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.events.queue import done_folder, events_folder
from sdd_git.recordjson import record_json
from sdd_git.root import Root
from sdd_git.routines.triggers import Event
from sdd_git.sink import RUN_ID_ENV
from sdd_git.trust.pending import Unconfirmed

CHANGE_ID = re.compile(r"CH-\d{4,}\Z")
ENTRY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # an event's id, or a wake's


@dataclass(frozen=True)
class Waiting:
    id: str  # the event's id, or the wake's
    what: str  # in her words: "the routine helper/on-merge, for the merge of abc1234"
    routines: tuple[str, ...]  # ROLE/NAME of each routine that waits (an event)
    items: tuple[dict[str, Any], ...]  # what it waits on: path, kind, name, changes
    event: dict[str, Any] | None = None
    wake: dict[str, str] | None = None  # a handoff's wake: receiver, sender, reply_to, change
    at: str = ""

    def as_json(self) -> dict[str, Any]:
        return record_json(self, rename={"items": "waits_on"})


def folder(root: Root) -> Path:
    return events_folder(root) / "waiting"


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _masked(root: Root, text: str) -> str:
    from sdd_git.connectors.tokens import masker_for

    return masker_for(root.path)(text)


def wait_event(root: Root, event: Event, routine: str, items: tuple[Unconfirmed, ...]) -> Waiting:
    """Keep `event` for `routine` until she confirms what it waits on."""
    path = folder(root) / f"{event.id}.json"
    earlier = _read(path)
    routines = tuple(dict.fromkeys([*(earlier.routines if earlier else ()), routine]))
    said = {i["path"]: i for i in (earlier.items if earlier else ())}
    said.update({i.key: i.as_json() for i in items})
    entry = Waiting(
        event.id,
        f"{', '.join(routines)} for the event {event.kind} {event.ref}",
        routines,
        tuple(said.values()),
        event.as_json(),
        at=earlier.at if earlier else _now(),
    )
    write_text_atomic(path, _masked(root, json.dumps(entry.as_json(), sort_keys=True)))
    return entry


def wait_wake(
    root: Root, wake_id: str, what: str, wake: dict[str, str], items: tuple[Unconfirmed, ...]
) -> Waiting:
    """Keep a handoff's wake until she confirms what it waits on. Only its fields are kept
    (receiver, sender, the message it replies to, the change): the command that wakes it again
    is built by sdd from them, never read from a file."""
    entry = Waiting(wake_id, what, (), tuple(i.as_json() for i in items), None, dict(wake), _now())
    path = folder(root) / f"{wake_id}.json"
    write_text_atomic(path, _masked(root, json.dumps(entry.as_json(), sort_keys=True)))
    return entry


def _wake_argv(wake: dict[str, Any]) -> list[str] | None:
    """`sdd role run RECEIVER --origin role --from SENDER --reply-to MSG`, from checked names:
    the woken run reads its task from the message it replies to."""
    from sdd_git.roles.profile import NAME_PATTERN

    receiver, sender = str(wake.get("receiver", "")), str(wake.get("sender", ""))
    reply_to, change = str(wake.get("reply_to", "")), wake.get("change")
    if not (NAME_PATTERN.match(receiver) and NAME_PATTERN.match(sender)):
        return None
    if not ENTRY_ID.match(reply_to) or (change is not None and not CHANGE_ID.match(str(change))):
        return None
    task = str(wake.get("task", ""))
    argv = [sys.executable, "-P", "-m", "sdd_git", "role", "run", f"--task={task}"]
    argv += ["--origin", "role", "--from", sender, "--reply-to", reply_to, "--json"]
    argv += ["--change", str(change)] if change else []
    return [*argv, "--", receiver]


def _read(path: Path) -> Waiting | None:
    """One waiting entry. Its id is its file's name, never what the file says (an id is part of
    every path built from it), and it must look like an id."""
    if not ENTRY_ID.match(path.stem):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, encoding="utf-8") as handle:
            data = json.load(handle)
        return Waiting(
            path.stem,
            str(data["what"]),
            tuple(str(r) for r in data.get("routines") or ()),
            tuple(i for i in data.get("waits_on") or () if isinstance(i, dict)),
            data.get("event") if isinstance(data.get("event"), dict) else None,
            data.get("wake") if isinstance(data.get("wake"), dict) else None,
            str(data.get("at") or ""),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def entries(root: Root) -> list[Waiting]:
    """Everything that waits for her, oldest first."""
    place = folder(root)
    if not place.is_dir() or place.is_symlink():
        return []
    found = [w for p in sorted(place.glob("*.json")) if (w := _read(p)) is not None]
    return sorted(found, key=lambda w: (w.at, w.id))


def for_routine(root: Root, name: str) -> list[Waiting]:
    return [w for w in entries(root) if name in w.routines]


def release(root: Root) -> list[Waiting]:
    """Put back what waited: each event into the queue (the worker fires its routines; those
    still unconfirmed wait again), each wake started again. Starts the worker."""
    released: list[Waiting] = []
    for entry in entries(root):
        path = folder(root) / f"{entry.id}.json"
        if entry.event is not None:
            # The event under the entry's own id (its file's name), whatever its text says.
            event = {**entry.event, "id": entry.id}
            write_text_atomic(events_folder(root) / f"{entry.id}.json", json.dumps(event))
        elif entry.wake is not None and (argv := _wake_argv(entry.wake)) is not None:
            _start(root, argv)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        released.append(entry)
    if any(e.event is not None for e in released):
        _start(root, [sys.executable, "-P", "-m", "sdd_git", "event-worker", str(root.path)])
    return released


def drop(root: Root, ids: list[str] | None) -> list[Waiting]:
    """She does not want these to run: each goes to done/ saying so (None: all of them)."""
    dropped: list[Waiting] = []
    for entry in entries(root):
        if ids is not None and entry.id not in ids:
            continue
        path = folder(root) / f"{entry.id}.json"
        record = {**(entry.event or {}), "id": entry.id, "dropped": f"dropped by you at {_now()}"}
        write_text_atomic(done_folder(root) / f"{entry.id}.dropped.json", json.dumps(record))
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        dropped.append(entry)
    return dropped


def _start(root: Root, argv: list[str]) -> None:
    """sdd starting sdd, detached, as a hook does: our own module or CLI, with arguments built
    here from checked names, never a command read from a file."""
    log = events_folder(root) / "worker.log"
    statefolders.make_folder(log.parent)
    env = {k: v for k, v in os.environ.items() if k != RUN_ID_ENV}
    with open(log, "ab") as sink:
        subprocess.Popen(  # our own module or CLI, argv only
            argv,
            cwd=root.path,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
