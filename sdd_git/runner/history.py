"""Past runs, read from `.sdd/role-runs/`: `sdd role runs` and `sdd role log`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.root import Root
from sdd_git.runner.runlog import read_events, runs_folder


@dataclass(frozen=True)
class RunSummary:
    run: str
    roles: tuple[str, ...]
    status: str  # running, stopped (waiting for the person), done, no-spec, expired, ...
    started: str
    task: str
    waiting_for: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "roles": list(self.roles),
            "status": self.status,
            "started": self.started,
            "task": self.task,
            "waiting_for": self.waiting_for,
        }


def runs(root: Root, role: str | None = None) -> list[RunSummary]:
    folder = runs_folder(root)
    if not folder.is_dir():
        return []
    from sdd_git.runner.stops import pending

    waiting_ids = {stop.id for stop in pending(root)}
    found = []
    for path in folder.glob("run-*.jsonl"):
        try:
            events = read_events(path)
        except RecordError:
            continue
        started = next((e for e in events if e.get("event") == "run_started"), None)
        if started is None:
            continue
        roles = tuple(started.get("roles") or ())
        if role is not None and role not in roles:
            continue
        ended = [e for e in events if e.get("event") in ("run_ended", "run_resumed")]
        status, waiting = "running", None
        if ended and ended[-1].get("event") == "run_ended":
            status = str(ended[-1].get("status"))
            waiting = ended[-1].get("waiting_for")
            if waiting and waiting not in waiting_ids:
                status, waiting = "answered", None  # e.g. a reading the person has accepted
        found.append(
            RunSummary(
                path.stem, roles, status, str(started.get("ts")), str(started.get("task")), waiting
            )
        )
    return sorted(found, key=lambda s: s.run, reverse=True)
