"""Jira Cloud, through its REST API v3 (https://developer.atlassian.com/cloud/jira/platform/rest/v3/).

    connectors:
      jira: {base_url: https://acme.atlassian.net, email: ada@acme.com, token_env: JIRA_TOKEN}

With `email` the token is an Atlassian API token sent as HTTP Basic (`email:token`); without it
the token is sent as `Authorization: Bearer` (an OAuth 2.0 token, or a Data Center personal
access token). Reads: an issue (its description and comments turned from the Atlassian Document
Format into plain text), a JQL search (`/rest/api/3/search/jql`, paged by `nextPageToken`), the
transitions of an issue. Acts: create, comment (the comment built as ADF), update fields, move
through a transition.

A tracker may show status; it never holds a change's progress. So before a transition is sent
it is looked up (GET .../transitions) and refused when it leads to an accepted, QA-passed, done
or released status, whether the role named it or gave its id; and a field update is refused when
a field, once its id (`customfield_10042`) is resolved to its name (GET /rest/api/3/field),
mirrors a stage or her verdict."""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from typing import Any

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    Refused,
    Result,
    Session,
)
from sdd_git.connectors.builtin.hostkit import basic_auth, bearer_call, by_operation, token_of
from sdd_git.connectors.builtin.trackerkit import (
    TrackerConnector,
    as_mapping,
    comment_lines,
    count_arg,
    mapping_arg,
    refuse_stage_fields,
    refuse_stage_status,
    segment,
    shorten,
    text_arg,
)

API = "/rest/api/3"
ISSUE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*-[0-9]+|[0-9]+")  # ACME-7, or the numeric id
PAGE_SIZE = 50
MAX_RESULTS = 100  # what one search returns at most, over its pages
MAX_PAGES = 20
DEFAULT_RESULTS = 20
ISSUE_FIELDS = (
    "summary,status,issuetype,priority,assignee,reporter,labels,description,created,updated,"
    "resolution,fixVersions,parent,comment"
)
SEARCH_FIELDS = "summary,status,issuetype,assignee,priority,updated"
# Fields whose value is a document (ADF) in v3: a plain text given for them is made into one.
_ADF_SYSTEM_FIELDS = ("description", "environment")
_ADF_CUSTOM_TYPE = "com.atlassian.jira.plugin.system.customfieldtypes:textarea"


def _headers(session: Session) -> dict[str, str]:
    token = token_of(session)
    email = session.settings.get("email")
    if isinstance(email, str) and email.strip():
        return basic_auth(email.strip(), token)
    return {"Authorization": f"Bearer {token}"}


# Jira Cloud signs with the email and an API token; a server or data center with a bearer token.
_call = functools.partial(bearer_call, sign=_headers)


def _key(args: Mapping[str, Any], operation: str) -> tuple[str, str]:
    """The issue key as given, and as one path segment."""
    key = text_arg(args, "key", operation)
    return key, segment(key, "a Jira issue key such as ACME-7", ISSUE_KEY)


def _browse(session: Session, key: str) -> str:
    return f"{session.base_url.rstrip('/')}/browse/{key}"


# --- the Atlassian Document Format -----------------------------------------------------------


def adf_to_text(node: Any) -> str:
    """An ADF document (a description, a comment) as plain text: paragraphs, headings, lists,
    code, quotes, tables, mentions and links kept as words; media shown as a placeholder."""
    if isinstance(node, str):
        return node  # API v2, or a field that was never a document
    if not isinstance(node, Mapping):
        return ""
    text = _block(node, "")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _blocks(nodes: Any, indent: str, joiner: str = "\n\n") -> str:
    if not isinstance(nodes, list):
        return ""
    parts = [_block(n, indent) for n in nodes if isinstance(n, Mapping)]
    return joiner.join(p for p in parts if p)


def _block(node: Mapping[str, Any], indent: str) -> str:
    kind = node.get("type")
    attrs = as_mapping(node.get("attrs"))
    content = node.get("content")
    if kind == "doc":
        return _blocks(content, indent)
    if kind == "paragraph":
        return indent + _inline(content).replace("\n", "\n" + indent)
    if kind == "heading":
        level = _number(attrs.get("level"), 1)
        return indent + "#" * level + " " + _inline(content)
    if kind in ("bulletList", "orderedList", "taskList", "decisionList"):
        return _list(str(kind), attrs, content, indent)
    if kind in ("listItem", "taskItem", "decisionItem"):
        return _item(node, indent)
    if kind == "codeBlock":
        language = attrs.get("language") or ""
        return f"{indent}```{language}\n{_inline(content)}\n{indent}```"
    if kind == "blockquote":
        inner = _blocks(content, "")
        return "\n".join(indent + "> " + line for line in inner.splitlines())
    if kind == "rule":
        return indent + "---"
    if kind in ("mediaSingle", "mediaGroup", "media"):
        return indent + "[attachment]"
    if kind in ("expand", "nestedExpand"):
        title = attrs.get("title") or ""
        inner = _blocks(content, indent)
        return (indent + str(title) + "\n" + inner) if title else inner
    if kind == "table":
        return _table(content, indent)
    if isinstance(content, list):  # a panel, a layout, a block this reader does not name
        if all(isinstance(n, Mapping) and _is_inline(n) for n in content):
            return indent + _inline(content)
        return _blocks(content, indent)
    return indent + _inline([node]) if _is_inline(node) else ""


def _list(kind: str, attrs: Mapping[str, Any], content: Any, indent: str) -> str:
    start = _number(attrs.get("order"), 1)
    lines = []
    for number, item in enumerate(content if isinstance(content, list) else [], start):
        if not isinstance(item, Mapping):
            continue
        if kind == "orderedList":
            mark = f"{number}. "
        elif item.get("type") == "taskItem":
            state = (item.get("attrs") or {}).get("state")
            mark = "[x] " if state == "DONE" else "[ ] "
        else:
            mark = "- "
        body = _item(item, indent + " " * len(mark))
        lines.append(indent + mark + body.lstrip())
    return "\n".join(lines)


def _table(content: Any, indent: str) -> str:
    rows = []
    for row in content if isinstance(content, list) else []:
        cells = row.get("content") if isinstance(row, Mapping) else None
        texts = [
            " ".join(_blocks(c.get("content"), "", " ").split())
            for c in (cells if isinstance(cells, list) else [])
            if isinstance(c, Mapping)
        ]
        rows.append(indent + "| " + " | ".join(texts) + " |")
    return "\n".join(rows)


def _number(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _item(node: Mapping[str, Any], indent: str) -> str:
    content = node.get("content")
    if (
        isinstance(content, list)
        and content
        and all(isinstance(n, Mapping) and _is_inline(n) for n in content)
    ):
        return _inline(content)  # a taskItem holds inline nodes directly
    return _blocks(content, indent, "\n")


_INLINE = ("text", "hardBreak", "mention", "emoji", "inlineCard", "date", "status",
           "placeholder", "mediaInline", "inlineExtension")  # fmt: skip


def _is_inline(node: Mapping[str, Any]) -> bool:
    return node.get("type") in _INLINE


def _inline(nodes: Any) -> str:
    if not isinstance(nodes, list):
        return ""
    return "".join(_inline_one(node) for node in nodes if isinstance(node, Mapping))


def _inline_one(node: Mapping[str, Any]) -> str:
    kind = node.get("type")
    attrs = as_mapping(node.get("attrs"))
    if kind == "text":
        return _linked_text(node)
    if kind == "hardBreak":
        return "\n"
    if kind == "mention":
        return str(attrs.get("text") or "@someone")
    if kind == "emoji":
        return str(attrs.get("text") or attrs.get("shortName") or "")
    if kind == "inlineCard":
        return str(attrs.get("url") or "")
    if kind == "date":
        return _date(attrs.get("timestamp"))
    if kind == "status":
        return f"[{attrs.get('text') or ''}]"
    if kind == "mediaInline":
        return "[attachment]"
    if isinstance(node.get("content"), list):
        return _inline(node.get("content"))
    return ""


def _linked_text(node: Mapping[str, Any]) -> str:
    text = str(node.get("text") or "")
    for mark in node.get("marks") or []:
        if isinstance(mark, Mapping) and mark.get("type") == "link":
            href = (mark.get("attrs") or {}).get("href")
            if href and href != text:
                text = f"{text} ({href})"
    return text


def _date(timestamp: Any) -> str:
    try:
        moment = datetime.datetime.fromtimestamp(int(timestamp) / 1000, datetime.UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return str(timestamp or "")
    return moment.strftime("%Y-%m-%d")


def text_to_adf(text: str) -> dict[str, Any]:
    """Plain text as an ADF document: a paragraph per block of lines, a hard break per line
    break. Every character stays text: nothing a role writes becomes a mention or a macro."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    content = []
    for paragraph in paragraphs:
        inline: list[dict[str, Any]] = []
        for line in paragraph.splitlines():
            if inline:
                inline.append({"type": "hardBreak"})
            if line:
                inline.append({"type": "text", "text": line})
        content.append({"type": "paragraph", "content": inline})
    return {"type": "doc", "version": 1, "content": content}


# --- reads -----------------------------------------------------------------------------------


def _name(value: Any, key: str = "name") -> str:
    if isinstance(value, Mapping):
        found = value.get(key) or value.get("displayName") or value.get("name")
        return str(found) if found else ""
    return str(value) if value else ""


def _get_issue(session: Session, args: Mapping[str, Any]) -> Result:
    key, part = _key(args, "get_issue")
    answer = _call(
        session, "GET", f"{API}/issue/{part}", f"issue {key}", query={"fields": ISSUE_FIELDS}
    )
    issue = answer.json()
    if not isinstance(issue, Mapping) or not isinstance(issue.get("fields"), Mapping):
        raise Missing(f"issue {key} on {session.name}", "the answer held no issue")
    fields: Mapping[str, Any] = issue["fields"]
    real_key = str(issue.get("key") or key)
    description = adf_to_text(fields.get("description"))
    comments = []
    block = fields.get("comment")
    for comment in (block.get("comments") if isinstance(block, Mapping) else None) or []:
        if isinstance(comment, Mapping):
            comments.append(
                {
                    "author": _name(comment.get("author"), "displayName"),
                    "created": str(comment.get("created") or ""),
                    "body": adf_to_text(comment.get("body")),
                }
            )
    data: dict[str, Any] = {
        "key": real_key,
        "id": str(issue.get("id") or ""),
        "summary": str(fields.get("summary") or ""),
        "type": _name(fields.get("issuetype")),
        "status": _name(fields.get("status")),
        "priority": _name(fields.get("priority")),
        "assignee": _name(fields.get("assignee"), "displayName"),
        "reporter": _name(fields.get("reporter"), "displayName"),
        "labels": [str(x) for x in fields.get("labels") or []],
        "resolution": _name(fields.get("resolution")),
        "parent": str(as_mapping(fields.get("parent")).get("key") or ""),
        "updated": str(fields.get("updated") or ""),
        "description": description,
        "comments": comments,
        "url": _browse(session, real_key),
    }
    head = f"{real_key}" + (f" ({data['type']})" if data["type"] else "")
    lines = [
        f"{head}: {data['summary']}",
        f"status: {data['status'] or 'unknown'}"
        + (f" · resolution: {data['resolution']}" if data["resolution"] else "")
        + (f" · priority: {data['priority']}" if data["priority"] else ""),
        f"assignee: {data['assignee'] or 'unassigned'}"
        + (f" · reporter: {data['reporter']}" if data["reporter"] else ""),
    ]
    if data["labels"]:
        lines.append("labels: " + ", ".join(data["labels"]))
    if data["parent"]:
        lines.append(f"parent: {data['parent']}")
    lines.append(f"updated: {data['updated']}" if data["updated"] else "")
    lines.append(f"link: {data['url']}")
    lines.append("\ndescription:\n" + (shorten(description) if description else "(none)"))
    lines += comment_lines(comments)
    return Result("\n".join(line for line in lines if line), data)


def _search(session: Session, args: Mapping[str, Any]) -> Result:
    jql = text_arg(args, "jql", "search")
    limit = count_arg(args, "max_results", "search", DEFAULT_RESULTS, MAX_RESULTS)
    issues: list[Mapping[str, Any]] = []
    token: str | None = None
    for _ in range(MAX_PAGES):
        query = {"jql": jql, "maxResults": min(PAGE_SIZE, limit - len(issues)),
                 "fields": SEARCH_FIELDS, "nextPageToken": token}  # fmt: skip
        page = _call(
            session, "GET", f"{API}/search/jql", f"issues matching {jql}", query=query
        ).json()
        if not isinstance(page, Mapping):
            break
        issues += [i for i in page.get("issues") or [] if isinstance(i, Mapping)]
        token = page.get("nextPageToken") if isinstance(page.get("nextPageToken"), str) else None
        if len(issues) >= limit or page.get("isLast") is True or not token:
            break
    if not issues:
        raise Missing(f"issues matching {jql} on {session.name}", "the search found none")
    issues = issues[:limit]
    rows = []
    for issue in issues:
        fields = as_mapping(issue.get("fields"))
        rows.append(
            {
                "key": str(issue.get("key") or ""),
                "summary": str(fields.get("summary") or ""),
                "status": _name(fields.get("status")),
                "type": _name(fields.get("issuetype")),
                "assignee": _name(fields.get("assignee"), "displayName"),
                "updated": str(fields.get("updated") or ""),
            }
        )
    more = " (more match; narrow the search)" if token and len(issues) >= limit else ""
    lines = [f"{len(rows)} issue(s) matching {jql}{more}:"]
    lines += [
        f"- {r['key']} [{r['status'] or '?'}] {r['summary']}"
        + (f" · {r['assignee']}" if r["assignee"] else "")
        for r in rows
    ]
    return Result("\n".join(lines), {"jql": jql, "issues": rows, "more": bool(more)})


def _transitions(session: Session, key: str, part: str) -> list[Mapping[str, Any]]:
    found = _call(session, "GET", f"{API}/issue/{part}/transitions", f"transitions of {key}").json()
    listed = found.get("transitions") if isinstance(found, Mapping) else None
    return [t for t in listed or [] if isinstance(t, Mapping)]


def _shown(transition: Mapping[str, Any]) -> str:
    return f"{transition.get('id')}: {transition.get('name')} -> {_name(transition.get('to'))}"


def _get_transitions(session: Session, args: Mapping[str, Any]) -> Result:
    key, part = _key(args, "get_transitions")
    transitions = _transitions(session, key, part)
    if not transitions:
        raise Missing(f"transitions of {key} on {session.name}", "none open to this account")
    rows = [
        {"id": str(t.get("id") or ""), "name": str(t.get("name") or ""), "to": _name(t.get("to"))}
        for t in transitions
    ]
    lines = [f"transitions of {key} (id: name -> status):"] + [
        f"- {_shown(t)}" for t in transitions
    ]
    return Result("\n".join(lines), {"key": key, "transitions": rows})


# --- acts ------------------------------------------------------------------------------------


def _create_issue(session: Session, args: Mapping[str, Any]) -> Result:
    project = text_arg(args, "project", "create_issue")
    summary = text_arg(args, "summary", "create_issue")
    kind = args.get("issuetype") or "Task"
    fields: dict[str, Any] = {
        "project": {"key": project},
        "summary": summary,
        "issuetype": {"name": str(kind)},
    }
    description = args.get("description")
    if isinstance(description, str) and description.strip():
        fields["description"] = text_to_adf(description)
    made = _call(
        session, "POST", f"{API}/issue", f"project {project}", body={"fields": fields}
    ).json()
    key = str(made.get("key") or "") if isinstance(made, Mapping) else ""
    if not key:
        raise ConnectorError(f"{session.name}: the issue was made but its key was not returned")
    return Result(
        f"opened {key} in project {project}: {summary} ({_browse(session, key)})",
        {"key": key, "id": str(made.get("id") or ""), "url": _browse(session, key)},
    )


def _comment_issue(session: Session, args: Mapping[str, Any]) -> Result:
    key, part = _key(args, "comment_issue")
    body = text_arg(args, "body", "comment_issue")
    made = _call(
        session, "POST", f"{API}/issue/{part}/comment", f"issue {key}",
        body={"body": text_to_adf(body)},
    ).json()  # fmt: skip
    comment_id = str(made.get("id") or "") if isinstance(made, Mapping) else ""
    return Result(
        f"commented on {key}" + (f" (comment {comment_id})" if comment_id else ""),
        {"key": key, "comment": comment_id},
    )


def _field_catalogue(session: Session) -> list[Mapping[str, Any]]:
    found = _call(session, "GET", f"{API}/field", "the field list").json()
    if not isinstance(found, list):
        raise ConnectorError(f"{session.name}: the field list could not be read, so no field "
                             "was changed")  # fmt: skip
    return [f for f in found if isinstance(f, Mapping)]


def _update_issue(session: Session, args: Mapping[str, Any]) -> Result:
    key, part = _key(args, "update_issue")
    given = mapping_arg(args, "fields", "update_issue")
    catalogue = _field_catalogue(session)
    by_id = {str(f.get("id")): f for f in catalogue if f.get("id")}
    by_name = {str(f.get("name")).casefold(): f for f in catalogue if f.get("name")}
    named: dict[str, Any] = {}
    sent: dict[str, Any] = {}
    options: list[tuple[str, str, str]] = []  # field id, name, as given: values by option id
    for raw_key, value in given.items():
        field = by_id.get(str(raw_key)) or by_name.get(str(raw_key).casefold())
        if field is None:
            if str(raw_key).startswith("customfield_"):
                raise Refused(
                    f"{session.name}: no field {raw_key} in the field list; nothing was changed"
                )
            field = {"id": str(raw_key), "name": str(raw_key)}
        field_id, field_name = str(field.get("id")), str(field.get("name") or field.get("id"))
        named[str(raw_key)] = value
        named[field_name] = value
        sent[field_id] = _field_value(field, value)
        if _option_ids(value):
            options.append((field_id, field_name, str(raw_key)))
    if options:
        # A select given by option id ({"id": "10301"}) says nothing by its words: the
        # option's value, from the issue's edit metadata, is what is checked.
        allowed = _allowed_values(session, key, part)
        for field_id, field_name, raw_key in options:
            ids = _option_ids(given[raw_key])
            words = [allowed.get(field_id, {}).get(i, i) for i in ids]
            named[raw_key] = named[field_name] = words
    refuse_stage_fields(session.name, "update_issue", f"issue {key}", named)
    _call(session, "PUT", f"{API}/issue/{part}", f"issue {key}", body={"fields": sent})
    names = ", ".join(sorted({str(by_id.get(i, {}).get("name") or i) for i in sent}))
    return Result(f"changed {names} of {key}", {"key": key, "fields": sorted(sent)})


def _option_ids(value: Any) -> list[str]:
    """The option ids a select or multi-select value names: {"id": "10301"} or a list of them."""
    values = value if isinstance(value, list) else [value]
    return [str(v["id"]) for v in values if isinstance(v, Mapping) and v.get("id") is not None]


def _allowed_values(session: Session, key: str, part: str) -> dict[str, dict[str, str]]:
    """field id -> option id -> the option's words, from GET .../issue/{key}/editmeta."""
    meta = _call(session, "GET", f"{API}/issue/{part}/editmeta", f"issue {key}").json()
    found: dict[str, dict[str, str]] = {}
    for field_id, field in as_mapping(as_mapping(meta).get("fields")).items():
        for option in as_mapping(field).get("allowedValues") or []:
            if isinstance(option, Mapping) and option.get("id") is not None:
                words = option.get("value") or option.get("name") or option.get("id")
                found.setdefault(str(field_id), {})[str(option["id"])] = str(words)
    return found


def _field_value(field: Mapping[str, Any], value: Any) -> Any:
    schema = as_mapping(field.get("schema"))
    document = field.get("id") in _ADF_SYSTEM_FIELDS or schema.get("custom") == _ADF_CUSTOM_TYPE
    return text_to_adf(value) if document and isinstance(value, str) else value


def _transition_issue(session: Session, args: Mapping[str, Any]) -> Result:
    key, part = _key(args, "transition_issue")
    wanted = text_arg(args, "transition", "transition_issue")
    transitions = _transitions(session, key, part)
    chosen = (
        next((t for t in transitions if str(t.get("id")) == wanted), None)
        or next(
            (t for t in transitions if str(t.get("name")).casefold() == wanted.casefold()), None
        )
        or next(
            (t for t in transitions if _name(t.get("to")).casefold() == wanted.casefold()), None
        )
    )
    if chosen is None:
        offered = "; ".join(_shown(t) for t in transitions) or "none"
        raise Refused(
            f"{session.name}: {key} has no transition {wanted!r} from its status "
            f"(open: {offered}); nothing was changed"
        )
    target = _name(chosen.get("to"))
    for status in (target, str(chosen.get("name") or "")):
        if status:
            refuse_stage_status(session.name, "transition_issue", key, status)
    _call(
        session, "POST", f"{API}/issue/{part}/transitions", f"issue {key}",
        body={"transition": {"id": str(chosen.get("id"))}},
    )  # fmt: skip
    return Result(
        f"moved {key} to {target or chosen.get('name')} (transition {chosen.get('id')})",
        {"key": key, "transition": str(chosen.get("id")), "status": target},
    )


class JiraConnector(TrackerConnector):
    name = "jira"
    handlers = by_operation(
        _get_issue,
        _search,
        _get_transitions,
        _create_issue,
        _comment_issue,
        _update_issue,
        _transition_issue,
    )
