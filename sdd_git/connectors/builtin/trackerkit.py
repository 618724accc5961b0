"""What the tracker and chat connectors (Jira, Aha!, Asana, Slack, Teams) share: an argument made
safe to be one segment of a path, the required arguments of an operation, the last word on a
field or status that would make a tracker hold a change's progress, and HTML read as plain text.

A value from a role becomes exactly one path segment: percent-encoded with nothing left safe, so
`/`, `?` and `#` cannot make it another endpoint, and `.` / `..` (which a URL resolver would
fold into the path) and text already percent-encoded (which a second decoding could turn into
one) are refused. Each connector also checks the value's shape (an issue key, a gid) first."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from html.parser import HTMLParser
from typing import Any, ClassVar

from sdd_git.connectors.base import ConnectorError, Operation, Refused, Result, Session
from sdd_git.connectors.builtin import hostkit
from sdd_git.connectors.operations import TABLE, forbidden_reason

Handler = Callable[[Session, Mapping[str, Any]], Result]


class TrackerConnector:
    """A tracker or chat connector: its row of the operation table, and one handler per
    operation, each given the session and the role's arguments."""

    name: str
    needs_token = True
    handlers: ClassVar[Mapping[str, Handler]]

    def operations(self) -> Mapping[str, Operation]:
        return TABLE[self.name]

    def call(self, session: Session, operation: str, args: Mapping[str, Any]) -> Result:
        handler = self.handlers.get(operation)
        if handler is None:
            raise ConnectorError(f"{self.name} has no operation '{operation}'")
        return handler(session, args)


def draft_only(session: Session, args: Mapping[str, Any]) -> Result:
    """A message is a DRAFT: the dispatch keeps it for the person; reaching here is a wiring
    fault, and posting anyway would put a role's words in a channel without her."""
    raise Refused(
        f"{session.name}: post_message only makes a draft; the person posts it with sdd send"
    )


def segment(value: Any, what: str, pattern: re.Pattern[str] | None = None) -> str:
    """`value` (text or a whole number) as one percent-encoded path segment: the one check of
    hostkit.segment, so every connector makes a path the same way."""
    text = (
        str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    )
    try:
        return hostkit.segment(text, what, pattern)
    except ConnectorError:
        raise ConnectorError(f"{value!r} is not {what}") from None


def text_arg(args: Mapping[str, Any], name: str, operation: str) -> str:
    """A required argument that is a word or a number, as text."""
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConnectorError(f"{operation} needs '{name}' (a text)")
    text = str(value).strip()
    if not text:
        raise ConnectorError(f"{operation} needs '{name}' (a text), not an empty one")
    return text


def count_arg(args: Mapping[str, Any], name: str, operation: str, default: int, most: int) -> int:
    """How many a read should return (`max_results`, `limit`): a number, held between 1 and
    `most`; `default` when the role names none."""
    wanted = args.get(name, default)
    try:
        return max(1, min(most, int(wanted)))
    except (TypeError, ValueError):
        raise ConnectorError(f"{operation}: '{name}' must be a number, not {wanted!r}") from None


def mapping_arg(args: Mapping[str, Any], name: str, operation: str) -> Mapping[str, Any]:
    value = args.get(name)
    if not isinstance(value, Mapping) or not value:
        raise ConnectorError(f"{operation} needs '{name}': an object of field names and values")
    return value


def flat_text(value: Any) -> str:
    """Every word inside a field's value (a select's `{"value": "QA Passed"}`, a list of
    labels, an option's name), joined: what the value says, whatever its shape."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return " ".join(t for t in (flat_text(v) for v in value.values()) if t)
    if isinstance(value, list | tuple):
        return " ".join(t for t in (flat_text(v) for v in value) if t)
    return str(value)


def refuse_stage_fields(
    connector: str, operation: str, record: str, fields: Mapping[str, Any]
) -> None:
    """Refuse, before any change is sent, a field (by its name as the tracker shows it) that
    mirrors a stage or her verdict, or a status it would move to one: the dispatch checks the
    names the model gave, this checks what the ids stand for."""
    for name, value in fields.items():
        reason = forbidden_reason(operation, {str(name): flat_text(value)})
        if reason is not None:
            raise ConnectorError(
                f"{connector}: {operation} of {record} was not sent: {reason}. It is the "
                "person's, by any route",
                hint="she records it with sdd's own commands; a tracker may only show it",
            )


def refuse_stage_status(connector: str, operation: str, record: str, status: str) -> None:
    """Refuse moving a record into a status that is an acceptance, a QA result, done or a
    release: the person's."""
    reason = forbidden_reason(operation, {"transition": status})
    if reason is not None:
        raise ConnectorError(
            f"{connector}: moving {record} to {status!r} was not sent: it is the person's "
            f"({reason})",
            hint="she moves it herself; sdd's stages are hers, never a tracker's",
        )


class _Text(HTMLParser):
    _BREAKS = frozenset(("br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                         "pre", "blockquote", "ul", "ol", "table"))  # fmt: skip

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in self._BREAKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag in self._BREAKS and tag != "li":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """HTML (an Aha! description, a comment) as the plain text a role reads."""
    parser = _Text()
    parser.feed(markup)
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.parts).splitlines()]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def text_to_html(text: str) -> str:
    """Plain text as HTML paragraphs, every character escaped: a role's words can never become
    markup, a mention or a link the person did not see as such."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "".join(
        "<p>" + "<br>".join(html.escape(line) for line in p.splitlines()) + "</p>"
        for p in paragraphs
    )


def shorten(text: str, limit: int = 4000) -> str:
    return (
        text
        if len(text) <= limit
        else text[:limit] + f"\n[... {len(text) - limit:,} characters cut]"
    )


def comment_lines(comments: list[dict[str, str]], words: str = "body") -> list[str]:
    """A record's comments as its read shows them, after its description: each one's author,
    date and `words` (the field of the comment that holds them)."""
    if not comments:
        return []
    return [f"\ncomments ({len(comments)}):"] + [
        f"- {c['author']} ({c['created']}): {shorten(c[words], 1500)}" for c in comments
    ]


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is an object of the answer, else an empty one: a field a service left out
    or sent in another shape reads as absent, never as a crash."""
    return value if isinstance(value, Mapping) else {}
