"""The connector plug point: one Protocol, one operation record, one error family.

A connector reads and acts on one of the team's tools (GitHub, Jira, Slack...). What each
operation *is* (a read inside the boundary, an act as the person that stops, or forbidden by any
route) is data in `operations.py`, decided before the connector is called: a connector never
decides its own class. A foreign error (an HTTP status, a library's exception) is mapped to one of
the errors below at the connector's edge, so the runner sees one family.

What a connector keeps open between calls (an MCP server's session) lives as long as one run:
the runner opens `run_lifetime()` where a run begins and everything kept in it is closed where the
run ends, however it ends. Outside one (a person command), a connector keeps nothing past a call."""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from sdd_git.errors import SddError

READ, ACT, DRAFT, FORBIDDEN = "read", "act", "draft", "forbidden"
KINDS = (READ, ACT, DRAFT, FORBIDDEN)  # draft: kept for the person to send (Slack, Teams)


@dataclass(frozen=True)
class Operation:
    """One operation of one connector, as the table classifies it."""

    name: str  # as the service names it: get_issue, merge_pull_request, post_message
    kind: str  # one of KINDS
    words: str  # the action in plain words, with {arg} fields: "merge pull request #{number}"
    args: tuple[str, ...] = ()  # required arguments
    optional: tuple[str, ...] = ()
    why: str = ""  # for a forbidden operation: whose it is ("a release is the person's")
    record: str = ""  # what a read returns, for "missing: <source>" ("issue {repo}#{number}")


@dataclass(frozen=True)
class Session:
    """What a connector is given for one call: where the service is and the person's token.
    The token is never logged, shown or passed on; `masked` hides it (and any other secret)
    in text that leaves the connector."""

    name: str  # the connector's configured name
    base_url: str
    token: str | None
    settings: Mapping[str, Any] = field(default_factory=dict)  # the rest of its config
    masked: Callable[[str], str] = str


@dataclass(frozen=True)
class Result:
    """What a call returns: text the role reads, and data for the log or a draft."""

    text: str
    data: Mapping[str, Any] = field(default_factory=dict)


class ConnectorError(SddError):
    """Anything a connector could not do, in words; never a made-up value."""


class Missing(ConnectorError):
    """The record is not there (404, an empty result, no permission to see it): reported as
    `missing: <source>`, never replaced by a guess or by stale data."""

    def __init__(self, source: str, why: str = "") -> None:
        self.source = source
        self.why = why
        super().__init__(f"missing: {source}" + (f" ({why})" if why else ""))


class NotSignedIn(ConnectorError):
    """No token for a connector that needs one, or the service refused it (401)."""


class Unavailable(ConnectorError):
    """The service did not answer usefully: refused connection, timeout, 5xx, a bad body."""


class Refused(ConnectorError):
    """The service refused the request as made (400, 409, 422): its reason, masked."""


class Connector(Protocol):
    """A tool the team uses. `operations` are the ones it implements; `call` runs one that the
    table allows (the dispatch has already classified it, and stopped for an act)."""

    name: str
    needs_token: bool

    def operations(self) -> Mapping[str, Operation]: ...

    def call(self, session: Session, operation: str, args: Mapping[str, Any]) -> Result: ...


# -- what a connector keeps for one run ------------------------------------------------------


class Kept(Protocol):
    """Something a connector keeps open for the rest of a run (an MCP server's session)."""

    def close(self) -> None:
        """End it and everything it started; never raises, and a second close does nothing."""
        ...


K = TypeVar("K", bound=Kept)


class RunKeep:
    """What connectors keep open for one run, by a key of their choosing; closed together."""

    def __init__(self) -> None:
        self._kept: dict[str, Kept] = {}
        self._lock = threading.Lock()
        self._closed = False

    def get(self, key: str, make: Callable[[], K]) -> K:
        """The thing kept under `key` in this run, made by `make()` the first time."""
        with self._lock:
            if self._closed:  # an interpreter-exit close beat a late caller: keep nothing
                raise RuntimeError("the run's connectors are closed")
            found = self._kept.get(key)
            if found is None:
                found = self._kept[key] = make()
            return found  # type: ignore[return-value]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            kept, self._kept = list(self._kept.values()), {}
        for thing in reversed(kept):
            try:
                thing.close()
            except Exception:  # each closes what it started: one failing stops none
                continue


_RUN: ContextVar[RunKeep | None] = ContextVar("sdd_connectors_run", default=None)
_OPEN: set[RunKeep] = set()  # every run's keep still open: closed at interpreter exit
_OPEN_LOCK = threading.Lock()
_atexit_set = False


def current_run() -> RunKeep | None:
    """The keep of the run this call belongs to, or None outside a run (nothing is kept)."""
    return _RUN.get()


@contextmanager
def run_lifetime() -> Iterator[RunKeep]:
    """One run's lifetime for what connectors keep: everything kept inside the block is closed
    when it ends, normally, by an exception, by a stop or by Ctrl-C; and at interpreter exit as
    a last resort (a thread that never reached its `finally`). A context variable, not a global:
    two runs in two threads of one process (her page) each keep their own."""
    global _atexit_set
    keep = RunKeep()
    with _OPEN_LOCK:
        if not _atexit_set:
            atexit.register(_close_all)
            _atexit_set = True
        _OPEN.add(keep)
    token = _RUN.set(keep)
    try:
        yield keep
    finally:
        _RUN.reset(token)
        try:
            keep.close()
        finally:
            with _OPEN_LOCK:
                _OPEN.discard(keep)


def _close_all() -> None:
    with _OPEN_LOCK:
        left = list(_OPEN)
        _OPEN.clear()
    for keep in left:
        keep.close()
