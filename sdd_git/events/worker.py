"""The worker: takes the waiting events oldest first and fires every routine that listens.

One worker runs per root, under a lock that names its holder; a second one started meanwhile
(by a hook, the watcher) exits at once, because the holder looks again for events written while
it worked, after it lets the lock go, and takes the lock again when it finds one. Events for the
same kind, ref, branch and routine waiting together are one event. Whatever happens to each
routine (its run id, a pause, an error) is written beside the event in `done/ID.json`, so nothing
a worker does is silent, and an error firing one routine never blocks the queue.

A crash at any point loses no event: an event leaves the queue only after its routines were
fired, and firing again after a crash runs nothing twice (fire() finds the run log that claimed
the event and answers "already").

`python -m sdd_git event-worker ROOT` (a hidden command) is the detached entry that hooks and the
watcher start: it leaves the terminal's session, never reads stdin, and writes to
`.sdd/local/events/worker.log`."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdd_git import lockfile, statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import LockError, SddError
from sdd_git.events.queue import done_folder, events_folder, mark_done, pending
from sdd_git.root import Root
from sdd_git.routines.routine import Routine, listens, load_routines
from sdd_git.routines.triggers import Event
from sdd_git.trust.pending import WaitsForHer

if TYPE_CHECKING:
    from sdd_git.routines.fire import Fired

OnFired = Callable[["Fired"], None]
OnError = Callable[[dict[str, Any]], None]  # told each routine that could not be fired
LOG_NAME = "worker.log"
# Set by SIGTERM. The run in progress ends as the runner ends any interrupted run (and its event
# is done: the run log says what happened); the events after it stay queued for the next worker.
STOP = threading.Event()


def lock_path(root: Root) -> Path:
    return root.local / "locks" / "events-worker.lock"


def log_path(root: Root) -> Path:
    return events_folder(root) / LOG_NAME


def work(
    root: Root, *, on_fired: OnFired | None = None, on_error: OnError | None = None
) -> list[Fired]:
    """Fire every waiting event's routines, unless another worker holds the lock (then it will
    see these events: it looks again after letting the lock go). `on_fired` is told each
    routine fired, `on_error` each one that could not be (both are also in `done/ID.json`)."""
    from sdd_git.trust.state import refuse_tracked_state

    # Events, stops and run logs that git tracks came with the repository: act on none.
    refuse_tracked_state(root, "running the routines of waiting events")
    fired: list[Fired] = []
    tried: set[str] = set()  # an event whose file could not be moved is not tried forever
    while True:
        try:
            with lockfile.hold(
                lock_path(root),
                wait_seconds=0,
                stale_hint="the worker that held it died; the next worker takes it over",
            ):
                fired += _drain(root, tried, on_fired, on_error)
        except LockError:
            return fired  # another worker is at it
        if STOP.is_set():
            return fired
        # The window this closes: a hook writes an event after the last scan above and starts a
        # worker that finds the lock still held. That worker exits; this one looks once more.
        if not [e for e in pending(root) if e.id not in tried]:
            return fired


def _drain(
    root: Root, tried: set[str], on_fired: OnFired | None, on_error: OnError | None
) -> list[Fired]:
    fired: list[Fired] = []
    while True:
        waiting = [e for e in pending(root) if e.id not in tried]
        if not waiting:
            return fired
        routines, problems = load_routines(root)  # read anew: a routine may change meanwhile
        problem_lines = [_problem_words(p) for p in problems]
        groups: dict[tuple[str, str, str | None, str | None], list[Event]] = {}
        for event in waiting:
            key = (event.kind, event.ref, event.branch, event.routine)
            groups.setdefault(key, []).append(event)
        for same in groups.values():
            if STOP.is_set():
                return fired
            first, *later = same
            tried.update(e.id for e in same)
            outcomes = _fire_all(root, routines, first, fired, on_fired, on_error)
            _finish(root, first, outcomes, problem_lines)
            for event in later:
                _finish(root, event, [{"coalesced_into": first.id}], [])


def _fire_all(
    root: Root,
    routines: list[Routine],
    event: Event,
    fired: list[Fired],
    on_fired: OnFired | None,
    on_error: OnError | None,
) -> list[dict[str, Any]]:
    from sdd_git.routines.fire import fire

    outcomes: list[dict[str, Any]] = []
    for routine in routines:
        if not listens(routine, event):
            continue
        name = f"{routine.role}/{routine.name}"
        try:
            result = fire(root, routine, event)
        except WaitsForHer as waits:  # kept for her: it runs once she confirms (§13)
            from sdd_git.events.waiting import wait_event

            wait_event(root, event, name, waits.items)
            outcomes.append(
                {"routine": name, "at": _now(), "status": "waiting", "message": waits.message}
            )
            continue
        except Exception as exc:  # one broken routine never blocks the others, nor the queue
            outcomes.append(_error(name, event, exc))
            if on_error is not None:
                on_error(outcomes[-1])
            continue
        fired.append(result)
        outcomes.append({"routine": name, "at": _now(), **_fired_fields(result)})
        if on_fired is not None:
            on_fired(result)
    return outcomes


def _fired_fields(result: Fired) -> dict[str, Any]:
    data = result.as_json()
    return {key: data[key] for key in ("status", "run", "exit_code", "message")}


def _error(name: str, event: Event, exc: Exception) -> dict[str, Any]:
    if isinstance(exc, SddError):
        words = exc.message + (f" (hint: {exc.hint})" if exc.hint else "")
    else:  # a bug, not a user error: keep its type so the log can be reported
        words = f"{type(exc).__name__}: {exc}"
    refire = json.dumps(event.as_json(), sort_keys=True)
    return {
        "routine": name,
        "at": _now(),
        "status": "error",
        "error": words,
        "message": f"{name} did not run for event {event.id}: {words}; once fixed, fire it "
        f"with: sdd routine fire {name} --event '{refire}'",
    }


def _problem_words(problem: SddError) -> str:
    return problem.message + (f" (hint: {problem.hint})" if problem.hint else "")


def _finish(root: Root, event: Event, outcomes: list[dict[str, Any]], problems: list[str]) -> None:
    """Write the outcomes into the event's file, then move it to done/: the file that leaves the
    queue already says what happened (a crash between the two leaves it waiting, and the next
    worker fires nothing twice)."""
    data = {k: v for k, v in event.as_json().items() if k not in ("outcomes", "problems")}
    earlier = _earlier_outcomes(root, event)
    data["outcomes"] = earlier + outcomes
    if not outcomes and not earlier:
        data["outcomes"] = []
        data["note"] = "no routine listens to this event"
    if problems:
        data["problems"] = problems  # routine files that did not load: they may have listened
    source = events_folder(root) / f"{event.id}.json"
    text = _masker(root)(json.dumps(data, sort_keys=True, indent=1))  # a ref may hold a secret
    with contextlib.suppress(OSError):  # the runs are in the run logs; moving on matters more
        write_text_atomic(source, text)
    mark_done(root, event)


def _earlier_outcomes(root: Root, event: Event) -> list[dict[str, Any]]:
    """What an earlier pass over the same event id recorded (a hook's event id is the same for
    the same commit), kept so a second pass never hides the first."""
    try:
        data = json.loads(statefolders.read_text(done_folder(root) / f"{event.id}.json"))
    except (OSError, ValueError, SddError):
        return []
    found = data.get("outcomes") if isinstance(data, dict) else None
    return [o for o in found if isinstance(o, dict)] if isinstance(found, list) else []


def _masker(root: Root) -> Callable[[str], str]:
    from sdd_git.connectors.tokens import masker_for

    return masker_for(root.path)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _say(text: str) -> None:
    print(f"{_now()} [{os.getpid()}] {text}", flush=True)


def _detach(root: Root) -> None:
    """Leave the terminal behind: a new session (no SIGHUP when it closes, no Ctrl-C from it),
    stdin from /dev/null, and stdout and stderr appended to the worker log."""
    with contextlib.suppress(OSError):  # already a session leader
        os.setsid()
    statefolders.make_folder(log_path(root).parent)
    null = os.open(os.devnull, os.O_RDONLY)
    log = os.open(log_path(root), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    # git's temporary index (`git commit -a` points GIT_INDEX_FILE at a lock file) is gone by
    # the time a routine runs; the rest of git's environment is passed on as it came.
    os.environ.pop("GIT_INDEX_FILE", None)


def _terminated(signum: int, frame: object) -> None:
    STOP.set()
    raise KeyboardInterrupt  # ends like Ctrl-C: the run's log closed, its locks released


def main(argv: list[str] | None = None) -> int:
    import signal

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: sdd event-worker ROOT", file=sys.stderr)
        return 2
    from sdd_git.sink import refuse_inside_run

    try:
        # The person's worker, started by her git or her watcher: a role's command never
        # starts one (it would run other roles' routines from inside its own run).
        refuse_inside_run()
    except SddError as exc:
        print(f"error: {exc.message}\nhint: {exc.hint}", file=sys.stderr)
        return 1
    root = Root(Path(args[0]).resolve())
    if not root.config.is_file():
        print(f"error: {root.path} is not an sdd root (no .sdd/config.yaml)", file=sys.stderr)
        return 1
    _detach(root)
    signal.signal(signal.SIGTERM, _terminated)
    _say("worker started")
    mask = _masker(root)  # what the log says of an event (its ref) may hold a secret
    try:
        results = work(
            root,
            on_fired=lambda f: _say(mask(f.message)),
            on_error=lambda o: _say(mask(o["message"])),
        )
    except KeyboardInterrupt:
        _say("worker stopped (SIGTERM); waiting events stay queued")
        return 130
    except Exception as exc:  # the log is the only place anyone will see it
        import traceback

        _say(mask(f"worker failed: {type(exc).__name__}: {exc}"))
        print(mask(traceback.format_exc()), end="", flush=True)
        return 1
    if STOP.is_set():
        _say("worker stopped (SIGTERM); waiting events stay queued")
        return 130
    _say(f"worker done: {len(results)} routine(s) fired")
    return 0
