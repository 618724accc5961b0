"""Past runs, read from `.sdd/role-runs/`: `sdd role runs` and `sdd role log`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.recordjson import record_json
from sdd_git.root import Root
from sdd_git.runner.runlog import first, read_events, runs_folder


@dataclass(frozen=True)
class Usage:
    """What a run's provider calls used, summed over its `reply` events (across resumes).

    `input_tokens` counts every prompt token, read from the cache or not: OpenAI's
    `prompt_tokens` already holds its cached ones; Anthropic's `input_tokens` leaves out what it
    read from and wrote to its cache, so those are added back."""

    calls: int = 0  # replies that reported usage
    input_tokens: int = 0
    cached_input_tokens: int = 0  # read from the provider's prompt cache
    cache_write_input_tokens: int = 0  # written to it (Anthropic bills these at 1.25x)
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_input_tokens + other.cache_write_input_tokens,
            self.output_tokens + other.output_tokens,
        )

    def as_json(self) -> dict[str, Any]:
        return record_json(self)

    def words(self) -> str:
        cache = ""
        if self.cached_input_tokens or self.cache_write_input_tokens:
            cache = (
                f" ({self.cached_input_tokens:,} read from the provider's cache, "
                f"{self.cache_write_input_tokens:,} written to it)"
            )
        return (
            f"usage: {self.calls} provider call(s), {self.input_tokens:,} input tokens{cache}, "
            f"{self.output_tokens:,} output tokens"
        )


def reply_usage(usage: Any) -> Usage:
    """One reply's usage as the provider reported it, in either wire's names. A log written
    before sdd added `cached_input_tokens` is read from the provider's own keys."""
    if not isinstance(usage, dict) or not usage:
        return Usage()
    if "prompt_tokens" in usage:  # the OpenAI-compatible shape
        details = usage.get("prompt_tokens_details")
        details = details if isinstance(details, dict) else {}
        cached = _whole(usage.get("cached_input_tokens", details.get("cached_tokens")))
        written = _whole(usage.get("cache_write_input_tokens"))
        return Usage(
            1,
            _whole(usage.get("prompt_tokens")),
            cached,
            written,
            _whole(usage.get("completion_tokens")),
        )
    cached = _whole(usage.get("cached_input_tokens", usage.get("cache_read_input_tokens")))
    written = _whole(
        usage.get("cache_write_input_tokens", usage.get("cache_creation_input_tokens"))
    )
    return Usage(
        1,
        _whole(usage.get("input_tokens")) + cached + written,
        cached,
        written,
        _whole(usage.get("output_tokens")),
    )


def run_usage(events: list[dict[str, Any]]) -> Usage:
    total = Usage()
    for event in events:
        if event.get("event") == "reply":
            total += reply_usage(event.get("usage"))
    return total


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class RunSummary:
    run: str
    roles: tuple[str, ...]
    # running, stopped (waiting for the person), done, no-spec, expired, ended-unexpectedly, ...
    status: str
    started: str
    task: str
    waiting_for: str | None
    usage: Usage = Usage()  # summed from the log's replies

    def as_json(self) -> dict[str, Any]:
        return record_json(self)


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
        started = first(events, "run_started")
        if started is None:
            continue
        roles = tuple(started.get("roles") or ())
        if role is not None and role not in roles:
            continue
        status, waiting = status_of(root, events)
        if waiting and waiting not in waiting_ids:
            status, waiting = "answered", None  # e.g. a reading the person has accepted
        found.append(
            RunSummary(
                path.stem,
                roles,
                status,
                str(started.get("ts")),
                str(started.get("task")),
                waiting,
                run_usage(events),
            )
        )
    return sorted(found, key=lambda s: s.run, reverse=True)


ENDED_UNEXPECTEDLY = "ended-unexpectedly"
# As a table shows them: a routine's run that could not start (routines/notrun.py) too.
STATUS_WORDS = {ENDED_UNEXPECTEDLY: "ended unexpectedly", "could-not-run": "could not run"}


def status_of(root: Root, events: list[dict[str, Any]]) -> tuple[str, str | None]:
    """A run's status from its log, and the stop it waits for. A log that never ended is
    `running` only while the process that wrote it last is alive: one killed (SIGKILL, a
    crash, a closed laptop's lost session) never wrote `run_ended`, and would otherwise show
    `running` forever."""
    ended = [e for e in events if e.get("event") in ("run_ended", "run_resumed", "run_started")]
    last = ended[-1] if ended else {}
    if last.get("event") == "run_ended":
        waiting = last.get("waiting_for")
        return str(last.get("status")), str(waiting) if waiting else None
    return (ENDED_UNEXPECTEDLY if _died(root, events, last) else "running"), None


def _died(root: Root, events: list[dict[str, Any]], last: dict[str, Any]) -> bool:
    from sdd_git import lockfile

    process = last.get("process")
    if isinstance(process, dict):
        return lockfile.gone(process)
    # A log from before sdd named the process: the role's lock (taken before the log is
    # opened, released after it ends) is gone, or its holder is.
    from sdd_git.runner.state import role_lock

    roles = (first(events, "run_started") or {}).get("roles") or [""]
    lock = role_lock(root, str(roles[0]))
    if not lock.exists():
        return True
    return lockfile.describe_holder(lock)[1]
