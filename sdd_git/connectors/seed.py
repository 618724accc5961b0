"""`sdd change new --from jira:KEY|github:#N`: a change started from a tracker issue's words.

The person's command: the issue is read through its connector (a read, no stop: she asked for
it), and the change starts with the issue's title and body as its words, masked, naming the
issue as its `source`. A missing issue is `missing: ...` and nothing is created. Trackers seed a
change, they never hold its progress: nothing is written back."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sdd_git.connectors.config import ConnectorConfig, find_connector, repository
from sdd_git.errors import UsageError
from sdd_git.records.changes import ChangePack
from sdd_git.root import Root

_SOURCE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9_-]{0,39}):(?P<ref>\S.*)$")
_NUMBERED = re.compile(r"^(?:(?P<repo>[\w.-]+(?:/[\w.-]+)+))?[#!]?(?P<number>\d+)$")
# C0 and C1 controls but tab and newline, and the characters that reorder or hide text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
MAX_WORDS = 20_000  # characters of an issue's text kept as the change's words
MAX_TITLE = 200
_EXAMPLE = "sdd change new --from jira:ABC-12  (or github:#34, github:acme/app#34, gitlab:#5)"


@dataclass(frozen=True)
class Issue:
    source: str  # as named in the change: "github:acme/app#34", "jira:ABC-12"
    title: str
    body: str

    @property
    def words(self) -> str:
        return f"{self.title}\n\n{self.body}".strip()


def _request(root: Root, config: ConnectorConfig, ref: str) -> tuple[str, dict[str, Any], str]:
    """The read that gets the issue: operation, arguments, and the source's full name."""
    kind = config.table_kind
    if kind in ("github", "gitlab"):
        match = _NUMBERED.match(ref.strip())
        if match is None:
            raise UsageError(f"{config.name}:{ref} names no issue number", hint=_EXAMPLE)
        named = match.group("repo")
        if named and any(part in (".", "..") for part in named.split("/")):
            raise UsageError(f"{config.name}:{ref} names no repository", hint=_EXAMPLE)
        repo = named or repository(root, config)
        if repo is None:
            raise UsageError(
                f"{config.name}:{ref} names no repository, and none is configured",
                hint=f"name it: --from {config.name}:owner/name#{match.group('number')}, or set "
                f"connectors.{config.name}.repo in .sdd/config.yaml",
            )
        number = int(match.group("number"))
        if kind == "github":
            return "get_issue", {"repo": repo, "number": number}, f"{config.name}:{repo}#{number}"
        return "get_issue", {"project": repo, "iid": number}, f"{config.name}:{repo}#{number}"
    key = ref.strip()
    if kind == "jira":
        return "get_issue", {"key": key}, f"{config.name}:{key}"
    if kind == "asana":
        return "get_task", {"task": key}, f"{config.name}:{key}"
    if kind == "aha":
        return "get_feature", {"id": key}, f"{config.name}:{key}"
    if kind == "azure-devops":
        project = config.settings.get("project")
        if not isinstance(project, str):
            raise UsageError(
                f"{config.name} has no project to read work item {key} from",
                hint=f"set connectors.{config.name}.project in .sdd/config.yaml",
            )
        return "get_work_item", {"project": project, "id": key}, f"{config.name}:{key}"
    raise UsageError(
        f"{config.name} ({kind}) holds no issues to start a change from", hint=_EXAMPLE
    )


def read_issue(root: Root, source: str, mask: Callable[[str], str]) -> Issue:
    """The issue `source` names, read through its connector; its words masked."""
    from sdd_git.connectors.calls import call_connector
    from sdd_git.masking.returned import mask_returned

    match = _SOURCE.match(source.strip())
    if match is None:
        raise UsageError(f"--from {source!r} is not CONNECTOR:ISSUE", hint=_EXAMPLE)
    config = find_connector(root, match.group("name"))
    operation, args, named = _request(root, config, match.group("ref"))
    result = call_connector(root, config.name, operation, args, mask=mask, config=config)
    title, body = title_and_body(result.data, result.text)
    if not title and not body:
        raise UsageError(f"{named} has neither a title nor a text to start a change from")

    def clean(text: str) -> str:
        return mask(mask_returned(_CONTROL.sub("", text))).strip()

    # The service's words become her change's: no terminal codes, a title on one line, and a
    # body of a sensible length (a hostile or broken tracker's endless text is cut, and said).
    body = clean(body)
    if len(body) > MAX_WORDS:
        body = body[:MAX_WORDS] + f"\n[... {len(body) - MAX_WORDS:,} more characters not kept]"
    return Issue(named, " ".join(clean(title).split())[:MAX_TITLE], body)


def start_change_from(
    root: Root, source: str, mask: Callable[[str], str], title: str | None = None
) -> ChangePack:
    """Read the issue, then start the change with its words; nothing is made if it is missing."""
    from sdd_git.records import changes
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()  # before the read: a role's child process reads nothing this way
    issue = read_issue(root, source, mask)
    return changes.create(
        root, issue.words, title=title or issue.title or None, source=issue.source
    )


# -- what a tracker's record calls its title and its text -------------------------------------

_TITLE_KEYS = ("title", "summary", "name", "System.Title")
_BODY_KEYS = ("body", "description", "notes", "text", "System.Description")


def title_and_body(data: Mapping[str, Any], text: str) -> tuple[str, str]:
    """The title and text of an issue as connectors give them (GitHub and GitLab `title` and
    `body`/`description`, Jira `fields.summary` and `fields.description` in Atlassian's document
    format, Azure DevOps `fields["System.Title"]`, Asana `name` and `notes`); the answer's text
    when the data says neither."""
    places = [data]
    fields = data.get("fields")
    if isinstance(fields, Mapping):
        places.append(fields)
    title = _first(places, _TITLE_KEYS)
    body = _first(places, _BODY_KEYS)
    if not title and not body:
        lines = text.strip().splitlines()
        return (lines[0].strip() if lines else ""), "\n".join(lines[1:]).strip()
    return title, body


def _first(places: list[Mapping[str, Any]], keys: tuple[str, ...]) -> str:
    for place in places:
        for key in keys:
            value = place.get(key)
            flat = _plain_text(value)
            if flat:
                return flat
    return ""


def _plain_text(value: Any) -> str:
    """Text, or the text of an Atlassian document (`{type: doc, content: [...]}`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        text = value.get("text")
        if value.get("type") == "text" and isinstance(text, str):
            return text
        inner = "".join(_plain_text(item) for item in value.get("content") or [])
        block = value.get("type") in ("paragraph", "heading", "listItem", "codeBlock")
        return inner + ("\n" if block else "")
    if isinstance(value, list):
        return "".join(_plain_text(item) for item in value)
    return ""
