"""What the code-host, CI and artifact connectors (GitHub, GitLab, Jenkins, Artifactory, Azure
DevOps) share: the connector and its call, arguments checked and made into path segments, the
table's record for a `missing:` answer, and pages followed to a cap (a build log is cut to what
a role needs in buildlog). Every built-in connector, a tracker's too, keys its handlers with
`by_operation`.

An argument becomes exactly one path segment, percent-encoded with nothing left safe: `/`, `?`,
`#` and `%` cannot reach another endpoint, and `.`, `..`, control characters and text that is
already percent-encoded (`%2e%2e`) are refused outright, so no server's second decoding can turn
a value into a path step either."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from urllib.parse import quote

from sdd_git.connectors.base import (
    FORBIDDEN,
    READ,
    ConnectorError,
    Missing,
    NotSignedIn,
    Operation,
    Refused,
    Session,
)
from sdd_git.connectors.http import Answer, request
from sdd_git.connectors.operations import TABLE, forbidden_reason

if TYPE_CHECKING:
    from sdd_git.connectors.base import Result

MAX_PAGES = 10  # pages followed at most for one read
MAX_ITEMS = 100  # items one list read shows at most
BODY_CHARS = 4000  # an issue's or a description's text, at most

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def operation_of(connector: str, operation: str) -> Operation:
    found = TABLE[connector].get(operation)
    if found is None:
        raise ConnectorError(
            f"{connector} has no operation '{operation}'",
            hint="operations: " + ", ".join(TABLE[connector]),
        )
    return found


Handler = TypeVar("Handler", bound="Callable[..., Result]")


def by_operation(*handlers: Handler, **named: Handler) -> Mapping[str, Handler]:
    """Handlers by the operation each is named for (`_get_issue` for `get_issue`), and any
    shared one by the operation given."""
    return MappingProxyType(
        {handler.__name__.removeprefix("_"): handler for handler in handlers} | named
    )


class ServiceCall:
    """One call of a service connector: its session, the operation and the role's arguments,
    and `within`, what every record of the call is named with (`{"repo": "acme/app"}`), so
    that `source` names the record a read is of."""

    connector: ClassVar[str]  # its row of the operation table

    def __init__(self, session: Session, operation: str, args: Mapping[str, Any]) -> None:
        self.session = session
        self.operation = operation
        self.args = args
        self.within: dict[str, Any] = {}

    def within_arg(self, name: str, *, configured: bool = True) -> str:
        """The argument every record of the call is named with (`repo`, `project`, `job`): the
        role's, or else (when it may be `configured`) the connector's setting of that name."""
        default = self.session.settings.get(name) if configured else None
        value = text(self.args, name, self.operation, default=default)
        self.within = {name: value}
        return value

    def number(self, name: str) -> int:
        return positive_int(self.args, name, self.operation)

    def source(self, **values: Any) -> str:
        return record(self.connector, self.operation, {**self.within, **values})


class ServiceConnector:
    """A built-in service connector: its row of the operation table, and one handler per
    operation, each given the call as `call_class` checks and signs it. A change that is the
    person's is refused here too, whoever called."""

    name: str
    needs_token = True
    handlers: ClassVar[Mapping[str, Callable[[Any], Result]]]
    call_class: ClassVar[type[ServiceCall]]

    def operations(self) -> Mapping[str, Operation]:
        return TABLE[self.name]

    def call(self, session: Session, operation: str, args: Mapping[str, Any]) -> Result:
        refuse_forbidden(self.name, operation, args)
        handler = self.handlers.get(operation)
        if handler is None:
            raise ConnectorError(
                f"{self.name} has no operation '{operation}'",
                hint="operations: " + ", ".join(TABLE[self.name]),
            )
        return handler(self.call_class(session, operation, args))


def refuse_forbidden(connector: str, operation: str, args: Mapping[str, Any]) -> None:
    """Never send a change that is the person's by any route, even if a caller skipped the
    dispatch (which classified the call already). A read changes nothing: it is not checked
    again here."""
    found = TABLE[connector].get(operation)
    if found is not None and found.kind == READ:
        return
    reason = found.why if found is not None and found.kind == FORBIDDEN else None
    reason = reason or forbidden_reason(operation, args)
    if reason:
        raise Refused(f"{connector}: {operation} was not sent: {reason}")


def record(connector: str, operation: str, values: Mapping[str, Any]) -> str:
    """The table's name of what a read returns ("issue acme/app#7"), for `missing:`."""
    found = operation_of(connector, operation)
    try:
        return found.record.format_map(dict(values)) or f"{connector} {operation}"
    except (KeyError, IndexError, ValueError):
        return f"{connector} {operation}"


def token_of(session: Session) -> str:
    if not session.token:
        raise NotSignedIn(
            f"{session.name} is not signed in", hint=f"sign in: sdd connect {session.name}"
        )
    return session.token


def bearer(session: Session) -> dict[str, str]:
    """The sign-in header of a token sent as a bearer (NotSignedIn without one)."""
    return {"Authorization": f"Bearer {token_of(session)}"}


def basic_auth(user: str, token: str) -> dict[str, str]:
    """The sign-in header of HTTP Basic `user:token` (Azure DevOps sends an empty user)."""
    pair = f"{user}:{token}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


def bearer_call(
    session: Session,
    method: str,
    path: str,
    source: str,
    *,
    query: Mapping[str, Any] | None = None,
    body: Any = None,
    sign: Callable[[Session], Mapping[str, str]] = bearer,
) -> Answer:
    """A request signed by `sign` (the session's token as a bearer unless a service signs
    otherwise); a GET's 403 is `Missing` (the service hides what one may not see)."""
    return request(
        session, method, path, source=source, query=query, body=body,
        headers=sign(session), missing_on_403=method == "GET",
    )  # fmt: skip


# -- arguments ---------------------------------------------------------------------------------


def text(args: Mapping[str, Any], name: str, operation: str, *, default: Any = None) -> str:
    value = args.get(name, default)
    if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConnectorError(f"{operation} needs '{name}' (a text)")
    said = str(value).strip()
    if not said:
        raise ConnectorError(f"{operation} needs '{name}', not an empty text")
    return said


def optional_text(
    args: Mapping[str, Any],
    name: str,
    operation: str,
    pattern: re.Pattern[str] | None = None,
    what: str = "",
) -> str | None:
    """A text argument a role may leave out; given, of `pattern`'s shape (`what` names it)."""
    if args.get(name) is None:
        return None
    value = text(args, name, operation)
    if pattern is not None and not pattern.fullmatch(value):
        raise ConnectorError(f"{operation}: {value!r} is not {what}")
    return value


def positive_int(args: Mapping[str, Any], name: str, operation: str) -> int:
    """A number such as an issue's or a build's: a positive integer, as a number or digits."""
    value = args.get(name)
    if isinstance(value, bool):
        value = None
    if isinstance(value, str) and re.fullmatch(r"\s*[0-9]{1,18}\s*", value):
        value = int(value)
    if not isinstance(value, int) or value < 1 or value >= 2**63:
        raise ConnectorError(
            f"{operation} needs '{name}' as a positive whole number, not {value!r}"
        )
    return value


def one_of(
    args: Mapping[str, Any], name: str, operation: str, allowed: tuple[str, ...]
) -> str | None:
    value = optional_text(args, name, operation)
    if value is not None and value not in allowed:
        raise ConnectorError(f"{operation}: '{name}' is one of {', '.join(allowed)}, not {value!r}")
    return value


def segment(value: str, what: str, pattern: re.Pattern[str] | None = None) -> str:
    """`value` as one percent-encoded path segment, or an error naming what it should be."""
    if (
        not value
        or value in (".", "..")
        or _CONTROL.search(value)
        or "%" in value
        or (pattern is not None and not pattern.fullmatch(value))
    ):
        raise ConnectorError(f"{value!r} is not {what}")
    return quote(value, safe="")


def segments(value: str, what: str, pattern: re.Pattern[str] | None = None) -> list[str]:
    """A path of several segments (`folder/job`, `org/acme/lib.jar`), each one checked and
    encoded: no empty step, no `.` or `..`, no backslash."""
    parts = value.strip("/").split("/")
    if not value.strip("/") or "\\" in value:
        raise ConnectorError(f"{value!r} is not {what}")
    return [segment(part, what, pattern) for part in parts]


# -- pages -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    items: list[Any]
    more: bool  # the service holds more than was read


def follow_pages(
    session: Session,
    path: str,
    *,
    source: str,
    headers: Mapping[str, str],
    query: Mapping[str, Any] | None,
    items_of: Callable[[Any], list[Any]],
    next_of: Callable[[Answer], tuple[str, Mapping[str, Any] | None] | None] | None = None,
    max_items: int = MAX_ITEMS,
    max_pages: int = MAX_PAGES,
) -> Listed:
    """Every page of a list, up to `max_items` or `max_pages`. The next page is the Link
    header's `rel="next"` (GitHub, GitLab), or what `next_of` says (a continuation token)."""
    found: list[Any] = []
    answer = request(session, "GET", path, source=source, query=query, headers=headers)
    for page in range(1, max_pages + 1):
        found.extend(items_of(answer.json()))
        if next_of is not None:
            following = next_of(answer)
        else:
            link = answer.next_link()
            following = (link, None) if link else None
        if following is None:
            return Listed(found[:max_items], len(found) > max_items)
        if len(found) >= max_items or page == max_pages:
            return Listed(found[:max_items], True)
        next_path, next_query = following
        answer = request(
            session, "GET", next_path, source=source, query=next_query, headers=headers
        )
    return Listed(found[:max_items], True)  # pragma: no cover - the loop returns


def listing(items: list[str], more: bool, empty: str) -> str:
    if not items:
        return empty
    return "\n".join(items) + ("\n(more exist: only these were read)" if more else "")


def newest_first(what: str, query: Mapping[str, Any], lines: list[str], more: bool) -> str:
    """A list read with filters (runs, pipelines): what it lists, by which filters, how many,
    then one line each."""
    filters = ", ".join(f"{k} {v}" for k, v in query.items()) or "all"
    head = f"{what} ({filters}), newest first: {len(lines)}{'+' if more else ''}"
    return f"{head}\n{listing(lines, more, 'none: the list is empty')}"


# -- shapes --------------------------------------------------------------------------------------


def record_of(
    value: Any, session: Session, source: str, what: str, *keys: str
) -> Mapping[str, Any]:
    """The answer as the record asked for: an object holding at least one of `keys` (fields
    every such record has). Anything else (a list, `null`, an error said with a 200, an empty
    object) is missing, never read as a record with nothing in it: no "issue #7: None", no
    build "not finished" because the answer said nothing, no report of 0 failed."""
    if isinstance(value, Mapping) and any(value.get(key) is not None for key in keys):
        return value
    raise Missing(f"{source} on {session.name}", f"the answer held no {what}")


def mapping(value: Any) -> Mapping[str, Any]:
    """A JSON object as a mapping; anything else as an empty one (a service's odd answer is
    then said as unknown, never guessed)."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# -- text ----------------------------------------------------------------------------------------


def shorten(value: str, limit: int = BODY_CHARS) -> str:
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n[... {len(value) - limit:,} more characters not shown]"


def said(value: Any, empty: str = "none") -> str:
    """A value as the service gave it; nothing (None, "", []) is said as `empty`."""
    if value is None or value == "" or value == []:
        return empty
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def short_sha(value: Any) -> str:
    return str(value)[:10] if value else "unknown"
