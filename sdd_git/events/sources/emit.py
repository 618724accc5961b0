"""What every source of the watcher writes through: an event only when an unpaused routine
listens for it, each one said on the watcher's output, and problems said in the same words."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from sdd_git.events.queue import write_event
from sdd_git.root import Root
from sdd_git.routines.routine import Routine, listens
from sdd_git.routines.triggers import Event

Say = Callable[[str], None]


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def stamp() -> str:
    return time.strftime("%H:%M:%S")


@dataclass
class Emitter:
    root: Root
    say: Say
    active: Callable[[], list[Routine]]  # the unpaused routines, as the watcher last read them
    events_written: int = 0

    def problem(self, message: str, hint: str | None, severity: str = "error") -> None:
        self.say(f"{severity}: {message}")
        if hint:
            self.say(f"hint: {hint}")

    def listened(self, kind: str, ref: str, branch: str | None) -> bool:
        probe = Event(id="", kind=kind, ref=ref, at="", source="watcher", branch=branch)
        return any(listens(r, probe) for r in self.active())

    def write(
        self, kind: str, ref: str, branch: str | None, extra: dict[str, object] | None = None
    ) -> int:
        """Write the event if a routine listens; 1 when written, else 0."""
        if not self.listened(kind, ref, branch):
            return 0
        event = write_event(self.root, kind, ref, "watcher", branch=branch, extra=extra)
        self.events_written += 1
        self.say(f"{stamp()} event {kind} {ref} ({event.id})")
        return 1
