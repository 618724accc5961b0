"""The durable event queue, `.sdd/local/events/`: one JSON file per event, written before anything
else happens, moved to `done/` once every routine that listens has run for it.

A hook writes the same files from the shell (hooks/sdd-hook.sh), with the same name shape, so
that the no-Python path and this module agree: `ID.json`, written to a dot-temp file and renamed."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from sdd_git import statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError
from sdd_git.root import Root
from sdd_git.routines.triggers import EVENT_KINDS, EVENT_SOURCES, Event, new_event_id
from sdd_git.timestamps import epoch as _epoch


def events_folder(root: Root) -> Path:
    return root.local / "events"


def done_folder(root: Root) -> Path:
    return events_folder(root) / "done"


def write_event(
    root: Root,
    kind: str,
    ref: str,
    source: str,
    *,
    branch: str | None = None,
    routine: str | None = None,
    extra: dict[str, object] | None = None,
    now: float | None = None,
) -> Event:
    """Write one event durably and return it. An event still waiting with the same kind, ref,
    branch and routine is returned instead: repeated events for one ref are one event."""
    if kind not in EVENT_KINDS:
        raise RecordError(f"'{kind}' is not an event", hint="one of: " + ", ".join(EVENT_KINDS))
    if source not in EVENT_SOURCES:
        raise RecordError(f"'{source}' is not an event source", hint=", ".join(EVENT_SOURCES))
    for waiting in pending(root):
        if (waiting.kind, waiting.ref, waiting.branch, waiting.routine) == (
            kind,
            ref,
            branch,
            routine,
        ):
            return waiting
    moment = time.time() if now is None else now
    event = Event(
        id=new_event_id(moment),
        kind=kind,
        ref=ref,
        at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment)),
        source=source,
        branch=branch,
        routine=routine,
        extra=dict(extra or {}),
    )
    write_text_atomic(events_folder(root) / f"{event.id}.json", event_text(root, event))
    return event


def record_event(root: Root, event: Event, *, keep_id: bool) -> Event:
    """Write the event to the queue before anything else happens, and give back the one
    recorded. With `keep_id` (the caller named the id), an event of that id already recorded,
    waiting or done, is that event; otherwise the event gets a new id and coalesces with a
    waiting one of the same kind, ref, branch and routine (see `write_event`)."""
    if not keep_id:
        return write_event(
            root,
            event.kind,
            event.ref,
            event.source,
            branch=event.branch,
            routine=event.routine,
            extra=event.extra,
            now=_epoch(event.at),
        )
    for folder in (events_folder(root), done_folder(root)):
        path = folder / f"{event.id}.json"
        if path.is_file():
            return read_event(path)
    write_text_atomic(events_folder(root) / f"{event.id}.json", event_text(root, event))
    return event


def event_text(root: Root, event: Event) -> str:
    """The event's file, masked: a ref from outside (a CI run's URL, a path) can carry a
    secret, and no secret is kept under .sdd/ in any form."""
    from sdd_git.connectors.tokens import masker_for

    return masker_for(root.path)(json.dumps(event.as_json(), sort_keys=True))


def read_event(path: Path) -> Event:
    """The event in `path`; its id must be the file's own name (every later path is built from
    the id: one that says otherwise is not an event)."""
    try:
        data = json.loads(statefolders.read_text(path))
    except statefolders.StateFolderError:
        raise  # the whole folder is refused, not this one event
    except (OSError, ValueError, RecordError) as exc:
        raise RecordError(f"{path}: not an event ({exc})") from None
    event = Event.from_json(data, str(path))
    if event.id != path.name.removesuffix(".json"):
        raise RecordError(f"{path}: its id {event.id!r} is not its file's name")
    return event


def pending(root: Root) -> list[Event]:
    """The events not yet done, oldest first. A file that is not an event is set aside in
    `bad/` (it would otherwise block the queue forever) and left for the person to read."""
    folder = events_folder(root)
    statefolders.check(folder)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.json"):  # dot-temp files of a writer are skipped by the glob
        if path.name.startswith("."):
            continue
        try:
            found.append(read_event(path))
        except FileNotFoundError:
            continue  # moved to done/ by another worker meanwhile
        except RecordError:
            if not path.exists():
                continue
            (folder / "bad").mkdir(exist_ok=True)
            os.replace(path, folder / "bad" / path.name)
    return sorted(found, key=lambda e: (e.at, e.id))


def mark_done(root: Root, event: Event) -> None:
    """Move the event to `done/`; an event already moved is left as it is."""
    target = done_folder(root)
    statefolders.make_folder(target)
    with contextlib.suppress(FileNotFoundError):
        os.replace(events_folder(root) / f"{event.id}.json", target / f"{event.id}.json")


def done_events(root: Root) -> list[Event]:
    folder = done_folder(root)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.json"):
        try:
            found.append(read_event(path))
        except (RecordError, FileNotFoundError):
            continue
    return sorted(found, key=lambda e: (e.at, e.id))
