"""Appending to a run log: each event masked, flushed and fsync'd, so another process can resume
the run from it (`runner/runlog.py` reads logs). A run that ends is noted in the runs index, so
`sdd role runs` finds it there."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sdd_git import statefolders
from sdd_git.root import Root
from sdd_git.runner.logevents import LogEvent, RunEnded
from sdd_git.runner.runlog import Event, OnEvent, log_path, read_events


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
        # An append changes the file, not its folder: the folder's time is what tells the runs
        # index, in one stat, that some log changed since it last looked (runner/runindex.py).
        with contextlib.suppress(OSError):
            os.utime(self.path.parent)
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
