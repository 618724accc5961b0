"""Past runs, read from `.sdd/role-runs/`: `sdd role runs` and `sdd role log`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sdd_git.recordjson import record_json
from sdd_git.root import Root


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


def log_end(events: list[dict[str, Any]]) -> tuple[str | None, str | None, Any]:
    """What a log alone says of how its run ended: the status and stop of its last
    `run_ended` (None, None when it is still open), and, when open, the `process` its last
    start or resumption named (what `open_status` asks about)."""
    ended = [e for e in events if e.get("event") in ("run_ended", "run_resumed", "run_started")]
    last = ended[-1] if ended else {}
    if last.get("event") == "run_ended":
        waiting = last.get("waiting_for")
        return str(last.get("status")), str(waiting) if waiting else None, None
    return None, None, last.get("process")


ENDED_UNEXPECTEDLY = "ended-unexpectedly"
# As a table shows them: a routine's run that could not start (routines/notrun.py) too.
STATUS_WORDS = {ENDED_UNEXPECTEDLY: "ended unexpectedly", "could-not-run": "could not run"}
# Every status a run can show: those its log's `run_ended` says (runner, routines), and those
# read at the time of asking (`running`, `ended-unexpectedly`, `answered`).
STATUSES = (
    "done", "stopped", "answered", "running", ENDED_UNEXPECTEDLY, "stopped-now", "failed",
    "interrupted", "expired", "no-spec", "no-draft", "could-not-run", "missing",
)  # fmt: skip


def status_of(root: Root, events: list[dict[str, Any]]) -> tuple[str, str | None]:
    """A run's status from its log, and the stop it waits for. A log that never ended is
    `running` only while the process that wrote it last is alive: one killed (SIGKILL, a
    crash, a closed laptop's lost session) never wrote `run_ended`, and would otherwise show
    `running` forever."""
    status, waiting, process = log_end(events)
    if status is not None:
        return status, waiting
    from sdd_git.runner.runlog import first

    roles = (first(events, "run_started") or {}).get("roles") or [""]
    return open_status(root, process, str(roles[0])), None


def open_status(root: Root, process: Any, first_role: str) -> str:
    """`running` or `ended-unexpectedly`: whether the process that last wrote an open log is
    still alive."""
    return ENDED_UNEXPECTEDLY if _died(root, process, first_role) else "running"


def _died(root: Root, process: Any, first_role: str) -> bool:
    from sdd_git import lockfile

    if isinstance(process, dict):
        return lockfile.gone(process)
    # A log from before sdd named the process: the role's lock (taken before the log is
    # opened, released after it ends) is gone, or its holder is.
    from sdd_git.runner.runlog import role_lock

    lock = role_lock(root, first_role)
    if not lock.exists():
        return True
    return lockfile.describe_holder(lock)[1]
