"""`sdd routine ...`: a role's routines, fired by a merge, a failed build, a push, a changed file
or a schedule (CONTRACT §10)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sdd_git.cli.complete import role_names, routine_names
from sdd_git.cli.output import current_root, emit_json, json_option, say, table

if TYPE_CHECKING:
    from sdd_git.root import Root
    from sdd_git.routines.fire import Fired
    from sdd_git.routines.routine import Event, Routine

# The run's start and the prompt are too long to show as progress; the outcome names the run.
_QUIET_EVENTS = ("message", "run_started", "run_resumed")


@click.group("routine")
def routine() -> None:
    """Routines: a role's work fired by a merge, a failed build, a push or a schedule.

    A routine is .sdd/roles/ROLE/routines/NAME.yaml. NAME may be written ROLE/NAME when two
    roles have a routine of that name."""


def _can_ask() -> bool:
    """Whether a person can answer a question: a terminal on stdin."""
    return sys.stdin.isatty()


def _confirm(question: str, yes: bool, command: str) -> bool:
    """--yes, or her answer in a terminal; with no terminal, nothing is done (exit 2)."""
    from sdd_git.errors import UsageError

    if yes:
        return True
    if not _can_ask():
        raise UsageError(
            "no terminal to ask you: nothing was written",
            hint=f"read what it says above, then run the same command with --yes: {command}",
        )
    return click.confirm(question, default=False, err=True)


def _warn_problems(root: Root) -> None:
    """Routine files that do not load: said with file and line, and left out of the index."""
    from sdd_git.routines.routine import load_routines

    for problem in load_routines(root)[1]:
        click.echo(f"warning: {problem.message} (this routine does not run)", err=True)


def _show_fields(root: Root, found: Routine) -> None:
    from sdd_git.routines.manage import describe

    for label, words in describe(root, found):
        click.echo(f"  {label + ':':<28} {words}")


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@routine.command("create")
@click.argument("role", shell_complete=role_names)
@click.argument("name")
@click.option("--on", "on", metavar="EVENT", help='main-build-failed, pr-merged, "push BRANCH" '
              'or "file-changed GLOB".')  # fmt: skip
@click.option("--schedule", metavar="CRON", help='Five cron fields, e.g. "0 9 * * 1-5" (UTC).')
@click.option("--input", "input_", metavar="T", required=True, help="What it takes, in words.")
@click.option("--expected", metavar="T", required=True, help="What it returns, in words.")
@click.option("--ask-first", "ask_first", metavar="TOOL", multiple=True,
              help="A tool that always stops for you in this routine (repeatable).")  # fmt: skip
@click.option("--yes", is_flag=True, help="Write without asking (needed with no terminal).")
def routine_create(
    role: str,
    name: str,
    on: str | None,
    schedule: str | None,
    input_: str,
    expected: str,
    ask_first: tuple[str, ...],
    yes: bool,
) -> None:
    """Create a routine for ROLE: shows every field, then asks (--yes without a terminal)."""
    from sdd_git.routines import manage
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()  # before the question: a role run never gets to answer it
    root = current_root()
    made = manage.draft(
        root,
        role,
        name,
        on=on,
        schedule=schedule,
        input=input_,
        expected=expected,
        ask_first=ask_first,
    )
    click.echo(f"The routine {role}/{name} will be:")
    _show_fields(root, made.routine)
    if not _confirm("Write this routine?", yes, f"sdd routine create {role} {name} ... --yes"):
        say("nothing was written")
        return
    created = manage.create(root, made)
    say(f"created routine {role}/{name}")
    _warn_problems(root)
    click.echo(_relative(created.path))


@routine.command("list")
@json_option
def routine_list(as_json: bool) -> None:
    """Every routine: name, role, trigger, paused. Files that do not load are named."""
    from sdd_git.routines.manage import list_routines

    root = current_root()
    found, problems = list_routines(root)
    for problem in problems:
        click.echo(f"warning: {problem.message}", err=True)
    if as_json:
        emit_json(
            [
                {"name": r.name, "role": r.role, "trigger": r.trigger, "paused": r.paused}
                for r in found
            ]
        )
        return
    if not found:
        say("no routines yet: sdd routine create ROLE NAME --on EVENT --input T --expected T")
        return
    table(
        [(r.name, r.role, r.trigger, "paused" if r.paused else "") for r in found],
        ("NAME", "ROLE", "TRIGGER", "PAUSED"),
    )


@routine.command("show")
@click.argument("name", shell_complete=routine_names)
@json_option
def routine_show(name: str, as_json: bool) -> None:
    """One routine, every field in plain words."""
    from sdd_git.routines.fire import runs_for
    from sdd_git.routines.manage import show

    root = current_root()
    found = show(root, name)
    runs = runs_for(root, found)
    if as_json:
        emit_json({**found.as_json(), "runs": len(runs)})
        return
    click.echo(f"{found.role}/{found.name}")
    _show_fields(root, found)
    click.echo(f"  {'file:':<28} {_relative(found.path)}")
    last = f" (last: {runs[0]['run']}, {runs[0]['status']})" if runs else ""
    click.echo(f"  {'runs:':<28} {len(runs)}{last}")


@routine.command("edit")
@click.argument("name", shell_complete=routine_names)
@click.option("--on", "on", metavar="EVENT", help="A new trigger (replaces the schedule).")
@click.option("--schedule", metavar="CRON", help="A new schedule (replaces the trigger).")
@click.option("--input", "input_", metavar="T", help="What it takes, in words.")
@click.option("--expected", metavar="T", help="What it returns, in words.")
def routine_edit(
    name: str, on: str | None, schedule: str | None, input_: str | None, expected: str | None
) -> None:
    """Change a routine's trigger, input or expected result (your comments stay)."""
    from sdd_git.routines import manage

    root = current_root()
    changed = manage.edit(root, name, on=on, schedule=schedule, input=input_, expected=expected)
    say(f"updated routine {changed.role}/{changed.name}")
    _show_fields(root, changed)
    _warn_problems(root)


@routine.command("pause")
@click.argument("name", shell_complete=routine_names)
def routine_pause(name: str) -> None:
    """Pause a routine: its events run nothing until you resume it."""
    from sdd_git.routines.manage import set_paused

    root = current_root()
    changed = set_paused(root, name, True)
    say(f"{changed.role}/{changed.name}: paused")
    _warn_problems(root)


@routine.command("resume")
@click.argument("name", shell_complete=routine_names)
@click.option("--yes", is_flag=True, help="Confirm it as shown without asking.")
def routine_resume(name: str, yes: bool) -> None:
    """Resume a paused routine. One you have not confirmed (it came with a template or a merge)
    is shown first, every field, and counts once you say yes."""
    from sdd_git.routines.manage import set_paused
    from sdd_git.routines.routine import find_routine, pending_item
    from sdd_git.sink import refuse_inside_run
    from sdd_git.trust.pending import ledger_for

    refuse_inside_run()  # before the question: a role run never gets to answer it
    root = current_root()
    found = find_routine(root, name)
    confirms = pending_item(root, found, ledger_for(root)) is None  # hers already
    if not confirms:
        say(f"{found.role}/{found.name} is not one you have confirmed; it would:")
        _show_fields(root, found)
        confirms = _confirm("Confirm it, as shown, and resume it?", yes, f"sdd routine resume "
                            f"{name} --yes")  # fmt: skip
        if not confirms:
            say("nothing was changed; it stays paused")
            return
    changed = set_paused(root, name, False, confirms=confirms)
    say(f"{changed.role}/{changed.name}: running again")
    _warn_problems(root)


@routine.command("delete")
@click.argument("name", shell_complete=routine_names)
@click.option("--yes", is_flag=True, help="Do not ask (needed with no terminal).")
def routine_delete(name: str, yes: bool) -> None:
    """Remove a routine's file. Its past runs stay in the run logs."""
    from sdd_git.routines import manage
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    root = current_root()
    found = manage.show(root, name)
    if not _confirm(
        f"Delete the routine {found.role}/{found.name} ({_relative(found.path)})?",
        yes,
        f"sdd routine delete {found.role}/{found.name} --yes",
    ):
        say("nothing was deleted")
        return
    deleted = manage.delete(root, f"{found.role}/{found.name}")
    say(f"deleted {_relative(deleted.path)}")


def _refuse_no_agent(command: str) -> None:
    """`sdd --no-agent ...` promises that no model is called."""
    from sdd_git.errors import UsageError

    options = click.get_current_context().find_root().obj or {}
    if options.get("no_agent"):
        raise UsageError(
            f"{command} calls a model, and --no-agent was given",
            hint="drop --no-agent to run the routine",
        )


def _event_data(text: str) -> Any:
    from sdd_git.errors import UsageError

    try:
        return json.loads(text)
    except ValueError as exc:
        raise UsageError(
            f"--event is not JSON: {exc}", hint='e.g. --event \'{"ref": "build/junit.xml"}\''
        ) from None


def _progress(as_json: bool) -> Any:
    if as_json:
        return None
    from sdd_git.runner.control import event_text

    def show(event: dict[str, Any]) -> None:
        if event.get("event") == "rehearsed":
            from sdd_git.runner.words import describe

            action = describe(str(event.get("tool")), dict(event.get("args") or {}))
            say(f"  · not run (this is a test); in a real run it would {event.get('would')}: "
                f"{action}")  # fmt: skip
        elif event.get("event") not in _QUIET_EVENTS:
            say(f"  · {event_text(event)}")  # already masked: it is the logged line

    return show


def _masked(root: Root, data: Any) -> Any:
    from sdd_git.connectors.tokens import masker_for

    return json.loads(masker_for(root.path)(json.dumps(data)))


def _render(root: Root, fired: Fired, as_json: bool) -> None:
    from sdd_git.routines.fire import stops_of

    if as_json:
        emit_json(_masked(root, fired.as_json()))
        return
    message, reply = _masked(root, [fired.message, fired.reply])
    found = stops_of(root, fired.run_id) if fired.status == "stopped" and fired.run_id else []
    if found and found[-1].get("stop"):
        stop = found[-1]
        click.echo(f"STOP {stop['stop']} ({fired.role} asks, routine {fired.routine}): "
                   f"{stop.get('action')}")  # fmt: skip
        click.echo(f"choose: sdd allow {stop['stop']}  |  sdd deny {stop['stop']}")
        if stop.get("expires_at"):
            click.echo(f"expires: {stop['expires_at']} (unanswered, its action never runs)")
    elif fired.status in ("failed", "interrupted"):
        click.echo(f"error: {message}", err=True)
    elif reply:
        click.echo(reply)
    else:
        click.echo(message)
    if fired.run_id:
        say(f"run {fired.run_id}: {fired.status}")


def _summary_file(summary: Path | None) -> Path | None:
    """Where a CI job's summary goes: --summary, else GitHub's $GITHUB_STEP_SUMMARY."""
    if summary is not None:
        return summary
    found = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(found) if found else None


@routine.command("fire")
@click.argument("name", shell_complete=routine_names)
@click.option("--event", "event_json", metavar="JSON", required=True,
              help='The event, e.g. \'{"ref": "build/junit.xml"}\' (kind, source, id, at '
              "default).")  # fmt: skip
@click.option("--summary", type=click.Path(path_type=Path), metavar="PATH",
              help="Append the outcome and every stop as markdown (default in GitHub "
              "Actions: $GITHUB_STEP_SUMMARY).")  # fmt: skip
@click.option("--change", metavar="CH", help="The change the run is about, when more than one "
              "is open (or \"change\" in the event).")  # fmt: skip
@json_option
def routine_fire(
    name: str, event_json: str, summary: Path | None, change: str | None, as_json: bool
) -> None:
    """Run a routine now for an event (what hooks, the watcher and CI call). Exit 0 done,
    3 stopped (in CI a reviewer answers from the exported file, or the stop expires), 1 failed
    or source missing."""
    from sdd_git.events.queue import mark_done, record_event
    from sdd_git.routines.fire import event_from_data, fire, summary_markdown
    from sdd_git.routines.routine import find_routine
    from sdd_git.sink import refuse_inside_run
    from sdd_git.trust.pending import WaitsForHer

    refuse_inside_run()
    _refuse_no_agent("sdd routine fire")
    root = current_root()
    found = find_routine(root, name)
    data = _event_data(event_json)
    if change is not None and isinstance(data, dict):
        data = {**data, "change": change}
    # Where the event comes from is a fact of this path, never the event's text (§13): her
    # terminal is `person`; anything else (a CI job, a script) is `ci`, where nobody answers.
    source = "person" if sys.stdin.isatty() else "ci"
    event = event_from_data(root, found, data, source=source)
    event = record_event(root, event, keep_id=isinstance(data, dict) and bool(data.get("id")))
    try:
        fired = fire(root, found, event, on_event=_progress(as_json))
    except WaitsForHer as waits:
        if not sys.stdin.isatty():  # kept for her: it runs once she confirms
            from sdd_git.events.waiting import wait_event

            wait_event(root, event, f"{found.role}/{found.name}", waits.items)
        raise
    finally:
        # Fired, or refused with an error she sees: either way this event was handled here,
        # and no worker should fire every listening routine for it later. Only a crash leaves
        # it queued, for the worker to take up. An event already queued for every listener
        # (a hook's, named by its id) stays theirs: the worker fires the others, and this
        # routine answers "already" there.
        if event.routine is not None:
            mark_done(root, event)
    _render(root, fired, as_json)
    target = _summary_file(summary)
    if target is not None:
        _append(target, _masked(root, summary_markdown(root, fired, event)))
    sys.exit(fired.exit_code)


def _append(path: Path, text: str) -> None:
    """Appended and flushed, as CI engines expect of their summary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _test_event(root: Root, found: Routine, event_json: str | None) -> Event:
    from sdd_git.errors import UsageError
    from sdd_git.routines.fire import event_from_data, synthetic_event

    if event_json is not None:
        return event_from_data(root, found, _event_data(event_json), source="person")
    event = synthetic_event(root, found)
    if event is None:
        raise UsageError(
            f"{found.role}/{found.name} needs a build result to test with, and none is configured",
            hint='name one: sdd routine test NAME --event \'{"ref": "build/junit.xml"}\', or '
            'set watch: {build_results: ["build/*.xml"]} in .sdd/config.yaml',
        )
    return event


@routine.command("test")
@click.argument("name", shell_complete=routine_names)
@click.option("--event", "event_json", metavar="JSON",
              help="The event to test with (default: built from the current source).")  # fmt: skip
@json_option
def routine_test(name: str, event_json: str | None, as_json: bool) -> None:
    """A dry run against the current source: the role is called, no consequential action
    runs, even one its boundary always allows."""
    from sdd_git.routines.fire import fire
    from sdd_git.routines.routine import find_routine
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    _refuse_no_agent("sdd routine test")
    root = current_root()
    found = find_routine(root, name)
    event = _test_event(root, found, event_json)
    if not as_json:
        say(f"testing {found.role}/{found.name} (nothing it asks for runs): {event.kind} "
            f"{event.ref}")  # fmt: skip
    fired = fire(root, found, event, rehearsal=True, on_event=_progress(as_json))
    _render(root, fired, as_json)
    sys.exit(fired.exit_code)


@routine.command("history")
@click.argument("name", shell_complete=routine_names)
@json_option
def routine_history(name: str, as_json: bool) -> None:
    """A routine's runs, newest first, from the run logs (its own role's runs only)."""
    from sdd_git.events.waiting import for_routine
    from sdd_git.routines.fire import runs_for
    from sdd_git.routines.routine import find_routine
    from sdd_git.runner.history import STATUS_WORDS

    root = current_root()
    found = find_routine(root, name)
    runs = runs_for(root, found)
    if as_json:
        emit_json(runs)
        return
    for entry in for_routine(root, f"{found.role}/{found.name}"):
        names = ", ".join(str(i.get("name")) for i in entry.items)
        say(f"waiting for your confirmation: event {entry.id} ({entry.what}) waits on {names}; "
            "see sdd trust review")  # fmt: skip
    if not runs:
        say(f"{found.role}/{found.name} has not run yet")
        return
    table(
        [
            (
                r["run"],
                str(r["event"]),
                STATUS_WORDS.get(r["status"], r["status"]) + (" (test)" if r["rehearsal"] else ""),
                r["started"],
            )
            for r in runs
        ],
        ("RUN", "EVENT", "STATUS", "STARTED"),
    )
    for r in runs:
        if r.get("reason"):  # what kept it from running, and what she can do
            click.echo(f"{r['run']} could not run: {r['reason']}")


@routine.command("export")
@click.argument("name", required=False, shell_complete=routine_names)
@click.option("--github-actions", "engine", flag_value="github-actions",
              help="A GitHub Actions workflow.")  # fmt: skip
@click.option("--gitlab-ci", "engine", flag_value="gitlab-ci", help="A GitLab CI pipeline.")
@click.option("--jenkins", "engine", flag_value="jenkins", help="A Jenkins declarative pipeline.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), metavar="PATH",
              help="Write the definition here (default: print it).")  # fmt: skip
@click.option("--all", "every", is_flag=True,
              help="Every routine, one file each, into --out-dir.")  # fmt: skip
@click.option("--out-dir", type=click.Path(path_type=Path, file_okay=False), metavar="DIR",
              help="With --all: the folder the files go in (made when missing).")  # fmt: skip
def routine_export(
    name: str | None, engine: str | None, out: Path | None, every: bool, out_dir: Path | None
) -> None:
    """The CI definition that runs the routine on the engine's own events (secrets come from
    the engine's secret store, never from this file)."""
    from sdd_git.errors import UsageError
    from sdd_git.routines.export import export_definition
    from sdd_git.routines.routine import find_routine

    if engine is None:
        raise UsageError("say which engine", hint="add --github-actions, --gitlab-ci or --jenkins")
    if every or out_dir is not None:
        _export_all(name, engine, out, every, out_dir)
        return
    if name is None:
        raise UsageError(
            "say which routine", hint="sdd routine export NAME, or --all --out-dir DIR"
        )
    from sdd_git.sink import refuse_inside_run

    if out is not None:
        refuse_inside_run()  # before anything is read: a role run writes no CI file
    root = current_root()
    found = find_routine(root, name)
    text = export_definition(root, found, engine)
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    from sdd_git.atomicfile import write_text_atomic

    write_text_atomic(out, text)
    say(f"wrote the {engine} definition of {found.role}/{found.name}")
    click.echo(_relative(out))


# The file each engine's definition of routine NAME is written to by `export --all`.
_EXPORT_FILE = {
    "github-actions": "sdd-routine-{}.yml",
    "gitlab-ci": "sdd-routine-{}.gitlab-ci.yml",
    "jenkins": "Jenkinsfile.sdd-routine-{}",
}


def _export_all(
    name: str | None, engine: str, out: Path | None, every: bool, out_dir: Path | None
) -> None:
    """Every routine's definition, one file each: checked whole before the first is written, so
    a routine that cannot be exported leaves the folder as it was."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.cli.progress import SlowBar
    from sdd_git.errors import UsageError
    from sdd_git.routines.export import export_definition
    from sdd_git.routines.manage import list_routines
    from sdd_git.sink import refuse_inside_run

    if not every or out_dir is None or name is not None or out is not None:
        raise UsageError(
            "--all and --out-dir go together, with no NAME and no --out",
            hint="sdd routine export --all --github-actions --out-dir .github/workflows",
        )
    refuse_inside_run()
    root = current_root()
    found, problems = list_routines(root)
    if problems:
        raise problems[0]
    texts: list[tuple[Path, str]] = []
    bar = SlowBar("exporting routines")
    try:
        for done, routine in enumerate(found, 1):
            texts.append(
                (out_dir / _EXPORT_FILE[engine].format(routine.name),
                 export_definition(root, routine, engine))
            )  # fmt: skip
            bar(done, len(found))
    finally:
        bar.done()
    # Two roles may each own a routine of one name: both would go to one file, the later
    # silently replacing the other (a merged role's over hers).
    owners: dict[Path, list[str]] = {}
    for (path, _text), routine in zip(texts, found, strict=True):
        owners.setdefault(path, []).append(f"{routine.role}/{routine.name}")
    clash = next((names for names in owners.values() if len(names) > 1), None)
    if clash is not None:
        raise UsageError(
            f"the routines {', '.join(clash)} would be written to one file; nothing was written",
            hint=f"rename one of them, or export each with: sdd routine export {clash[0]} "
            f"--{engine} --out PATH",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, text in texts:
        write_text_atomic(path, text)
        click.echo(_relative(path))
    say(f"wrote the {engine} definitions of {len(texts)} routines")


@routine.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def routine_validate(paths: tuple[Path, ...]) -> None:
    """Check routine files (default: every routine of this repo and of its templates). Errors
    name file, line and key; exit 1 when any file has one."""
    from sdd_git.cli.output import current_root_unless
    from sdd_git.routines.check import check

    root = current_root_unless(paths or None)
    results = check(root, paths)
    failed = [checked for checked in results if checked.problem is not None]
    for checked in failed:
        assert checked.problem is not None
        click.echo(f"error: {checked.problem.message}", err=True)
        if checked.problem.hint:
            click.echo(f"hint: {checked.problem.hint}", err=True)
    say(f"checked {len(results)} routine file(s): {len(failed)} with errors")
    if failed:
        sys.exit(1)


@routine.command("pack-stops", hidden=True)  # what an exported CI file runs (routines/ci/carry)
@click.argument("folder", type=click.Path(path_type=Path))
def routine_pack_stops(folder: Path) -> None:
    """Copy each pending stop and its run's log into FOLDER, for the job that answers it."""
    from sdd_git.routines.ci.carry import pack

    for stop_id in pack(current_root(), folder):
        say(f"kept {stop_id} for its answer")


@routine.command("show-stop", hidden=True)
@click.argument("folder", type=click.Path(path_type=Path))
@click.argument("stop_id", metavar="STOP")
@click.option("--digest", "digest_only", is_flag=True, help="Print only the kept files' digest.")
def routine_show_stop(folder: Path, stop_id: str, digest_only: bool) -> None:
    """The kept stop STOP of FOLDER in words (Markdown), as a reviewer reads it before she
    approves its answer; with --digest, what the answering job checks it still holds."""
    from sdd_git.routines.ci.carry import read_kept

    kept = read_kept(folder, stop_id)
    click.echo(kept.digest if digest_only else kept.words())


@routine.command("unpack-stops", hidden=True)
@click.argument("folder", type=click.Path(path_type=Path))
@click.argument("stop_id", metavar="STOP")
@click.option("--digest", default=None, help="Refuse unless the kept files have this digest.")
def routine_unpack_stops(folder: Path, stop_id: str, digest: str | None) -> None:
    """Put the stop STOP and its run's log from FOLDER back, for `sdd allow|deny STOP`."""
    from sdd_git.routines.ci.carry import unpack

    run = unpack(current_root(), folder, stop_id, digest)
    say(f"{stop_id} of run {run} waits for its answer")
