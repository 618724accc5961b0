"""A stopped CI run, carried from the job that stopped to the job that answers it.

A CI runner's disk is gone when its job ends, and with it the run's log: the one thing an
answer continues from (sdd_git.runner.run.answer). So the job that stopped packs, into a folder
the engine keeps (GitHub's artifact, GitLab's job artifacts), each pending stop file and the log
of its run, nothing else: the log holds no secret value (CONTRACT §5), nor does a stop file.

The answering job unpacks one stop, the one the reviewer named, and the log of that stop's run.
What it reads is a folder, so it is read as a stranger's: names of the shape sdd writes, regular
files only, the stop's run the run whose log is there, and a log that has not already decided
the stop (a job run again from the same folder must act on nothing).

A GitHub reviewer approves a job before it runs, so what she approves must be shown first: a
job with no secret and no approval reads the kept stop with this code (the main branch's sdd),
shows its action in that run's summary and passes on the files' digest; the job behind the
approval puts the stop back only if the files it downloads have that same digest.

    sdd routine pack-stops DIR            # the stopped job (exit 0; nothing pending: an error)
    sdd routine show-stop DIR STOP        # what the reviewer reads before she approves
    sdd routine unpack-stops DIR STOP [--digest D]   # before `sdd allow|deny STOP`
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Kept:
    """One stop as a kept folder holds it, checked: its run, the two files' texts, the action
    in words as the log's `stop` event says it (what an answer acts on), and a digest of both
    files, so the job that answers can prove it holds what the reviewer was shown."""

    stop: str
    run: str
    stop_text: str
    log_text: str
    action: str

    @property
    def digest(self) -> str:
        both = self.stop_text.encode() + b"\0" + self.log_text.encode()
        return hashlib.sha256(both).hexdigest()

    def words(self) -> str:
        """What the reviewer reads before she approves: the action, as sdd would answer it."""
        from sdd_git.runner.words import visible

        action = visible(self.action, keep_newlines=True)
        fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", action)), default=0) + 1)
        return (
            f"### Stop {self.stop} of run {self.run}\n\n"
            "Approving the answer job runs, or refuses, exactly this action:\n\n"
            f"{fence}text\n{action}\n{fence}\n"
        )


def read_kept(folder: Path, stop_id: str) -> Kept:
    """The stop `stop_id` and its run's log as `folder` holds them, read as a stranger's:
    refused unless both are regular files of the shape sdd writes, the log is that run's own,
    raised the stop, and holds no decision for it yet."""
    check_stop_id(stop_id)
    source = _regular(folder / STOPS / f"{stop_id}.json", f"the stop {stop_id}", folder)
    try:
        stop_text = source.read_text(encoding="utf-8")
        data = json.loads(stop_text)
        run = data["run"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise RecordError(f"{source}: this stop file is damaged; nothing was answered") from None
    if not isinstance(run, str) or not _RUN_ID.match(run) or data.get("id") != stop_id:
        raise RecordError(f"{source}: this stop file names no run of its own; nothing was answered")
    log = _regular(folder / LOGS / f"{run}.jsonl", f"the log of run {run}", folder)
    try:
        text = log.read_text(encoding="utf-8")
        events = [json.loads(line) for line in text.splitlines() if line.strip()]
        raised = [e for e in events if e.get("event") == "stop" and e.get("stop") == stop_id]
        foreign = any(e.get("run") != run for e in events)
    except (ValueError, AttributeError, UnicodeDecodeError):
        raise RecordError(f"{log}: this run log is damaged; nothing was answered") from None
    if not raised or foreign:
        raise RecordError(
            f"the log of run {run} in {folder} never raised {stop_id}; nothing was answered"
        )
    if any(e.get("event") == "decision" and e.get("stop") == stop_id for e in events):
        raise RecordError(
            f"stop {stop_id} was already answered in the log of run {run}; nothing was done again"
        )
    return Kept(stop_id, run, stop_text, text, str(raised[-1].get("action") or ""))


def unpack(root: Root, folder: Path, stop_id: str, digest: str | None = None) -> str:
    """Put the stop `stop_id` and its run's log from `folder` where `sdd allow` reads them;
    the run id. Refuses, and puts nothing, when the folder does not hold them as sdd wrote
    them, its log already holds a decision for the stop, or (`digest` given) they are not the
    files the reviewer was shown."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.runner import stops
    from sdd_git.runner.runlog import log_path

    kept = read_kept(folder, stop_id)
    if digest is not None and digest != kept.digest:
        raise RecordError(
            f"the stop {stop_id} downloaded now is not the one the reviewer was shown; "
            "nothing was answered",
            hint="run the workflow again: its first job shows the stop as it is kept",
        )
    target = log_path(root, kept.run)
    if target.exists() or (stops.stops_folder(root) / f"{stop_id}.json").exists():
        raise RecordError(
            f"the stop {stop_id} or the log of run {kept.run} is already here; nothing was "
            "replaced",
            hint="answer it with sdd allow or sdd deny, or start from a fresh checkout",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    stops.stops_folder(root).mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, kept.log_text)
    write_text_atomic(stops.stops_folder(root) / f"{stop_id}.json", kept.stop_text)
    return kept.run


def _regular(path: Path, what: str, folder: Path) -> Path:
    if path.is_symlink() or not path.is_file():
        raise RecordError(
            f"{folder} does not hold {what} as sdd packs it; nothing was answered",
            hint="download the artifact of the run that stopped, and name one of its stops",
        )
    return path
