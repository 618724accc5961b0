"""A routine that could not run says so (issue 22): where she looks, not only in the worker's log.

A merge fires a routine, and the run cannot start: no model key, a model server she has not set
up, the role busy with another run. Nobody is at a terminal to read the error. So fire() writes,
for such an event:

- a run log like any routine run's (`origin: routine`, `routine`, `event_id`), holding the
  `could_not_run` event with the reason in plain words and ending with the status
  `could-not-run`: `sdd routine history` and her page's routine history list it;
- a note in `.sdd/local/not-run/` that `sdd stops` lists beside the stops, with what she can do:
  fire it again once the cause is fixed (`sdd routine fire`), or dismiss it
  (`sdd stops dismiss ID`). It is no approval: nothing is allowed or denied, and it never
  expires (it waits until she acts, or until the routine runs for that event).

A run log of this status claims no event: firing the routine again for it runs it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdd_git import lockfile, statefolders
from sdd_git.errors import RecordError, SddError
from sdd_git.recordjson import record_json
from sdd_git.root import Root
from sdd_git.routines.routine import Routine
from sdd_git.routines.triggers import Event
from sdd_git.runner import logevents
from sdd_git.runner.clock import Clock

if TYPE_CHECKING:
    from sdd_git.runner.logwriter import RunLog

STATUS = "could-not-run"
KIND = "could-not-run"  # its `kind` in `sdd stops`
CHOICES = ("fire again", "dismiss")


@dataclass(frozen=True)
class NotRun:
    id: str  # the run id of its log
    role: str
    routine: str
    event: dict[str, Any]  # the event as JSON: what `sdd routine fire --event` takes again
    reason: str
    at: str
    fix: str = ""  # how to fix the cause, when the error said

    @property
    def name(self) -> str:
        return f"{self.role}/{self.routine}"

    @property
    def refire(self) -> str:
        import shlex

        event = shlex.quote(json.dumps(self.event, sort_keys=True))
        return f"sdd routine fire {self.name} --event {event}"

    @property
    def action(self) -> str:
        return (
            f"The routine {self.name} did not run for event {self.event.get('id')}: "
            f"{self.reason}{f' ({self.fix})' if self.fix else ''}. Once that is fixed, fire "
            f"it again: {self.refire}; or dismiss this: sdd stops dismiss {self.id}"
        )

    def as_stop_json(self) -> dict[str, Any]:
        """Its line in `sdd stops --json`: the fields of a stop (CONTRACT §4), and its own."""
        return {
            "id": self.id,
            "run": self.id,
            "role": self.role,
            "kind": KIND,
            "action": self.action,
            "choices": list(CHOICES),
            "origin": "routine",
            "expires_at": None,
            "created_at": self.at,
            "routine": self.routine,
            "event": self.event.get("id"),
            "reason": self.reason,
            "fix": self.fix or None,
            "refire": self.refire,
            "expired": False,
        }


def notes_folder(root: Root) -> Path:
    return root.local / "not-run"


def log(
    root: Root,
    routine: Routine,
    event: Event,
    task: str,
    rehearsal: bool,
    clock: Clock,
    on_event: Callable[[dict[str, Any]], None] | None,
    exc: SddError,
) -> str:
    """The run log of a routine that could not run, and (but for a rehearsal, whose error she
    reads on her screen) the note `sdd stops` lists. Gives back the run id."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.connectors.tokens import masker_for

    mask = masker_for(root.path)  # an error may quote a server's answer, or a key's place
    reason, fix = mask(exc.message), mask(exc.hint or "")
    run_id, run_log = start_log(root, routine, event, task, rehearsal, clock, on_event)
    run_log.append(logevents.CouldNotRun(reason, fix, event.kind))
    run_log.append(logevents.RunEnded(STATUS, reason=reason))
    if not rehearsal:
        note = NotRun(run_id, routine.role, routine.name, event.as_json(), reason, _now(clock), fix)
        path = notes_folder(root) / f"{run_id}.json"
        statefolders.make_folder(path.parent)
        write_text_atomic(path, mask(json.dumps(record_json(note), indent=1, sort_keys=True)))
    return run_id


def start_log(
    root: Root,
    routine: Routine,
    event: Event,
    task: str,
    rehearsal: bool,
    clock: Clock,
    on_event: Callable[[dict[str, Any]], None] | None,
) -> tuple[str, RunLog]:
    """A routine's run log that never reaches the runner (its source is missing, or it could not
    start), opened with the same `run_started` a real routine run has."""
    from sdd_git.connectors.tokens import masker_for
    from sdd_git.runner.asked import asked_from
    from sdd_git.runner.logwriter import RunLog
    from sdd_git.runner.runlog import new_run_id

    run_id = new_run_id(clock())
    run_log = RunLog.open(root, run_id, masker_for(root.path), clock)
    run_log.listener = on_event
    rules = {"ask_first": [dict(r) for r in routine.ask_first], "rehearsal": rehearsal}
    started = {
        **({"via": via} if (via := asked_from()) else {}),
        "routine": routine.name,
        "event_id": event.id,
        "routine_rules": rules,
        "process": lockfile.this_process(),  # it holds no role lock: `running` while this lives
    }
    run_log.append(logevents.RunStarted([routine.role], task, None, "routine", extra=started))
    return run_id, run_log


def waiting(root: Root) -> list[NotRun]:
    """The routines that could not run and wait for her, oldest first."""
    folder = notes_folder(root)
    statefolders.check(folder)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("run-*.json")):
        try:
            data = json.loads(statefolders.read_bytes(path, 1 << 20))
            found.append(
                NotRun(
                    str(data["id"]),
                    str(data["role"]),
                    str(data["routine"]),
                    dict(data["event"]),
                    str(data["reason"]),
                    str(data["at"]),
                    str(data.get("fix") or ""),
                )
            )
        except (OSError, ValueError, KeyError, TypeError, RecordError):
            continue  # a damaged note is not hers to read; the run log still says it
    return sorted(found, key=lambda n: (n.at, n.id))


def find(root: Root, note_id: str) -> NotRun | None:
    return next((n for n in waiting(root) if n.id == note_id), None)


def resolved(root: Root, role: str, routine: str, event_id: str) -> None:
    """The routine now runs for the event: what said it could not is no longer waiting."""
    for note in waiting(root):
        if (note.role, note.routine, note.event.get("id")) == (role, routine, event_id):
            (notes_folder(root) / f"{note.id}.json").unlink(missing_ok=True)


def dismiss(root: Root, note_id: str) -> NotRun:
    """Her "dismiss": the note leaves `sdd stops`; its run log says she dismissed it."""
    from sdd_git.connectors.tokens import masker_for
    from sdd_git.runner.logwriter import RunLog
    from sdd_git.runner.runlog import log_path
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    note = find(root, note_id)
    if note is None:
        raise RecordError(
            f"nothing named {note_id} waits: no routine that could not run has that id",
            hint="`sdd stops` lists what waits for you",
        )
    if log_path(root, note.id).exists():
        from sdd_git.runner.clock import system_clock

        RunLog.open(root, note.id, masker_for(root.path), system_clock).append(
            logevents.Dismissed("person")
        )
    (notes_folder(root) / f"{note.id}.json").unlink(missing_ok=True)
    return note


def _now(clock: Clock) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock()))
