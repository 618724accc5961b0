"""The worker: every waiting event's routines fired once, outcomes written beside the event, one
worker per root, a broken event or routine never blocking the queue."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sdd_git import lockfile
from sdd_git.events import worker
from sdd_git.events.queue import done_folder, events_folder, pending, write_event
from sdd_git.root import Root
from sdd_git.routines import fire as fire_module
from sdd_git.routines.fire import Fired
from sdd_git.routines.routine import Event, Routine
from tests.events.hookhelp import ROLE, product, routine, runs_of, script

SHA = "a" * 40


class FakeFire:
    """Stands in for fire(): records each call, and fails for the routines named in `broken`."""

    def __init__(self, broken: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, str]] = []
        self.broken = broken

    def __call__(self, root: Root, routine: Routine, event: Event, **_: Any) -> Fired:
        self.calls.append((routine.name, event.id))
        if routine.name in self.broken:
            raise RuntimeError(f"{routine.name} is broken")
        return Fired(routine.name, routine.role, event.id, f"run-{routine.name}", "done", 0, "ok")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeFire:
    fake = FakeFire()
    monkeypatch.setattr(fire_module, "fire", fake)
    return fake


def done(root: Root, event_id: str) -> dict[str, Any]:
    data = json.loads((done_folder(root) / f"{event_id}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_every_listening_routine_fires_and_its_outcome_is_written_beside_the_event(
    root: Root, fake: FakeFire
) -> None:
    routine(root, "on-merge", "pr-merged")
    routine(root, "on-push", "push main")
    event = write_event(root, "pr-merged", SHA, "hook", branch="main")
    fired = worker.work(root)
    assert [f.routine for f in fired] == ["on-merge"]
    assert fake.calls == [("on-merge", event.id)]
    assert pending(root) == []
    outcome = done(root, event.id)["outcomes"]
    assert outcome[0]["routine"] == f"{ROLE}/on-merge"
    assert (outcome[0]["status"], outcome[0]["run"]) == ("done", "run-on-merge")


def test_events_waiting_together_for_one_ref_fire_once_and_all_move_to_done(
    root: Root, fake: FakeFire
) -> None:
    routine(root, "on-merge", "pr-merged")
    first = write_event(root, "pr-merged", SHA, "hook", branch="main", now=1000.0)
    # A second writer that did not coalesce (the shell hook writes its own file names).
    second = Event("ev-hook-second", "pr-merged", SHA, "1970-01-01T00:20:00Z", "hook", "main")
    (events_folder(root) / f"{second.id}.json").write_text(json.dumps(second.as_json()))
    other = write_event(root, "pr-merged", "b" * 40, "hook", branch="main", now=1001.0)
    worker.work(root)
    assert fake.calls == [("on-merge", first.id), ("on-merge", other.id)]
    assert done(root, second.id)["outcomes"] == [{"coalesced_into": first.id}]
    assert pending(root) == []


def test_a_file_that_is_not_an_event_is_set_aside_and_the_others_still_run(
    root: Root, fake: FakeFire
) -> None:
    routine(root, "on-merge", "pr-merged")
    events_folder(root).mkdir(parents=True, exist_ok=True)
    (events_folder(root) / "ev-broken.json").write_text("{not json")
    event = write_event(root, "pr-merged", SHA, "hook", branch="main")
    worker.work(root)
    assert (events_folder(root) / "bad" / "ev-broken.json").exists()
    assert fake.calls == [("on-merge", event.id)]


def test_an_error_firing_one_routine_is_recorded_and_blocks_nothing(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeFire(broken=("a-broken",))
    monkeypatch.setattr(fire_module, "fire", fake)
    routine(root, "a-broken", "pr-merged")
    routine(root, "b-fine", "pr-merged")
    first = write_event(root, "pr-merged", SHA, "hook", branch="main", now=1000.0)
    second = write_event(root, "pr-merged", "b" * 40, "hook", branch="main", now=1001.0)
    errors: list[dict[str, Any]] = []
    fired = worker.work(root, on_error=errors.append)
    assert [f.routine for f in fired] == ["b-fine", "b-fine"]
    assert pending(root) == []
    for event in (first, second):
        outcomes = {o["routine"]: o for o in done(root, event.id)["outcomes"]}
        failed = outcomes[f"{ROLE}/a-broken"]
        assert failed["status"] == "error" and "a-broken is broken" in failed["error"]
        assert f"sdd routine fire {ROLE}/a-broken --event" in failed["message"]
        assert outcomes[f"{ROLE}/b-fine"]["status"] == "done"
    assert len(errors) == 2


def test_a_routine_file_that_does_not_load_is_named_in_the_outcome(
    root: Root, fake: FakeFire
) -> None:
    path = routine(root, "on-merge", "pr-merged")
    path.write_text("name: on-merge\non: pr-merged\n")  # no input, no expected
    event = write_event(root, "pr-merged", SHA, "hook", branch="main")
    worker.work(root)
    data = done(root, event.id)
    assert fake.calls == []
    assert data["note"] == "no routine listens to this event"
    assert any("on-merge.yaml" in p for p in data["problems"])


def test_a_second_worker_exits_at_once_while_the_first_holds_the_lock(
    root: Root, fake: FakeFire
) -> None:
    routine(root, "on-merge", "pr-merged")
    write_event(root, "pr-merged", SHA, "hook", branch="main")
    with lockfile.hold(worker.lock_path(root), wait_seconds=0):
        assert worker.work(root) == []
    assert fake.calls == []
    assert len(pending(root)) == 1  # left for the holder, which looks again before it lets go


def test_an_event_written_after_the_last_scan_is_taken_after_the_lock_is_let_go(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the holder has scanned for the last time; a hook writes an event and starts a
    worker, which finds the lock held and exits. The holder must take that event itself."""
    fake = FakeFire()
    monkeypatch.setattr(fire_module, "fire", fake)
    routine(root, "on-merge", "pr-merged")
    write_event(root, "pr-merged", SHA, "hook", branch="main", now=1000.0)
    real_drain = worker._drain
    late: list[Event] = []

    def drain_then_a_late_event(*args: Any) -> list[Fired]:
        out = real_drain(*args)
        if not late:  # after the holder's last scan, still holding the lock
            late.append(write_event(root, "pr-merged", "c" * 40, "hook", branch="main"))
            assert worker.work(root) == []  # the hook's worker: the lock is held
        return out

    monkeypatch.setattr(worker, "_drain", drain_then_a_late_event)
    worker.work(root)
    assert [call[1] for call in fake.calls][-1] == late[0].id
    assert pending(root) == []


def test_the_detached_entry_fires_a_real_routine_and_logs_what_it_did(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    product(root)
    routine(root, "on-merge", "pr-merged")
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Noted the merge."}]))
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root.path, capture_output=True, text=True, check=True
    ).stdout.strip()
    event = write_event(root, "pr-merged", head, "hook", branch="main")
    result = subprocess.run(
        [sys.executable, "-m", "sdd_git", "event-worker", str(root.path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")  # all in the log
    log = worker.log_path(root).read_text(encoding="utf-8")
    assert "worker started" in log and f"{ROLE}/on-merge ran for event {event.id}: done" in log
    [run] = runs_of(root, "on-merge", event.id)
    assert done(root, event.id)["outcomes"][0]["run"] == Path(run["_path"]).stem


def test_a_stop_request_leaves_the_events_not_yet_started_in_the_queue(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    routine(root, "on-merge", "pr-merged")
    first = write_event(root, "pr-merged", SHA, "hook", branch="main", now=1000.0)
    second = write_event(root, "pr-merged", "b" * 40, "hook", branch="main", now=1001.0)

    def fire_then_sigterm(root: Root, routine: Routine, event: Event, **_: Any) -> Fired:
        worker.STOP.set()  # what SIGTERM does while this routine runs
        return Fired(routine.name, routine.role, event.id, "run-1", "interrupted", 130, "stopped")

    monkeypatch.setattr(fire_module, "fire", fire_then_sigterm)
    try:
        fired = worker.work(root)
    finally:
        worker.STOP.clear()
    assert [f.event for f in fired] == [first.id]
    assert done(root, first.id)["outcomes"][0]["status"] == "interrupted"
    assert [e.id for e in pending(root)] == [second.id]
    assert not worker.lock_path(root).exists()


def test_an_event_taken_a_second_time_keeps_the_outcomes_of_the_first(
    root: Root, fake: FakeFire
) -> None:
    routine(root, "on-merge", "pr-merged")
    event = write_event(root, "pr-merged", SHA, "hook", branch="main")
    text = (events_folder(root) / f"{event.id}.json").read_text()
    worker.work(root)
    (events_folder(root) / f"{event.id}.json").write_text(text)  # written again by a hook
    worker.work(root)
    assert [o["status"] for o in done(root, event.id)["outcomes"]] == ["done", "done"]
