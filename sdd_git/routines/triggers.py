"""The queue's event kinds and the typed event, at the bottom of routines.

Routines need the kinds (a routine file's `on:` is checked against them, and fire matches events
to routines) and may never import events/; so the one table lives here and events/ reads it.
Each kind carries its words: the trigger as the person reads it, the event as it is said, what
an exported CI file says, and what its `ref` is."""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from sdd_git.errors import RecordError


@dataclass(frozen=True)
class EventKind:
    """One kind of queue event and its words. The templates take `{main}` (the main branch),
    `{argument}` (the trigger's branch or glob), `{schedule}`, and for `said`, `{branch}`,
    `{ref}`, `{named}` (the ref, or "not named") and `{at}`."""

    name: str
    argument: str | None  # what `on: KIND ARGUMENT` takes: "branch", "glob", or nothing
    trigger: str  # `sdd routine show`: "when ..."
    said: str  # one event of this kind, as a refusal names it
    exported: str  # the comment an exported CI file opens with
    ref_words: str = ""  # what `ref` holds, for `--event` without one (schedule needs none)
    ref_example: str = ""
    branch: str | None = None  # an event's default branch: "argument", "main" or none


KINDS = {
    kind.name: kind
    for kind in (
        EventKind(
            "main-build-failed",
            None,
            "when the build of the main branch ({main}) fails",
            "the build of {branch} failed; its result: {named}",
            "when the build of {main} fails",
            "the build result (a path in the product, or the CI run)",
            '{"ref": "build/junit.xml"}',
            branch="main",
        ),
        EventKind(
            "pr-merged",
            None,
            "when a pull request is merged into the main branch ({main})",
            "a pull request was merged into {branch}, at commit {named}",
            "when a pull request is merged into {main}",
            "the merged commit",
            '{"ref": "<commit id>"}',
            branch="main",
        ),
        EventKind(
            "push",
            "branch",
            "when the branch {argument} moves (a push, a merge or a fetch into it)",
            "the branch {branch} moved to commit {named}",
            "on each push to {argument}",
            "the commit the branch moved to",
            '{"ref": "<commit id>"}',
            branch="argument",
        ),
        EventKind(
            "file-changed",
            "glob",
            "when a file matching {argument} changes",
            "the file {ref} changed",
            "when a push changes a file matching {argument}",
            "the changed file's path",
            '{"ref": "src/app.py"}',
        ),
        EventKind(
            "schedule",
            None,
            "on the schedule {schedule} (minute hour day-of-month month weekday, UTC)",
            "its schedule came due ({ref_or_at})",
            "on the schedule {schedule}",
        ),
    )
}
EVENT_KINDS = tuple(KINDS)
# Triggers written as `on:`; a schedule is written as `schedule:` (cron).
ON_TRIGGERS = tuple(k for k in KINDS if k != "schedule")
EVENT_SOURCES = ("hook", "watcher", "schedule", "ci", "person")
EVENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,255}\Z")  # hook ids hold a branch's '+'
EVENT_KEYS = ("id", "kind", "ref", "at", "source")


def new_event_id(now: float | None = None) -> str:
    moment = time.time() if now is None else now
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(moment))
    return f"ev-{stamp}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Event:
    """A durable event, as `.sdd/local/events/ID.json` holds it (CONTRACT §10)."""

    id: str
    kind: str
    ref: str  # a commit for push and pr-merged, a build result, a changed path, a schedule slot
    at: str  # ISO 8601 UTC
    source: str  # hook, watcher, schedule, ci
    branch: str | None = None  # the branch that moved (push, pr-merged, main-build-failed)
    routine: str | None = None  # the routine a schedule event is for
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "ref": self.ref,
            "at": self.at,
            "source": self.source,
        }
        if self.branch is not None:
            data["branch"] = self.branch
        if self.routine is not None:
            data["routine"] = self.routine
        data.update(self.extra)
        return data

    @classmethod
    def from_json(cls, data: Any, where: str) -> Event:
        _check_json(data, where)
        known = {*EVENT_KEYS, "branch", "routine"}
        return cls(
            id=data["id"],
            kind=data["kind"],
            ref=data["ref"],
            at=data["at"],
            source=data["source"],
            branch=data.get("branch"),
            routine=data.get("routine"),
            extra={k: v for k, v in data.items() if k not in known},
        )


def _check_json(data: Any, where: str) -> None:
    if not isinstance(data, dict):
        raise RecordError(f"{where}: an event is a JSON object", hint='{"kind": "pr-merged"}')
    missing = [k for k in EVENT_KEYS if k not in data]
    if missing:
        raise RecordError(
            f"{where}: the event has no {', '.join(missing)}",
            hint='an event holds id, kind, ref, at and source, e.g. {"kind": "pr-merged", '
            '"ref": "<commit>", ...}',
        )
    if data["kind"] not in KINDS:
        raise RecordError(
            f"{where}: key 'kind': '{data['kind']}' is not an event",
            hint="one of: " + ", ".join(EVENT_KINDS),
        )
    for key in EVENT_KEYS:
        if not isinstance(data[key], str):
            raise RecordError(f"{where}: key '{key}' must be text, not {data[key]!r}")
    for key in ("branch", "routine"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise RecordError(f"{where}: key '{key}' must be text, not {data[key]!r}")
    if not EVENT_ID.match(data["id"]):  # every path of the queue is built from it
        raise RecordError(f"{where}: key 'id': {data['id']!r} is not an event id")
    if data.get("source") not in EVENT_SOURCES:
        raise RecordError(f"{where}: key 'source': {data['source']!r} is not an event source")
