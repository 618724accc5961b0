"""Asana, through its REST API (https://developers.asana.com/reference/rest-api-reference).

    connectors:
      asana: {token_env: ASANA_TOKEN}          # base_url defaults to https://app.asana.com/api/1.0

The token (a personal access token or an OAuth token) is sent as `Authorization: Bearer`.
Requests and answers wrap the record in `data`; errors come as `{"errors": [{"message": ...}]}`
and are mapped by their status (sdd_git.connectors.http). Reads: a task (`GET /tasks/{gid}`)
with its comments (`GET /tasks/{gid}/stories`, paged by `limit` and `next_page.offset`). Acts:
make a task (`POST /tasks`), comment (`POST /tasks/{gid}/stories`), change fields (`PUT
/tasks/{gid}`).

Completing a task, or setting a custom field that mirrors a stage or her verdict, would make
the tracker hold a change's progress: refused before the change is sent. Custom fields are
given by gid, and enum values by option gid, so both are resolved to the names the person sees
(GET /tasks/{gid}?opt_fields=custom_fields...) before that check."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sdd_git.connectors.base import ConnectorError, Missing, Result, Session
from sdd_git.connectors.builtin.hostkit import bearer_call as _call
from sdd_git.connectors.builtin.hostkit import by_operation
from sdd_git.connectors.builtin.trackerkit import (
    TrackerConnector,
    comment_lines,
    flat_text,
    mapping_arg,
    refuse_stage_fields,
    refuse_stage_status,
    segment,
    shorten,
    text_arg,
)
from sdd_git.connectors.http import Answer

GID = re.compile(r"[0-9]{1,32}")
STORIES_PAGE = 50
MAX_STORY_PAGES = 10
TASK_FIELDS = (
    "name,notes,completed,completed_at,assignee.name,due_on,permalink_url,modified_at,"
    "memberships.project.name,memberships.section.name,tags.name,"
    "custom_fields.name,custom_fields.display_value"
)
STORY_FIELDS = "type,resource_subtype,text,created_by.name,created_at"
CUSTOM_FIELDS = (
    "custom_fields.gid,custom_fields.name,custom_fields.resource_subtype,"
    "custom_fields.enum_options.gid,custom_fields.enum_options.name"
)


def _data(answer: Answer, session: Session, source: str) -> Mapping[str, Any]:
    found = answer.json()
    data = found.get("data") if isinstance(found, Mapping) else None
    if not isinstance(data, Mapping):
        raise Missing(f"{source} on {session.name}", "the answer held no record")
    return data


def _task(args: Mapping[str, Any], operation: str) -> tuple[str, str]:
    given = text_arg(args, "task", operation)
    return given, segment(given, "an Asana task gid (digits, e.g. 1204567890123456)", GID)


def _name(value: Any) -> str:
    return str(value.get("name") or "") if isinstance(value, Mapping) else ""


def _get_task(session: Session, args: Mapping[str, Any]) -> Result:
    given, part = _task(args, "get_task")
    source = f"Asana task {given}"
    task = _data(
        _call(session, "GET", f"/tasks/{part}", source, query={"opt_fields": TASK_FIELDS}),
        session, source,
    )  # fmt: skip
    comments = _comments(session, given, part)
    places = [
        f"{_name(m.get('project'))} / {_name(m.get('section'))}".strip(" /")
        for m in task.get("memberships") or []
        if isinstance(m, Mapping)
    ]
    custom = [
        {"name": str(c.get("name") or ""), "value": str(c.get("display_value") or "")}
        for c in task.get("custom_fields") or []
        if isinstance(c, Mapping)
    ]
    data: dict[str, Any] = {
        "gid": str(task.get("gid") or given),
        "name": str(task.get("name") or ""),
        "completed": bool(task.get("completed")),
        "assignee": _name(task.get("assignee")),
        "due_on": str(task.get("due_on") or ""),
        "places": [p for p in places if p],
        "tags": [_name(t) for t in task.get("tags") or [] if _name(t)],
        "custom_fields": custom,
        "notes": str(task.get("notes") or ""),
        "comments": comments,
        "url": str(task.get("permalink_url") or ""),
    }
    lines = [
        f"task {data['gid']}: {data['name']}",
        ("completed" if data["completed"] else "not completed")
        + f" · assignee: {data['assignee'] or 'unassigned'}"
        + (f" · due {data['due_on']}" if data["due_on"] else ""),
    ]
    if data["places"]:
        lines.append("in: " + "; ".join(data["places"]))
    if data["tags"]:
        lines.append("tags: " + ", ".join(data["tags"]))
    lines += [f"{c['name']}: {c['value']}" for c in custom if c["value"]]
    if data["url"]:
        lines.append(f"link: {data['url']}")
    lines.append("\nnotes:\n" + (shorten(data["notes"]) if data["notes"] else "(none)"))
    lines += comment_lines(comments, "text")
    return Result("\n".join(lines), data)


def _comments(session: Session, given: str, part: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    offset: str | None = None
    for _ in range(MAX_STORY_PAGES):
        page = _call(
            session, "GET", f"/tasks/{part}/stories", f"stories of Asana task {given}",
            query={"limit": STORIES_PAGE, "offset": offset, "opt_fields": STORY_FIELDS},
        ).json()  # fmt: skip
        stories = page.get("data") if isinstance(page, Mapping) else None
        for story in stories or []:
            if isinstance(story, Mapping) and (
                story.get("type") == "comment" or story.get("resource_subtype") == "comment_added"
            ):
                found.append(
                    {
                        "author": _name(story.get("created_by")),
                        "created": str(story.get("created_at") or ""),
                        "text": str(story.get("text") or ""),
                    }
                )
        following = page.get("next_page") if isinstance(page, Mapping) else None
        offset = following.get("offset") if isinstance(following, Mapping) else None
        if not isinstance(offset, str) or not offset:
            break
    return found


def _create_task(session: Session, args: Mapping[str, Any]) -> Result:
    project = text_arg(args, "project", "create_task")
    if not GID.fullmatch(project):
        raise ConnectorError(f"{project!r} is not an Asana project gid (digits)")
    name = text_arg(args, "name", "create_task")
    body: dict[str, Any] = {"name": name, "projects": [project]}
    notes = args.get("notes")
    if isinstance(notes, str) and notes.strip():
        body["notes"] = notes
    source = f"Asana project {project}"
    task = _data(_call(session, "POST", "/tasks", source, body={"data": body}), session, source)
    gid = str(task.get("gid") or "")
    url = str(task.get("permalink_url") or "")
    return Result(
        f"made task {gid} {name!r} in project {project}" + (f" ({url})" if url else ""),
        {"gid": gid, "url": url},
    )


def _comment_task(session: Session, args: Mapping[str, Any]) -> Result:
    given, part = _task(args, "comment_task")
    text = text_arg(args, "text", "comment_task")
    source = f"Asana task {given}"
    story = _data(
        _call(session, "POST", f"/tasks/{part}/stories", source, body={"data": {"text": text}}),
        session, source,
    )  # fmt: skip
    gid = str(story.get("gid") or "")
    return Result(
        f"commented on task {given}" + (f" (story {gid})" if gid else ""),
        {"task": given, "story": gid},
    )


def _update_task(session: Session, args: Mapping[str, Any]) -> Result:
    given, part = _task(args, "update_task")
    fields = dict(mapping_arg(args, "fields", "update_task"))
    record = f"Asana task {given}"
    if fields.get("completed") not in (None, False, "false", 0):
        refuse_stage_status(session.name, "update_task", record, "completed")
    checked: dict[str, Any] = dict(fields)
    custom = fields.get("custom_fields")
    if isinstance(custom, Mapping) and custom:
        checked.update(_named_custom_fields(session, given, part, custom))
    refuse_stage_fields(session.name, "update_task", record, checked)
    task = _data(
        _call(session, "PUT", f"/tasks/{part}", record, body={"data": fields}),
        session,
        record,
    )
    return Result(
        f"changed {', '.join(sorted(fields))} of task {given}",
        {"task": str(task.get("gid") or given), "fields": sorted(fields)},
    )


def _named_custom_fields(
    session: Session, given: str, part: str, custom: Mapping[str, Any]
) -> dict[str, Any]:
    """The custom fields being set, by the names the person sees, with enum option gids turned
    into the options' names."""
    source = f"Asana task {given}"
    task = _data(
        _call(session, "GET", f"/tasks/{part}", source, query={"opt_fields": CUSTOM_FIELDS}),
        session, source,
    )  # fmt: skip
    names: dict[str, str] = {}
    options: dict[str, str] = {}
    for field in task.get("custom_fields") or []:
        if not isinstance(field, Mapping):
            continue
        names[str(field.get("gid"))] = str(field.get("name") or field.get("gid"))
        for option in field.get("enum_options") or []:
            if isinstance(option, Mapping):
                options[str(option.get("gid"))] = str(option.get("name") or "")
    named: dict[str, Any] = {}
    for gid, value in custom.items():
        values = value if isinstance(value, list) else [value]
        words = " ".join(options.get(str(v), flat_text(v)) for v in values)
        named[names.get(str(gid), str(gid))] = words
    return named


class AsanaConnector(TrackerConnector):
    name = "asana"
    handlers = by_operation(_get_task, _create_task, _comment_task, _update_task)
