"""Azure DevOps, through its REST API 7.1 (https://learn.microsoft.com/en-us/rest/api/azure/devops/).

    connectors:
      azure-devops: {organization: fabrikam, project: Fabrikam-Fiber, token_env: AZURE_DEVOPS_PAT}

A personal access token is sent as HTTP Basic with an empty user name. `base_url` is
https://dev.azure.com (the organization is appended), or a server's collection URL with no
`organization`. Reads: a work item (`_apis/wit/workitems/{id}`, with its comments, followed by
continuation token), a build (`_apis/build/builds/{id}`; a failed one with its failing tasks
from the timeline and their log excerpts), a build's log (`.../logs/{logId}`). Acts: comment on
a work item (the text escaped, so it can never become markup or a mention) and change its
fields (a JSON Patch); a field or state that would hold a stage or her verdict is never sent.

Azure DevOps answers a token it does not take with 401, or with 203 and a sign-in page: both
are "not signed in"."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    NotSignedIn,
    Result,
    Session,
)
from sdd_git.connectors.builtin.buildlog import LOGS_SHOWN, add_excerpt, excerpt_result
from sdd_git.connectors.builtin.hostkit import (
    ServiceCall,
    ServiceConnector,
    basic_auth,
    by_operation,
    follow_pages,
    mapping,
    record_of,
    said,
    segment,
    shorten,
    text,
    token_of,
)
from sdd_git.connectors.builtin.trackerkit import (
    html_to_text,
    refuse_stage_fields,
    text_to_html,
)
from sdd_git.connectors.http import Answer, request

NAME = "azure-devops"
API = "7.1"
COMMENTS_API = "7.1-preview.4"
ORGANIZATION = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,49}")
# What Azure DevOps refuses in a project's name, plus '%' (never taken pre-encoded here).
PROJECT = re.compile(r"[^_.\\/:*?\"<>|;#$%{},+=\[\]][^\\/:*?\"<>|;#$%{},+=\[\]]{0,63}")
FIELD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+){0,5}")
COMMENTS_SHOWN = 20
COMMENT_PAGE = 10
FAILED = ("failed", "partiallySucceeded", "canceled")


class _Call(ServiceCall):
    connector = NAME

    def __init__(self, session: Session, operation: str, args: Mapping[str, Any]) -> None:
        super().__init__(session, operation, args)
        self.project = self.within_arg("project")
        organization = session.settings.get("organization")
        prefix = ""
        if organization is not None:
            prefix = "/" + segment(str(organization), "an organization name", ORGANIZATION)
        elif urlsplit(session.base_url).path.strip("/") == "":
            raise ConnectorError(
                f"{session.name}: no organization is configured",
                hint=f"set connectors.{session.name}.organization in .sdd/config.yaml",
            )
        project = segment(self.project, "an Azure DevOps project name", PROJECT)
        self.base = f"{prefix}/{project}/_apis"
        self.headers = basic_auth("", token_of(session))

    def send(
        self,
        path: str,
        source: str,
        *,
        method: str = "GET",
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        answer = request(
            self.session, method, self.base + path, source=source,
            query={"api-version": API, **(query or {})}, body=body,
            headers={**self.headers, **(headers or {})},
        )  # fmt: skip
        return signed_in(self.session, answer)


def signed_in(session: Session, answer: Answer) -> Answer:
    if answer.status == 203:  # a sign-in page, not the record
        raise NotSignedIn(
            f"{session.name} answered with a sign-in page (203): the token was not accepted",
            hint=f"sign in again: sdd connect {session.name}",
        )
    return answer


def _person(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("displayName") or value.get("uniqueName") or "unknown")
    return said(value, "nobody")


def _comments(call: _Call, work_item: int) -> tuple[list[Mapping[str, Any]], bool] | None:
    """The newest comments, following continuation tokens; None when they cannot be read."""
    source = f"comments of work item {work_item} of {call.project}"

    def next_of(answer: Answer) -> tuple[str, Mapping[str, Any]] | None:
        data = answer.json()
        token = data.get("continuationToken") if isinstance(data, Mapping) else None
        token = token or answer.headers.get("x-ms-continuationtoken")
        if not token:
            return None
        return path, {**query, "continuationToken": str(token)}

    path = f"{call.base}/wit/workItems/{work_item}/comments"
    query = {"api-version": COMMENTS_API, "$top": COMMENT_PAGE, "order": "desc"}
    try:
        listed = follow_pages(
            call.session, path, source=source, headers=call.headers, query=query,
            items_of=lambda data: list(data.get("comments") or [])
            if isinstance(data, Mapping) else [],
            next_of=next_of, max_items=COMMENTS_SHOWN,
        )  # fmt: skip
    except (Missing, ConnectorError):
        return None
    return [c for c in listed.items if isinstance(c, Mapping)], listed.more


def _get_work_item(call: _Call) -> Result:
    work_item = call.number("id")
    answer = call.send(f"/wit/workitems/{work_item}", call.source(id=work_item)).json()
    item: Any = record_of(answer, call.session, call.source(id=work_item), "work item", "id")
    fields = item.get("fields")
    if not isinstance(fields, Mapping):
        raise Missing(f"{call.source(id=work_item)} on {call.session.name}", "it holds no fields")
    kind = fields.get("System.WorkItemType")
    description_html = fields.get("System.Description") or fields.get(
        "Microsoft.VSTS.TCM.ReproSteps"
    )
    description = html_to_text(str(description_html)) if description_html else ""
    links = item.get("_links") if isinstance(item.get("_links"), Mapping) else {}
    url = (links.get("html") or {}).get("href") if isinstance(links.get("html"), Mapping) else None
    lines = [
        f"work item {work_item} of {call.project}: {fields.get('System.Title')} "
        f"({said(kind, 'unknown type')}, {said(fields.get('System.State'), 'no state')})",
        f"assigned to {_person(fields.get('System.AssignedTo'))} · area "
        f"{said(fields.get('System.AreaPath'))} · iteration "
        f"{said(fields.get('System.IterationPath'))} · tags {said(fields.get('System.Tags'))}",
        f"created {said(fields.get('System.CreatedDate'))} by "
        f"{_person(fields.get('System.CreatedBy'))}, changed "
        f"{said(fields.get('System.ChangedDate'))}",
        str(url or ""),
        "",
        shorten(description) if description.strip() else "(no description)",
    ]
    read = _comments(call, work_item)
    comments: list[dict[str, Any]] = []
    if read is None:
        lines.append("\ncomments: could not be read")
    else:
        found, more = read
        comments = [
            {"id": c.get("id"), "by": _person(c.get("createdBy")), "date": c.get("createdDate"),
             "text": html_to_text(str(c.get("text") or ""))}
            for c in found
        ]  # fmt: skip
        lines.append(f"\ncomments, newest first: {len(comments)}{'+' if more else ''}")
        lines.extend(f"- {c['by']} on {c['date']}: {shorten(c['text'], 500)}" for c in comments)
        if not comments:
            lines.append("none")
    data = {
        "id": work_item, "title": fields.get("System.Title"), "state": fields.get("System.State"),
        "type": kind, "description": description, "url": url,
        "assigned_to": _person(fields.get("System.AssignedTo")), "comments": comments,
    }  # fmt: skip
    return Result("\n".join(lines).strip(), data)


def _timeline_failures(call: _Call, build_id: int) -> list[Mapping[str, Any]]:
    source = f"timeline of build {build_id} of {call.project}"
    try:
        timeline = call.send(f"/build/builds/{build_id}/timeline", source).json()
    except Missing:
        return []
    records = timeline.get("records") if isinstance(timeline, Mapping) else None
    records = [r for r in records or [] if isinstance(r, Mapping)]
    return sorted(
        (r for r in records if r.get("type") == "Task" and r.get("result") == "failed"),
        key=lambda r: int(r.get("order") or 0) if str(r.get("order") or "0").isdigit() else 0,
    )


def _log(call: _Call, build_id: int, log_id: int, source: str) -> Answer:
    return call.send(
        f"/build/builds/{build_id}/logs/{log_id}", source, headers={"Accept": "text/plain"}
    )


def _get_build(call: _Call) -> Result:
    build_id = call.number("build_id")
    build = call.send(f"/build/builds/{build_id}", call.source(build_id=build_id)).json()
    build = record_of(build, call.session, call.source(build_id=build_id), "build", "id")
    definition = mapping(build.get("definition"))
    web = mapping(mapping(build.get("_links")).get("web"))
    status, result = build.get("status"), build.get("result")
    lines = [
        f"build {build_id} of {call.project}: {definition.get('name')} {build.get('buildNumber')} "
        f"({build.get('reason')} on {build.get('sourceBranch')}, "
        f"{str(build.get('sourceVersion') or 'unknown')[:10]}; for "
        f"{_person(build.get('requestedFor'))})",
        str(web.get("href") or ""),
    ]
    data: dict[str, Any] = {
        "id": build_id, "status": status, "result": result, "finished": status == "completed",
        "branch": build.get("sourceBranch"), "commit": build.get("sourceVersion"),
        "url": web.get("href"),
    }  # fmt: skip
    if status != "completed":
        lines.insert(1, f"not finished: status {status}; no result yet")
        return Result("\n".join(line for line in lines if line), data)
    lines.insert(
        1, f"finished: {result} (started {build.get('startTime')}, ended {build.get('finishTime')})"
    )
    if result in FAILED:
        failing = _timeline_failures(call, build_id)
        data["failing_tasks"] = [
            {"name": r.get("name"), "log_id": (r.get("log") or {}).get("id")
             if isinstance(r.get("log"), Mapping) else None,
             "errors": [str(i.get("message")) for i in r.get("issues") or []
                        if isinstance(i, Mapping) and i.get("type") == "error"]}
            for r in failing
        ]  # fmt: skip
        lines.append(f"failed tasks: {len(failing)}" if failing else "failed tasks: none listed")
        for task in data["failing_tasks"]:
            errors = "; ".join(task["errors"][:3])
            lines.append(
                f"- {task['name']} (log {task['log_id']})" + (f": {errors}" if errors else "")
            )
        for task in [t for t in data["failing_tasks"] if isinstance(t["log_id"], int)][:LOGS_SHOWN]:
            what = f"log {task['log_id']} ({task['name']})"
            source = f"log {task['log_id']} of build {build_id} of {call.project}"
            read = functools.partial(_log, call, build_id, task["log_id"], source)
            add_excerpt(lines, task, what, read)
    return Result("\n".join(line for line in lines if line), data)


def _get_build_log(call: _Call) -> Result:
    build_id, log_id = call.number("build_id"), call.number("log_id")
    answer = _log(call, build_id, log_id, call.source(build_id=build_id, log_id=log_id))
    if answer.headers.get("content-type", "").startswith("application/json"):
        data = answer.json()  # the JSON form: {"count": N, "value": [lines]}
        lines = data.get("value") if isinstance(data, Mapping) else None
        body = "\n".join(str(line) for line in lines or [])
        answer = Answer(answer.status, answer.headers, body.encode())
    what = f"log {log_id} of build {build_id} of {call.project}"
    return excerpt_result(what, answer, build_id=build_id, log_id=log_id)


def _comment_work_item(call: _Call) -> Result:
    work_item = call.number("id")
    comment = call.send(
        f"/wit/workItems/{work_item}/comments", f"work item {work_item} of {call.project}",
        method="POST", query={"api-version": COMMENTS_API},
        body={"text": text_to_html(text(call.args, "text", call.operation))},
    ).json()  # fmt: skip
    number = comment.get("id") if isinstance(comment, Mapping) else None
    return Result(
        f"commented on work item {work_item} of {call.project} (comment {number})",
        {"id": number, "work_item": work_item},
    )


def _update_work_item(call: _Call) -> Result:
    work_item = call.number("id")
    fields = call.args.get("fields")
    if not isinstance(fields, Mapping) or not fields:
        raise ConnectorError("update_work_item needs 'fields': an object of field names and values")
    patch = []
    for name, value in fields.items():
        if not isinstance(name, str) or not FIELD.fullmatch(name):
            raise ConnectorError(
                f"update_work_item: {name!r} is not a field's reference name (System.Title)"
            )
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ConnectorError(f"update_work_item: the value of {name} is a text or a number")
        patch.append({"op": "add", "path": f"/fields/{name}", "value": value})
    what = f"work item {work_item} of {call.project}"
    refuse_stage_fields(NAME, call.operation, what, fields)
    item = call.send(
        f"/wit/workitems/{work_item}", what, method="PATCH", body=patch,
        headers={"Content-Type": "application/json-patch+json"},
    ).json()  # fmt: skip
    revision = item.get("rev") if isinstance(item, Mapping) else None
    return Result(
        f"changed {', '.join(fields)} of {what} (revision {revision})",
        {"id": work_item, "rev": revision, "fields": list(fields)},
    )


class AzureDevOpsConnector(ServiceConnector):
    name = NAME
    call_class = _Call
    handlers = by_operation(
        _get_work_item, _get_build, _get_build_log, _comment_work_item, _update_work_item
    )  # fmt: skip
