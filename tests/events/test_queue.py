"""The durable event queue: written before anything runs, coalesced per ref, never stuck."""

from __future__ import annotations

import json

import pytest

from sdd_git.errors import RecordError
from sdd_git.events.queue import (
    done_events,
    done_folder,
    events_folder,
    mark_done,
    pending,
    write_event,
)
from sdd_git.root import Root


def test_an_event_is_a_json_file_with_the_contract_fields(root: Root) -> None:
    event = write_event(root, "pr-merged", "a" * 40, "hook", branch="main")
    data = json.loads((events_folder(root) / f"{event.id}.json").read_text(encoding="utf-8"))
    assert {k: data[k] for k in ("id", "kind", "ref", "source", "branch")} == {
        "id": event.id, "kind": "pr-merged", "ref": "a" * 40, "source": "hook", "branch": "main",
    }  # fmt: skip
    assert data["at"].endswith("Z")


def test_repeated_events_for_one_ref_are_one_event_and_other_refs_are_not(root: Root) -> None:
    first = write_event(root, "push", "a" * 40, "hook", branch="main")
    again = write_event(root, "push", "a" * 40, "watcher", branch="main")
    other = write_event(root, "push", "b" * 40, "hook", branch="main")
    assert again.id == first.id and other.id != first.id
    assert {e.id for e in pending(root)} == {first.id, other.id}


def test_a_done_event_leaves_the_queue_and_is_kept_in_done(root: Root) -> None:
    event = write_event(root, "main-build-failed", "build/result.xml", "watcher", branch="main")
    mark_done(root, event)
    mark_done(root, event)  # twice: a second worker finding it gone is not an error
    assert pending(root) == []
    assert [e.id for e in done_events(root)] == [event.id]
    assert (done_folder(root) / f"{event.id}.json").is_file()
    # Once done, the same ref is a new event (a build that fails again fails again).
    assert write_event(root, "main-build-failed", "build/result.xml", "watcher").id != event.id


def test_a_file_that_is_not_an_event_is_set_aside_and_does_not_block(root: Root) -> None:
    folder = events_folder(root)
    folder.mkdir(parents=True)
    (folder / "ev-broken.json").write_text("{not json", encoding="utf-8")
    (folder / "ev-odd.json").write_text('{"kind": "deployed"}', encoding="utf-8")
    good = write_event(root, "pr-merged", "c" * 40, "hook", branch="main")
    assert [e.id for e in pending(root)] == [good.id]
    assert sorted(p.name for p in (folder / "bad").iterdir()) == ["ev-broken.json", "ev-odd.json"]


def test_an_unknown_kind_or_source_is_refused_before_anything_is_written(root: Root) -> None:
    with pytest.raises(RecordError, match="not an event"):
        write_event(root, "deployed", "x", "hook")
    with pytest.raises(RecordError, match="not an event source"):
        write_event(root, "pr-merged", "x", "somebody")
    assert pending(root) == []
