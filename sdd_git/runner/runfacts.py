"""What the runs index keeps of one run log (runner/runindex.py): its run's start, how it
ended, its usage by role and day, and the words `--search` reads."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.runner.history import Usage, log_end, reply_usage


@dataclass(frozen=True)
class LogFacts:
    """What the index keeps of one log."""

    started: str
    roles: tuple[str, ...]
    task: str
    change: str | None
    status: str | None
    waiting: str | None
    process: Any
    usage: Usage
    by_role_day: dict[tuple[str, str], Usage]
    text: str


def read_facts(path: Path) -> LogFacts | None:
    """A log read as `sdd role runs` reads it; None when it holds no run (no `run_started`, or a
    garbled line before its last: as history has always left such a log out)."""
    from sdd_git.runner.runlog import first, read_events

    try:
        events = read_events(path)
    except (RecordError, OSError):
        return None
    started = first(events, "run_started")
    if started is None:
        return None
    roles = tuple(str(r) for r in started.get("roles") or ())
    status, waiting, process = log_end(events)
    total, by_role_day = Usage(), dict[tuple[str, str], Usage]()
    pieces: list[str] = [str(started.get("task") or "")]
    for event in events:
        kind = event.get("event")
        if kind == "reply":
            spent = reply_usage(event.get("usage"))
            if spent.calls:
                key = (str(event.get("role") or (roles[0] if roles else "")), _day(event))
                by_role_day[key] = by_role_day.get(key, Usage()) + spent
                total += spent
        pieces.extend(_searchable(event))
    change = started.get("change")
    return LogFacts(
        str(started.get("ts")),
        roles,
        str(started.get("task")),
        change if isinstance(change, str) else None,
        status,
        waiting,
        process,
        total,
        by_role_day,
        "\n".join(p for p in pieces if p),
    )


def _day(event: dict[str, Any]) -> str:
    stamp = str(event.get("ts") or "")
    return stamp[:10] if re.fullmatch(r"\d{4}-\d\d-\d\d", stamp[:10]) else "unknown"


def _searchable(event: dict[str, Any]) -> list[str]:
    """The words of an event that `--search` reads: what she and the roles said (not the
    role's standing prompt), each tool call's arguments, stops, rejections and errors."""
    kind = event.get("event")
    if kind == "message":
        return _strings(event.get("content")) if event.get("role") != "system" else []
    if kind == "reply":
        message = event.get("message")
        return _strings(message.get("content")) if isinstance(message, dict) else []
    fields = _SEARCHED.get(str(kind), ())
    return [text for name in fields for text in _strings(event.get(name))]


_SEARCHED = {
    "say": ("text",),
    "tool_call": ("tool", "args"),
    "stop": ("action",),
    "rejected": ("tool", "reason", "message"),
    "draft": ("text",),
    "revision": ("text",),
    "critique": ("gaps",),
    "error": ("message",),
    "warning": ("message",),
    "handoff": ("to", "message"),
    "artifact": ("ref", "summary"),
}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
