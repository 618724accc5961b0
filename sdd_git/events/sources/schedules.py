"""Schedules: when each routine with `schedule:` is next due, and which slots have fired.

Cron times are read in UTC, as GitHub Actions reads them, so a routine exported to CI and the
same routine under `sdd watch` fire at the same moments whatever the machine's time zone.

One slot is one event: its ref is `ROLE/NAME@<slot time>`, and the last slot fired for each
routine is kept in `.sdd/local/schedule.json` (not in the queue's folder, where every `*.json` is
an event), so a restarted watcher never fires a slot twice. Slots that passed while no watcher
was running are not fired afterwards (a laptop that was off overnight does not wake up to a
backlog); after a long pause of a running watcher (a machine that slept) only the latest slot
that passed fires."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sdd_git import statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError, SddError
from sdd_git.events.queue import write_event
from sdd_git.events.sources.emit import Emitter, stamp
from sdd_git.root import Root
from sdd_git.routines.routine import Routine
from sdd_git.routines.triggers import Event

Clock = Callable[[], datetime]
SLOT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_now() -> datetime:
    return datetime.now(UTC)


def schedule_file(root: Root) -> Path:
    return root.local / "schedule.json"


def routine_key(routine: Routine) -> str:
    """`ROLE/NAME`: two roles may own routines of one name (a copied role)."""
    return f"{routine.role}/{routine.name}"


def slot_text(slot: datetime) -> str:
    return slot.astimezone(UTC).strftime(SLOT_FORMAT)


def slot_ref(routine: Routine, slot: datetime) -> str:
    return f"{routine_key(routine)}@{slot_text(slot)}"


def next_slot(cron: str, after: datetime) -> datetime:
    """The first time strictly after `after` that the cron expression names, in UTC."""
    from cronsim import CronSim

    return next(CronSim(cron, after.astimezone(UTC)))


def latest_slot(cron: str, first: datetime, now: datetime) -> datetime:
    """The last slot at or before `now`, starting from the due slot `first` (first <= now)."""
    from cronsim import CronSim

    latest = first
    for slot in CronSim(cron, first.astimezone(UTC)):
        if slot > now:
            break
        latest = slot
    return latest


def read_fired(root: Root) -> dict[str, datetime]:
    """The last slot fired per `ROLE/NAME`; an unreadable file counts as nothing fired yet, since
    its slots are all in the past and past slots never fire again anyway."""
    path = schedule_file(root)
    try:
        data = json.loads(statefolders.read_text(path))
    except (OSError, ValueError, RecordError):
        return {}
    fired = {}
    if isinstance(data, dict):
        for key, value in data.items():
            try:
                fired[str(key)] = datetime.strptime(str(value), SLOT_FORMAT).replace(tzinfo=UTC)
            except ValueError:
                continue
    return fired


def record_fired(root: Root, key: str, slot: datetime) -> None:
    fired = {k: slot_text(v) for k, v in read_fired(root).items()}
    fired[key] = slot_text(slot)
    write_text_atomic(schedule_file(root), json.dumps(fired, indent=1, sort_keys=True) + "\n")


@dataclass(frozen=True)
class Due:
    routine: Routine
    slot: datetime


class Schedules:
    """The next due time of every unpaused scheduled routine, as the watcher keeps it."""

    def __init__(self, root: Root, clock: Clock = utc_now) -> None:
        self.root = root
        self.clock = clock
        self._routines: dict[str, Routine] = {}
        self._next: dict[str, datetime] = {}

    def load(self, routines: Iterable[Routine]) -> None:
        """Take the routines as they are now. A routine whose cron did not change keeps its next
        slot; a new or changed one is due at its first slot after now (and after its last fired)."""
        now = self.clock()
        fired = read_fired(self.root)
        kept: dict[str, Routine] = {}
        following: dict[str, datetime] = {}
        for routine in routines:
            if routine.schedule is None or routine.paused:
                continue
            key = routine_key(routine)
            kept[key] = routine
            old = self._routines.get(key)
            if old is not None and old.schedule == routine.schedule and key in self._next:
                following[key] = self._next[key]
            else:
                since = max(now, fired.get(key, now))
                following[key] = next_slot(routine.schedule, since)
        self._routines = kept
        self._next = following

    def next_due(self) -> datetime | None:
        """The soonest slot of any routine, or None when nothing is scheduled."""
        return min(self._next.values(), default=None)

    def upcoming(self) -> list[Due]:
        return sorted(
            (Due(self._routines[key], slot) for key, slot in self._next.items()),
            key=lambda due: (due.slot, routine_key(due.routine)),
        )

    def due(self, now: datetime | None = None) -> list[Due]:
        """The routines whose slot has come, each with the latest slot that passed."""
        moment = self.clock() if now is None else now
        found = []
        for key, slot in sorted(self._next.items()):
            if slot <= moment:
                routine = self._routines[key]
                assert routine.schedule is not None
                found.append(Due(routine, latest_slot(routine.schedule, slot, moment)))
        return found

    def fire_due(self, now: datetime | None = None) -> list[Event]:
        """Write one `schedule` event per routine that is due, then remember its slot. The event
        is written first: a crash between the two leaves an event (coalesced if written again),
        never a slot marked fired with no event."""
        moment = self.clock() if now is None else now
        fired = read_fired(self.root)
        written = []
        for item in self.due(moment):
            key = routine_key(item.routine)
            last = fired.get(key)
            if last is None or item.slot > last:
                written.append(
                    write_event(
                        self.root,
                        "schedule",
                        slot_ref(item.routine, item.slot),
                        "schedule",
                        routine=key,
                        extra={"slot": slot_text(item.slot)},
                    )
                )
                record_fired(self.root, key, item.slot)
            assert item.routine.schedule is not None
            self._next[key] = next_slot(item.routine.schedule, item.slot)
        return written


def fire_schedules(emit: Emitter, schedules: Schedules) -> int:
    """Write the events of the slots come due; how many were written."""
    try:
        events = schedules.fire_due()
    except SddError as exc:
        emit.problem(exc.message, exc.hint)
        return 0
    for event in events:
        emit.events_written += 1
        emit.say(f"{stamp()} event schedule {event.ref} ({event.id})")
    return len(events)
