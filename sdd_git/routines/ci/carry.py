"""A stopped CI run, carried from the job that stopped to the job that answers it.

A CI runner's disk is gone when its job ends, and with it the run's log: the one thing an
answer continues from (sdd_git.runner.run.answer). So the job that stopped packs, into a folder
the engine keeps (GitHub's artifact, GitLab's job artifacts), each pending stop file and the log
of its run, nothing else: the log holds no secret value (CONTRACT §5), nor does a stop file.

The answering job unpacks one stop, the one the reviewer named, and the log of that stop's run.
What it reads is a folder, so it is read as a stranger's: names of the shape sdd writes, regular
files only, the stop's run the run whose log is there, and a log that has not already decided
the stop (a job run again from the same folder must act on nothing).

    sdd routine pack-stops DIR            # the stopped job (exit 0; nothing pending: an error)
    sdd routine unpack-stops DIR STOP     # the answering job, before `sdd allow|deny STOP`
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from sdd_git.errors import RecordError, UsageError
from sdd_git.root import Root

STOPS = "stops"
LOGS = "role-runs"
STOP_ID = re.compile(r"stop-[0-9a-f]{4,32}\Z")
_RUN_ID = re.compile(r"run-[0-9A-Za-z-]{1,80}\Z")


def check_stop_id(stop_id: str) -> str:
    """A stop id as sdd writes it (`stop-` and hex digits); anything else is refused before
    it reaches a path or a command."""
    if not STOP_ID.match(stop_id):
        raise UsageError(
            f"{stop_id!r} is not a stop id",
            hint="a stop id looks like stop-1a2b3c; the stopped job's summary lists them",
        )
    return stop_id


def pack(root: Root, out: Path) -> list[str]:
    """Copy every pending stop and its run's log into `out`; the stop ids packed."""
    from sdd_git.runner import stops
    from sdd_git.runner.runlog import log_path

    pending = [s for s in stops.pending(root) if s.kind in ("approval", "draft")]
    if not pending:
        raise RecordError("no stop is waiting here, so there is nothing to keep for an answer")
    (out / STOPS).mkdir(parents=True, exist_ok=True)
    (out / LOGS).mkdir(parents=True, exist_ok=True)
    for stop in pending:
        log = log_path(root, stop.run)
        shutil.copyfile(
            stops.stops_folder(root) / f"{stop.id}.json", out / STOPS / f"{stop.id}.json"
        )
        shutil.copyfile(log, out / LOGS / log.name)
    return [s.id for s in pending]


def unpack(root: Root, folder: Path, stop_id: str) -> str:
    """Put the stop `stop_id` and its run's log from `folder` where `sdd allow` reads them;
    the run id. Refuses, and puts nothing, when the folder does not hold them as sdd wrote
    them, or its log already holds a decision for the stop."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.runner import stops
    from sdd_git.runner.runlog import log_path

    check_stop_id(stop_id)
    source = _regular(folder / STOPS / f"{stop_id}.json", f"the stop {stop_id}", folder)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
        run = data["run"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise RecordError(f"{source}: this stop file is damaged; nothing was answered") from None
    if not isinstance(run, str) or not _RUN_ID.match(run) or data.get("id") != stop_id:
        raise RecordError(f"{source}: this stop file names no run of its own; nothing was answered")
    log = _regular(folder / LOGS / f"{run}.jsonl", f"the log of run {run}", folder)
    text = log.read_text(encoding="utf-8")
    try:
        events = [json.loads(line) for line in text.splitlines() if line.strip()]
        raised = [e for e in events if e.get("event") == "stop" and e.get("stop") == stop_id]
        foreign = any(e.get("run") != run for e in events)
    except (ValueError, AttributeError):
        raise RecordError(f"{log}: this run log is damaged; nothing was answered") from None
    if not raised or foreign:
        raise RecordError(
            f"the log of run {run} in {folder} never raised {stop_id}; nothing was answered"
        )
    if any(e.get("event") == "decision" and e.get("stop") == stop_id for e in events):
        raise RecordError(
            f"stop {stop_id} was already answered in the log of run {run}; nothing was done again"
        )
    target = log_path(root, run)
    if target.exists() or (stops.stops_folder(root) / f"{stop_id}.json").exists():
        raise RecordError(
            f"the stop {stop_id} or the log of run {run} is already here; nothing was replaced",
            hint="answer it with sdd allow or sdd deny, or start from a fresh checkout",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    stops.stops_folder(root).mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, text)
    write_text_atomic(
        stops.stops_folder(root) / f"{stop_id}.json", source.read_text(encoding="utf-8")
    )
    return run


def _regular(path: Path, what: str, folder: Path) -> Path:
    if path.is_symlink() or not path.is_file():
        raise RecordError(
            f"{folder} does not hold {what} as sdd packs it; nothing was answered",
            hint="download the artifact of the run that stopped, and name one of its stops",
        )
    return path
