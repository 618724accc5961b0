"""The run log, `.sdd/role-runs/<run-id>.jsonl`: one JSON event a line, and the run's checkpoint.
This module reads logs and says where a run's files are; `runner/logwriter.py` appends.

Every line has `ts`, `run`, `seq` and `event`, then the fields of its event: only the typed
events of `runner.logevents` are appended, and `logevents.parse` reads a line back into one.
Each append is flushed and fsync'd, so a run can be resumed from its log by another process. A
reader drops a torn last line (a crash mid-append), and the next append starts on a fresh line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdd_git import beneath, statefolders
from sdd_git.errors import RecordError
from sdd_git.root import Root

Event = dict[str, Any]
OnEvent = Callable[[Event], None]  # told each event as it lands: how the CLI shows a run live


def runs_folder(root: Root) -> Path:
    return root.sdd / "role-runs"


def new_run_id(now: float) -> str:
    import secrets  # lazily: a reader of logs (the runs index) never makes a run id

    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    return f"run-{stamp}-{secrets.token_hex(3)}"


def role_lock(root: Root, role: str) -> Path:
    """The lock a role's run holds from before its log opens until after it ends."""
    return root.local / "locks" / f"role-{role}.lock"


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
