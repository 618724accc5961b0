"""The run log, `.sdd/role-runs/<run-id>.jsonl`: one JSON event a line, and the run's checkpoint.

Every line has `ts`, `run`, `seq` and `event`, then the fields of its event: only the typed
events of `runner.logevents` are appended, and `logevents.parse` reads a line back into one.
Each append is flushed and fsync'd, so a run can be resumed from its log by another process. A
reader drops a torn last line (a crash mid-append), and the next append starts on a fresh line.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import beneath, statefolders
from sdd_git.errors import RecordError
from sdd_git.root import Root
from sdd_git.runner.logevents import LogEvent, RunEnded

Event = dict[str, Any]
OnEvent = Callable[[Event], None]  # told each event as it lands: how the CLI shows a run live


def runs_folder(root: Root) -> Path:
    return root.sdd / "role-runs"


def new_run_id(now: float) -> str:
    import secrets  # lazily: a reader of logs (the runs index) never makes a run id

    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    return f"run-{stamp}-{secrets.token_hex(3)}"


def log_path(root: Root, run_id: str) -> Path:
    if not run_id.replace("-", "").isalnum():
        raise RecordError(f"'{run_id}' is not a run id", hint="`sdd role runs` lists the runs")
    return runs_folder(root) / f"{run_id}.jsonl"


def read_events(path: Path) -> list[Event]:
    """Every whole event of a log; a torn or garbled last line is dropped.

    The log is read beneath its product (a log is `ROOT/.sdd/role-runs/ID.jsonl`), with no
    link followed, from a folder that is hers alone."""
    statefolders.check(path)
    try:
        raw = beneath.read_bytes(path.parents[2], path)
    except (FileNotFoundError, NotADirectoryError):
        raise RecordError(
            f"no run log {path.name}", hint="`sdd role runs` lists the runs of this product"
        ) from None
    events: list[Event] = []
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
            int(event.get("seq", 0))
        except (ValueError, TypeError, AttributeError):
            if number >= len(lines) - 1:
                break  # the torn tail of a crash mid-append
            raise RecordError(f"{path}:{number}: this line of the run log is not JSON") from None
        if isinstance(event, dict):
            events.append(event)
    return events


def first(events: list[Event], kind: str) -> Event | None:
    """The first event of this kind in a log (its `run_started`, its `route`), if any."""
    return next((e for e in events if e.get("event") == kind), None)


@dataclass
class RunLog:
    """An open run log that appends events; `mask` hides secrets in every line before it lands."""

    path: Path
    run_id: str
    mask: Callable[[str], str]
    clock: Callable[[], float]
    seq: int = 0
    # Called with each event once it is on disk: how the CLI shows a run as it happens (core
    # code never prints). A screen that went away (a closed pipe) must not end the run.
    listener: OnEvent | None = None
    ended: bool = False  # the last event appended is `run_ended`

    @classmethod
    def open(
        cls, root: Root, run_id: str, mask: Callable[[str], str], clock: Callable[[], float]
    ) -> RunLog:
        path = log_path(root, run_id)
        statefolders.make_folder(path.parent)
        seq = 0
        if os.path.lexists(path):
            events = read_events(path)
            seq = max((int(e.get("seq", 0)) for e in events), default=0)  # checked on read
            _drop_torn_tail(path)
            ended = bool(events) and events[-1].get("event") == "run_ended"
            return cls(path, run_id, mask, clock, seq, ended=ended)
        return cls(path, run_id, mask, clock, seq)

    def append(self, event: LogEvent) -> Event:
        self.seq += 1
        record: Event = {
            "ts": _iso(self.clock()),
            "run": self.run_id,
            "seq": self.seq,
            "event": event.kind,
            **event.fields(),
        }
        line = self.mask(json.dumps(record, ensure_ascii=False, default=str)) + "\n"
        # A model may send a lone surrogate (valid JSON, not valid UTF-8): it becomes U+FFFD
        # rather than a crash or a log no reader can open.
        statefolders.append(self.path, line.encode("utf-8", "replace"))
        self.ended = isinstance(event, RunEnded)
        if self.ended:
            from sdd_git.runner.runindex import note

            note(self.path)  # `sdd role runs` then finds it indexed
        if self.listener is not None:
            with contextlib.suppress(OSError):
                self.listener(json.loads(line))  # masked, as it landed
        return record

    def events(self) -> list[Event]:
        return read_events(self.path)


def _drop_torn_tail(path: Path) -> None:
    """After a crash mid-append, cut the half-written last line, so the next event starts on a
    line of its own and every line of the log stays whole JSON."""
    with open(os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC), "rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return
        handle.truncate(data.rfind(b"\n") + 1)
        handle.flush()
        os.fsync(handle.fileno())


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
