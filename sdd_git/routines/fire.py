"""Firing a routine for one event: paused, already run, source missing, or a run of its role.

One event runs a routine at most once. A per-routine lock is held while fire() checks the run
logs and starts the run, and the run log's `run_started` (origin routine, this routine, this
event id) is the claim: a crash before it means nothing ran, so firing again is safe; a crash
after it means the routine ran once, and firing again answers "already".

A missing source is reported, never replaced: the routine's source (a build result, a commit, a
changed file) is checked before any provider call, and when it names nothing that exists the
run log says `missing` with the source named, and nothing else is written."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import lockfile, statefolders
from sdd_git.errors import RecordError, SddError, UsageError
from sdd_git.recordjson import record_json
from sdd_git.root import Root
from sdd_git.routines import notrun
from sdd_git.routines.routine import Routine, listens, main_branch
from sdd_git.routines.source import PROTECTED, Source, branch_tip, check_source, shown_ref
from sdd_git.routines.triggers import EVENT_KINDS, EVENT_SOURCES, KINDS, Event, new_event_id
from sdd_git.runner import logevents
from sdd_git.runner.clock import Clock, system_clock
from sdd_git.runner.runlog import runs_folder

# Checking the run logs and starting a run takes well under a second; a holder that takes
# longer is another fire of the same routine starting its run.
LOCK_WAIT_SECONDS = 30.0
EXIT_DONE, EXIT_MISSING = 0, 1


@dataclass(frozen=True)
class Fired:
    routine: str  # NAME
    role: str
    event: str  # the event id
    run_id: str | None  # None when nothing ran (paused)
    status: str  # a run's end status (done, stopped, failed, ...), or missing, paused, already
    exit_code: int  # 0 done, 3 stopped, 1 failed or missing, 0 paused or already
    message: str  # one line in plain words for the screen
    reply: str | None = None  # the role's reply, when the run ended with one

    def as_json(self) -> dict[str, Any]:
        return record_json(self, rename={"run_id": "run"})


def lock_path(root: Root, routine: Routine) -> Path:
    return root.local / "routines" / f"{routine.role}--{routine.name}.lock"


def fire(
    root: Root,
    routine: Routine,
    event: Event,
    *,
    rehearsal: bool = False,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    clock: Clock = system_clock,
) -> Fired:
    """Run `routine` for `event`, at most once per event id (see the module's note).

    `rehearsal` (`sdd routine test`): the role is called, but no consequential action runs,
    even one its boundary always allows; a paused routine can still be rehearsed. One that
    cannot run says so in a run log and `sdd stops` (routines/notrun.py), and raises."""
    from sdd_git.trust.pending import WaitsForHer

    if not listens(routine, event):
        raise UsageError(
            f"the routine {routine.role}/{routine.name} does not listen to this event "
            f"({_event_words(root, routine, event)})",
            hint=f"it fires {trigger_words(root, routine)}",
        )
    name = f"{routine.role}/{routine.name}"
    if routine.paused and not rehearsal:
        return Fired(
            routine.name, routine.role, event.id, None, "paused", EXIT_DONE,
            f"{name} is paused: nothing ran for event {event.id} (resume it with: sdd routine "
            f"resume {name})",
        )  # fmt: skip
    progress: dict[str, Any] = {"claimed": False, "task": f"This is your routine {routine.name}."}
    try:
        return _fire_once(root, routine, event, rehearsal, on_event, clock, progress)
    except WaitsForHer:
        raise  # kept for her, said where she confirms (§13)
    except SddError as exc:
        if not progress["claimed"]:  # refused before its run began: said where she looks too
            notrun.log(root, routine, event, progress["task"], rehearsal, clock, on_event, exc)
        raise


def _fire_once(
    root: Root,
    routine: Routine,
    event: Event,
    rehearsal: bool,
    on_event: Callable[[dict[str, Any]], None] | None,
    clock: Clock,
    progress: dict[str, Any],
) -> Fired:
    """fire() past its refusals; `progress` says whether the run claimed the event yet."""
    from sdd_git.runner.conversation import Attachment
    from sdd_git.runner.run import RunRequest, start

    name = f"{routine.role}/{routine.name}"
    require_confirmed(root, routine)
    with contextlib.ExitStack() as held:
        held.enter_context(
            lockfile.hold(
                lock_path(root, routine),
                wait_seconds=LOCK_WAIT_SECONDS,
                stale_hint=f"the fire that held it died before starting a run; clear it: rm "
                f"{lock_path(root, routine)}",
            )
        )
        earlier = [
            r
            for r in runs_for(root, routine, event.id)
            if r["rehearsal"] == rehearsal and r["status"] != notrun.STATUS  # claims nothing
        ]
        if earlier:
            first = earlier[-1]  # oldest: the run that claimed the event
            return Fired(
                routine.name, routine.role, event.id, first["run"], "already", EXIT_DONE,
                f"{name} already ran for event {event.id}: run {first['run']} "
                f"({first['status']}); nothing ran again",
            )  # fmt: skip
        source = check_source(root, routine, event)
        task = task_text(root, routine, event, source, rehearsal)
        progress["task"] = task
        if source.missing is not None:
            run_id = _log_missing(root, routine, event, source, task, rehearsal, clock, on_event)
            return Fired(
                routine.name, routine.role, event.id, run_id, "missing", EXIT_MISSING,
                f"missing: {source.missing} ({source.why}); nothing ran, and nothing older "
                "was used in its place",
            )  # fmt: skip

        def listen(logged: dict[str, Any]) -> None:
            if logged.get("event") == "run_started":
                progress["claimed"] = True
                held.close()  # the claim is on disk: the next fire of this event sees it
                if not rehearsal:
                    with contextlib.suppress(OSError, SddError):
                        notrun.resolved(root, routine.role, routine.name, event.id)
            if on_event is not None:
                on_event(logged)

        change = event.extra.get("change")
        request = RunRequest(
            author=routine.role,
            task=task,
            origin="routine",
            # With more than one open change, the event names the one it is about.
            change=change if isinstance(change, str) and change else None,
            attachments=(
                (Attachment(source.attachment, "the build result the event names"),)
                if source.attachment is not None
                else ()
            ),
            # A connector is attached by the routine's own words (the person's), never by the
            # event's: a changed file named "notes @github" attaches nothing.
            attach=f"{routine.input}\n{routine.expected}",
            routine={
                "name": routine.name,
                "event": event.id,
                "ask_first": [dict(rule) for rule in routine.ask_first],
                "rehearsal": rehearsal,
                # In CI nobody answers: not even a saved always_allow rule runs an action.
                "unattended": event.source == "ci",
            },
        )
        outcome = start(root, request, clock=clock, on_event=listen)
    return Fired(
        routine.name,
        routine.role,
        event.id,
        outcome.run_id,
        outcome.status,
        outcome.exit_code,
        _outcome_words(name, event, outcome),
        outcome.reply,
    )


def require_confirmed(root: Root, routine: Routine) -> None:
    """Nothing fires on a routine, a role or settings she has not confirmed (CONTRACT §13):
    raises `WaitsForHer`, before any lock, log or provider call. On a CI engine the engine is
    the trust anchor, and nothing is asked of the ledger."""
    from sdd_git.roles.registry import find_role
    from sdd_git.routines.routine import pending_item
    from sdd_git.runner import trusted
    from sdd_git.trust.pending import ledger_for

    ledger = ledger_for(root)
    if ledger is None:
        return
    item = pending_item(root, routine, ledger)
    role, _ = find_role(root, routine.role, use_cache=False)
    trusted.require(
        root,
        [role],
        [item] if item is not None else [],
        doing=f"the routine {routine.role}/{routine.name}",
    )


def _outcome_words(name: str, event: Event, outcome: Any) -> str:
    if outcome.status == "stopped" and outcome.stop is not None:
        return f"{name} stopped for the person (stop {outcome.stop.id}): {outcome.message}"
    if outcome.status == "done":
        return f"{name} ran for event {event.id}: done"
    return f"{name} ran for event {event.id}: {outcome.status}: {outcome.message}"


def warm() -> None:
    """Import what a fire needs, now: a watcher does it before the first event waits for it."""
    import sdd_git.runner.run  # noqa: F401


def trigger_words(root: Root, routine: Routine) -> str:
    """The routine's trigger, in plain words."""
    template = KINDS[routine.event_kind].trigger
    main = main_branch(root) if "{main}" in template else ""
    return template.format(main=main, argument=routine.argument, schedule=routine.schedule)


def _event_words(root: Root, routine: Routine, event: Event) -> str:
    ref = shown_ref(event.ref)
    branch = shown_ref(event.branch or main_branch(root))
    said = KINDS[event.kind].said.format(
        ref=ref, named=ref or "not named", ref_or_at=ref or event.at, branch=branch
    )
    return f"{said} (event {event.id}, from {event.source}, at {event.at})"


def task_text(
    root: Root, routine: Routine, event: Event, source: Source, rehearsal: bool = False
) -> str:
    """What the role is given: its input and expected result, and the event in plain words."""
    lines = [
        f"This is your routine {routine.name}, started by an event, not by a person: "
        f"{_event_words(root, routine, event)}.",
        f"Input: {routine.input}",
        f"Expected result: {routine.expected}",
    ]
    if source.words:
        lines.append(source.words)
    lines.append(
        "Nobody is watching this run: every action that changes something stops and waits for "
        "the person, and expires unanswered. You may propose a QA result, never record one, and "
        "never move a change to another stage. If something you need is missing, say so and "
        "name it; never use older or cached data in its place."
    )
    if rehearsal:
        lines.append("This is a test of the routine: no action runs, even one normally allowed.")
    return "\n".join(lines)


def _log_missing(
    root: Root,
    routine: Routine,
    event: Event,
    source: Source,
    task: str,
    rehearsal: bool,
    clock: Clock,
    on_event: Callable[[dict[str, Any]], None] | None,
) -> str:
    """A run log that says the source is missing, and nothing else: no provider is called."""
    run_id, log = notrun.start_log(root, routine, event, task, rehearsal, clock, on_event)
    log.append(logevents.Missing(source.missing, source.why, event.kind))
    log.append(logevents.RunEnded("missing"))
    return run_id


def runs_for(root: Root, routine: Routine, event_id: str | None = None) -> list[dict[str, Any]]:
    """The routine's runs, newest first: `run`, `event`, `status` (its end status, or
    running), `started`, `rehearsal`. Only runs of the routine's own role count: a copied
    role's routine of the same name starts with no history."""
    from sdd_git.errors import RecordError
    from sdd_git.runner.history import status_of
    from sdd_git.runner.runlog import read_events

    folder = runs_folder(root)
    if not folder.is_dir():
        return []
    found = []
    order: dict[str, int] = {}
    for path in folder.glob("run-*.jsonl"):
        started = _first_event(path)
        if (
            started is None
            or started.get("event") != "run_started"
            or started.get("origin") != "routine"
            or started.get("routine") != routine.name
            or (started.get("roles") or [None])[0] != routine.role
            or (event_id is not None and started.get("event_id") != event_id)
        ):
            continue
        try:
            events = read_events(path)
        except RecordError:
            events = [started]
        status, _ = status_of(root, events)
        rules = started.get("routine_rules")
        found.append(
            {
                "run": path.stem,
                "event": started.get("event_id"),
                "status": status,
                "started": str(started.get("ts")),
                "rehearsal": bool(isinstance(rules, dict) and rules.get("rehearsal")),
                # Why it could not run, in plain words; None for a run that ran.
                "reason": _reason(events) if status == notrun.STATUS else None,
            }
        )
        order[path.stem] = _mtime(path)
    # Newest first; within one second (the logs' precision), the log written last first.
    return sorted(found, key=lambda r: (r["started"], order[r["run"]]), reverse=True)


def _reason(events: list[dict[str, Any]]) -> str | None:
    said = next((e for e in events if e.get("event") == "could_not_run"), None)
    return str(said.get("reason")) if said is not None else None


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def _first_event(path: Path) -> dict[str, Any] | None:
    """A run log's first line: `run_started`, written before anything else of the run."""
    try:
        line = statefolders.read_bytes(path, 1 << 16).split(b"\n", 1)[0]
        data = json.loads(line)
    except (OSError, ValueError, RecordError):
        return None
    return data if isinstance(data, dict) else None


def synthetic_event(root: Root, routine: Routine, now: float | None = None) -> Event | None:
    """An event from the routine's current source, for `sdd routine test`: the newest build
    result matching `watch.build_results` in `.sdd/config.yaml`, the tip of the branch, the
    newest file matching the glob, or now. None when a build result cannot be found this way
    (then the person names one with --event)."""
    moment = time.time() if now is None else now
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
    event_id = f"test-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(moment))}-{_token()}"
    kind = routine.event_kind
    branch: str | None = None
    if kind == "schedule":
        return Event(event_id, kind, at, at, "person", routine=routine.name)
    if kind == "main-build-failed":
        globs = build_result_globs(root)
        if not globs:
            return None
        ref = _newest(root, globs) or globs[0]
        branch = main_branch(root)
    elif kind in ("push", "pr-merged"):
        branch = routine.argument if kind == "push" else main_branch(root)
        ref = branch_tip(root, branch or "") or ""
    else:
        ref = _newest(root, [routine.argument or ""]) or routine.argument or ""
    return Event(event_id, kind, ref, at, "person", branch=branch)


def _token() -> str:
    import secrets

    return secrets.token_hex(3)


def build_result_globs(root: Root) -> list[str]:
    """`watch: {build_results: [GLOB, ...]}` in `.sdd/config.yaml`."""
    from sdd_git.errors import RecordError
    from sdd_git.settings import settings

    found = settings(root)
    watch = found.get("watch") or {}
    globs = watch.get("build_results") if isinstance(watch, dict) else None
    if globs is None:
        return []
    if isinstance(globs, str):
        globs = [globs]
    if not isinstance(globs, list) or not all(isinstance(g, str) and g for g in globs):
        raise RecordError(
            f"{found.where('watch', 'build_results')}: key 'watch.build_results' must be a "
            "list of globs",
            hint='write watch: {build_results: ["build/*.xml", "build/exit-code"]}',
        )
    return list(globs)


def _newest(root: Root, globs: list[str]) -> str | None:
    """The most recently changed file matching one of `globs`, relative to the root (never
    under `.git/` or `.sdd/`)."""
    import os

    from sdd_git.routines.routine import glob_matches

    patterns = [g.lstrip("/") for g in globs if g.strip("/")]
    best: tuple[float, str] | None = None
    base = root.path
    for folder, subfolders, files in os.walk(base):
        if Path(folder) == base:
            subfolders[:] = [d for d in subfolders if d.casefold() not in PROTECTED]
        for name in files:
            path = Path(folder) / name
            relative = path.relative_to(base).as_posix()
            if not any(glob_matches(p, relative) for p in patterns) or path.is_symlink():
                continue
            moment = path.stat().st_mtime
            if best is None or moment > best[0]:
                best = (moment, relative)
    return None if best is None else best[1]


_EVENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
_EVENT_KEYS = ("id", "kind", "ref", "at", "source", "branch", "routine")
# Read from an event's JSON: `source` is left out on purpose (see event_from_data).


def event_from_data(
    root: Root, routine: Routine, data: Any, *, source: str = "ci", now: float | None = None
) -> Event:
    """The event `--event JSON` names for this routine, its defaults filled: `kind` the
    routine's, `source` ci, `branch` the routine's branch (push) or the main branch, `id` and
    `at` new. Refused (nothing written) when it is not an event this routine listens to."""
    kind = _given_kind(routine, data)
    moment = time.time() if now is None else now
    at = _given_at(data, moment)
    ref = data.get("ref")
    if kind == "schedule":
        ref = ref or at
    elif not ref:
        raise UsageError(
            f"--event: a {kind} event needs a 'ref': " + KINDS[kind].ref_words,
            hint=f"e.g. --event '{KINDS[kind].ref_example}'",
        )
    # Where an event came from is a fact of the code path that writes it (CONTRACT §13), never
    # what its text says: `"source": "hook"` in CI must not turn saved rules back on.
    # A `source` the text gives is checked as a word (exported workflows write `ci`), and
    # never used.
    for said in (data.get("source"), source):
        if said is not None and said not in EVENT_SOURCES:
            raise UsageError(
                f"--event: '{said}' is not an event source", hint=", ".join(EVENT_SOURCES)
            )
    event_id = data.get("id") or new_event_id(moment)
    if not _EVENT_ID.match(event_id):
        raise UsageError(
            f"--event: {event_id!r} is not an event id",
            hint="letters, digits, '.', '_' and '-', up to 128 characters",
        )
    event = Event(
        id=event_id,
        kind=kind,
        ref=str(ref),
        at=at,
        source=source,
        branch=_given_branch(root, routine, data, kind),
        routine=data.get("routine") or f"{routine.role}/{routine.name}",
        extra={k: v for k, v in data.items() if k not in _EVENT_KEYS},
    )
    if not listens(routine, event):
        raise UsageError(
            f"--event: {routine.role}/{routine.name} does not listen to this event "
            f"({_event_words(root, routine, event)})",
            hint=f"it fires {trigger_words(root, routine)}",
        )
    return event


def _given_kind(routine: Routine, data: Any) -> str:
    if not isinstance(data, dict):
        raise UsageError("--event must be a JSON object", hint='e.g. --event \'{"ref": "abc123"}\'')
    for key in _EVENT_KEYS:
        if data.get(key) is not None and not isinstance(data[key], str):
            raise UsageError(f"--event: '{key}' must be text, not {data[key]!r}")
    kind = str(data.get("kind") or routine.event_kind)
    if kind not in KINDS:
        raise UsageError(f"--event: '{kind}' is not an event", hint=", ".join(EVENT_KINDS))
    if kind != routine.event_kind:
        raise UsageError(
            f"--event: {routine.role}/{routine.name} fires on {routine.event_kind}, not {kind}",
            hint="leave out `kind`: it defaults to the routine's",
        )
    return kind


def _given_at(data: dict[str, Any], moment: float) -> str:
    at = str(data.get("at") or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment)))
    try:
        time.strptime(at, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise UsageError(
            f"--event: 'at' must be a UTC time like 2026-11-30T09:00:00Z, not {at!r}"
        ) from None
    return at


def _given_branch(root: Root, routine: Routine, data: dict[str, Any], kind: str) -> str | None:
    branch = data.get("branch")
    if branch is not None:
        return str(branch)
    default = KINDS[kind].branch
    if default == "argument":
        return routine.argument
    return main_branch(root) if default == "main" else None


def stops_of(root: Root, run_id: str) -> list[dict[str, Any]]:
    """The `stop` events of a run's log, in order: each stop with its action in plain words."""
    from sdd_git.errors import RecordError
    from sdd_git.runner.runlog import log_path, read_events

    try:
        return [e for e in read_events(log_path(root, run_id)) if e.get("event") == "stop"]
    except RecordError:
        return []


def summary_markdown(root: Root, fired: Fired, event: Event) -> str:
    """What a CI job's summary shows of one fire: the outcome, and every stop of the run as
    the action in plain words with its stop id and expiry, and how a reviewer answers it."""
    from sdd_git.runner.words import visible

    def code(text: str) -> str:
        return "`" + shown_ref(text).replace("`", "'") + "`"

    lines = [
        f"### sdd routine {code(f'{fired.role}/{fired.routine}')}: {fired.status}",
        "",
        f"Event {code(event.id)} ({event.kind}, ref {code(event.ref)})"
        + (f", run {code(fired.run_id)}" if fired.run_id else "")
        + ".",
        "",
    ]
    found = stops_of(root, fired.run_id) if fired.run_id else []
    if not found:
        lines += [visible(fired.message, keep_newlines=False), ""]
    else:
        lines += [
            "The run ended stopped, and nothing consequential ran. Each stop waits for a "
            "reviewer's answer until it expires; its action never runs unless allowed in time. "
            "An exported workflow answers it from CI (GitHub: run the workflow by hand with "
            "the stop, allow or deny, and this run's number), or `sdd allow STOP` where the "
            "run's log is.",
            "",
        ]
    for stop in found:
        action = visible(str(stop.get("action") or ""), keep_newlines=True)
        fence = "`" * max(3, _longest_backticks(action) + 1)
        if stop.get("stop"):
            expires = stop.get("expires_at") or "never"
            lines.append(f"- Stop {code(str(stop['stop']))}, expires {code(str(expires))}:")
        else:
            lines.append(f"- A stop with nothing to allow ({stop.get('kind')}):")
        lines += ["", f"  {fence}text", *(f"  {line}" for line in action.split("\n"))]
        lines += [f"  {fence}", ""]
    return "\n".join(lines).rstrip("\n") + "\n\n"


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)
