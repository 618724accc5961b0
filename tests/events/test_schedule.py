"""Schedules, with a fixed clock: the next slot in UTC, a slot fired once, slots that passed
while nobody watched never fired, a paused routine never due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sdd_git.events.queue import pending
from sdd_git.events.sources.schedules import (
    Schedules,
    next_slot,
    read_fired,
    routine_key,
    schedule_file,
    slot_ref,
)
from sdd_git.root import Root
from sdd_git.routines.routine import Routine, listens, read_routine

WEEKDAYS_AT_NINE = "0 9 * * 1-5"
MONDAY = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def scheduled(root: Root, name: str = "standup", cron: str = WEEKDAYS_AT_NINE,
              paused: bool = False, role: str = "steward") -> Routine:  # fmt: skip
    path = root.sdd / "roles" / role / "routines" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'name: {name}\nschedule: "{cron}"\ninput: the open changes\n'
        f"expected: a short summary\npaused: {'true' if paused else 'false'}\n",
        encoding="utf-8",
    )
    return read_routine(path)


def test_the_next_slot_is_strictly_after_the_given_time_in_utc() -> None:
    assert next_slot(WEEKDAYS_AT_NINE, MONDAY) == MONDAY.replace(hour=9)
    assert next_slot(WEEKDAYS_AT_NINE, MONDAY.replace(hour=9)) == MONDAY.replace(day=3, hour=9)
    friday_evening = datetime(2026, 3, 6, 18, tzinfo=UTC)
    assert next_slot(WEEKDAYS_AT_NINE, friday_evening) == datetime(2026, 3, 9, 9, tzinfo=UTC)
    # Another zone's clock names the same instant: the slot is still 09:00 UTC.
    paris = friday_evening.astimezone(__import__("zoneinfo").ZoneInfo("Europe/Paris"))
    assert next_slot(WEEKDAYS_AT_NINE, paris) == datetime(2026, 3, 9, 9, tzinfo=UTC)


def test_next_due_is_the_first_slot_after_the_watcher_starts(root: Root) -> None:
    routine = scheduled(root)
    schedules = Schedules(root, Clock(MONDAY.replace(hour=8, minute=30)))
    schedules.load([routine])
    assert schedules.next_due() == MONDAY.replace(hour=9)
    assert schedules.due() == []


def test_a_due_slot_writes_one_schedule_event_naming_the_routine_and_the_slot(
    root: Root,
) -> None:
    routine = scheduled(root)
    clock = Clock(MONDAY.replace(hour=8, minute=59, second=59))
    schedules = Schedules(root, clock)
    schedules.load([routine])
    clock.now = MONDAY.replace(hour=9, second=1)
    [event] = schedules.fire_due()
    assert (event.kind, event.source, event.routine) == ("schedule", "schedule", "steward/standup")
    assert event.ref == "steward/standup@2026-03-02T09:00:00Z"
    assert listens(routine, event)
    assert [e.id for e in pending(root)] == [event.id]
    assert read_fired(root) == {"steward/standup": MONDAY.replace(hour=9)}
    assert schedules.next_due() == MONDAY.replace(day=3, hour=9)


def test_a_slot_fires_once_however_often_it_is_asked(root: Root) -> None:
    routine = scheduled(root)
    clock = Clock(MONDAY.replace(hour=8))
    schedules = Schedules(root, clock)
    schedules.load([routine])
    clock.now = MONDAY.replace(hour=9)
    assert len(schedules.fire_due()) == 1
    assert schedules.fire_due() == []
    clock.now = MONDAY.replace(hour=9, minute=30)
    assert schedules.fire_due() == []
    assert len(pending(root)) == 1


def test_a_restarted_watcher_never_fires_the_slot_it_fired_already(root: Root) -> None:
    routine = scheduled(root, cron="*/5 * * * *")
    clock = Clock(MONDAY.replace(hour=9, minute=4))
    first = Schedules(root, clock)
    first.load([routine])
    clock.now = MONDAY.replace(hour=9, minute=5)
    assert len(first.fire_due()) == 1
    # Restarted within the same second: the slot at 09:05 is behind it, not due again.
    again = Schedules(root, clock)
    again.load([routine])
    assert again.due() == []
    assert again.next_due() == MONDAY.replace(hour=9, minute=10)
    # Even with the clock set back (a clock corrected by NTP), the fired slot stays fired.
    clock.now = MONDAY.replace(hour=9, minute=4, second=59)
    back = Schedules(root, clock)
    back.load([routine])
    clock.now = MONDAY.replace(hour=9, minute=5)
    assert back.fire_due() == []
    assert len(pending(root)) == 1


def test_slots_that_passed_while_no_watcher_ran_are_not_fired_after_a_restart(
    root: Root,
) -> None:
    routine = scheduled(root)
    clock = Clock(MONDAY.replace(hour=8))
    schedules = Schedules(root, clock)
    schedules.load([routine])
    clock.now = MONDAY.replace(hour=9)
    schedules.fire_due()
    # The watcher was down from Monday 10:00 to Thursday 12:00: Tuesday to Thursday's slots passed.
    clock.now = datetime(2026, 3, 5, 12, tzinfo=UTC)
    restarted = Schedules(root, clock)
    restarted.load([routine])
    assert restarted.fire_due() == []
    assert restarted.next_due() == datetime(2026, 3, 6, 9, tzinfo=UTC)
    assert len(pending(root)) == 1


def test_a_watcher_that_slept_past_several_slots_fires_only_the_latest(root: Root) -> None:
    routine = scheduled(root, cron="0 * * * *")
    clock = Clock(MONDAY.replace(hour=8, minute=30))
    schedules = Schedules(root, clock)
    schedules.load([routine])
    clock.now = MONDAY.replace(hour=12, minute=10)  # the machine slept; the watcher did not stop
    [event] = schedules.fire_due()
    assert event.ref == slot_ref(routine, MONDAY.replace(hour=12))
    assert schedules.next_due() == MONDAY.replace(hour=13)


def test_a_paused_routines_schedule_never_comes_due(root: Root) -> None:
    paused = scheduled(root, name="quiet", cron="* * * * *", paused=True)
    schedules = Schedules(root, Clock(MONDAY))
    schedules.load([paused])
    assert schedules.next_due() is None
    assert schedules.fire_due(MONDAY + timedelta(days=1)) == []
    assert pending(root) == []


def test_pausing_a_routine_on_reload_drops_its_schedule_and_resuming_starts_from_now(
    root: Root,
) -> None:
    clock = Clock(MONDAY)
    schedules = Schedules(root, clock)
    schedules.load([scheduled(root, cron="0 * * * *")])
    assert schedules.next_due() == MONDAY.replace(hour=1)
    schedules.load([scheduled(root, cron="0 * * * *", paused=True)])
    assert schedules.next_due() is None
    clock.now = MONDAY.replace(hour=5, minute=30)
    schedules.load([scheduled(root, cron="0 * * * *")])
    assert schedules.next_due() == MONDAY.replace(hour=6)


def test_an_unchanged_schedule_keeps_its_slot_and_a_changed_one_is_computed_again(
    root: Root,
) -> None:
    clock = Clock(MONDAY)
    schedules = Schedules(root, clock)
    schedules.load([scheduled(root, cron="0 9 * * *")])
    clock.now = MONDAY.replace(hour=9, second=30)  # due, not yet fired: a reload keeps it due
    schedules.load([scheduled(root, cron="0 9 * * *")])
    assert [d.slot for d in schedules.due()] == [MONDAY.replace(hour=9)]
    schedules.load([scheduled(root, cron="0 10 * * *")])
    assert schedules.next_due() == MONDAY.replace(hour=10)


def test_two_roles_with_a_routine_of_one_name_are_scheduled_apart(root: Root) -> None:
    one = scheduled(root, role="steward", cron="0 9 * * *")
    two = scheduled(root, role="copy", cron="0 9 * * *")
    clock = Clock(MONDAY)
    schedules = Schedules(root, clock)
    schedules.load([one, two])
    clock.now = MONDAY.replace(hour=9)
    events = schedules.fire_due()
    assert sorted(e.routine or "" for e in events) == ["copy/standup", "steward/standup"]
    assert {routine_key(one), routine_key(two)} == set(read_fired(root))


def test_an_unreadable_schedule_file_counts_as_nothing_fired(root: Root, tmp_path: Path) -> None:
    schedule_file(root).parent.mkdir(parents=True, exist_ok=True)
    schedule_file(root).write_text("{not json", encoding="utf-8")
    assert read_fired(root) == {}
    routine = scheduled(root, cron="0 9 * * *")
    clock = Clock(MONDAY)
    schedules = Schedules(root, clock)
    schedules.load([routine])
    clock.now = MONDAY.replace(hour=9)
    assert len(schedules.fire_due()) == 1
