"""The connector plug point: one Protocol, one operation record, one error family.

A connector reads and acts on one of the team's tools (GitHub, Jira, Slack...). What each
operation *is* (a read inside the boundary, an act as the person that stops, or forbidden by any
route) is data in `operations.py`, decided before the connector is called: a connector never
decides its own class. A foreign error (an HTTP status, a library's exception) is mapped to one of
the errors below at the connector's edge, so the runner sees one family."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

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
