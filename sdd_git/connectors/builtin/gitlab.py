"""GitLab, through its REST API v4 (https://docs.gitlab.com/api/rest/).

    connectors:
      gitlab: {token_env: GITLAB_TOKEN, project: acme/app}   # base_url: https://gitlab.com/api/v4

The token goes in the `PRIVATE-TOKEN` header. A project is its numeric id or its full path,
sent URL-encoded as one segment (`acme%2Fapp`), as the API documents. Reads: an issue, a merge
request, pipelines (Link pages), one pipeline (with its failed jobs and their trace excerpts),
the jobs of a pipeline, a job's trace. Acts: open an issue, comment on it (a note), open and
merge a merge request. A release is the person's: `create_release` is never sent."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from sdd_git.connectors.base import ConnectorError, Result, Session
from sdd_git.connectors.builtin.buildlog import add_failing_jobs, excerpt_result
from sdd_git.connectors.builtin.hostkit import (
    Listed,
    ServiceCall,
    ServiceConnector,
    by_operation,
    follow_pages,
    listing,
    newest_first,
    one_of,
    optional_text,
    record,
    record_of,
    said,
    short_sha,
    shorten,
    text,
    token_of,
)
from sdd_git.connectors.http import Answer, request

NAME = "gitlab"
PATH_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")
REF = re.compile(r"[^\s~^:?*\[\\]{1,255}")
PIPELINE_STATUSES = ("created", "waiting_for_resource", "preparing", "pending", "running",
                     "success", "failed", "canceled", "skipped", "manual", "scheduled")  # fmt: skip
FINISHED = ("success", "failed", "canceled", "skipped")
PIPELINES_SHOWN = 30


def project_segment(project: str, operation: str) -> str:
    """A project id (`42`) or path (`group/sub/app`) as the one segment the API takes."""
    if project.isdigit():
        return project
    parts = project.split("/")
    if len(parts) < 2 or not all(PATH_PART.fullmatch(p) and ".." not in p for p in parts):
        raise ConnectorError(
            f"{operation}: 'project' is a project id or its path (group/app), not {project!r}"
        )
    return quote(project, safe="")


class _Call(ServiceCall):
    connector = NAME

    def __init__(self, session: Session, operation: str, args: Mapping[str, Any]) -> None:
        super().__init__(session, operation, args)
        self.project = self.within_arg("project")
        self.base = f"/projects/{project_segment(self.project, operation)}"
        self.headers = {"PRIVATE-TOKEN": token_of(session)}

    def get(self, path: str, source: str) -> Any:
        return request(
            self.session, "GET", self.base + path, source=source, headers=self.headers
        ).json()

    def send(self, method: str, path: str, body: Any, what: str) -> Mapping[str, Any]:
        data = request(
            self.session, method, self.base + path, source=what, body=body, headers=self.headers
        ).json()
        return data if isinstance(data, Mapping) else {}

    def pages(self, path: str, source: str, query: Mapping[str, Any], limit: int) -> Listed:
        return follow_pages(
            self.session, self.base + path, source=source, headers=self.headers,
            query={**query, "per_page": min(100, limit)},
            items_of=lambda data: list(data) if isinstance(data, list) else [],
            max_items=limit,
        )  # fmt: skip


def _user(user: Any) -> str:
    if isinstance(user, Mapping) and user.get("username"):
        return str(user["username"])
    return "unknown"


def _get_issue(call: _Call) -> Result:
    iid = call.number("iid")
    source = call.source(iid=iid)
    issue = record_of(call.get(f"/issues/{iid}", source), call.session, source, "issue", "iid")
    labels = [str(label) for label in issue.get("labels") or []]
    assignees = [_user(a) for a in issue.get("assignees") or []]
    description = issue.get("description") or ""
    lines = [
        f"issue {call.project}#{iid}: {issue.get('title')} ({issue.get('state')})",
        f"by {_user(issue.get('author'))} · labels: {said(labels)} · assignees: "
        f"{said(assignees)} · comments: {issue.get('user_notes_count', 0)}",
        f"created {issue.get('created_at')}, updated {issue.get('updated_at')}"
        + (f", closed {issue['closed_at']}" if issue.get("closed_at") else ""),
        str(issue.get("web_url") or ""),
        "",
        shorten(description) if description.strip() else "(no description)",
    ]
    data = {
        "iid": iid, "title": issue.get("title"), "state": issue.get("state"),
        "description": description, "labels": labels, "assignees": assignees,
        "author": _user(issue.get("author")), "url": issue.get("web_url"),
    }  # fmt: skip
    return Result("\n".join(lines).strip(), data)


def _get_merge_request(call: _Call) -> Result:
    iid = call.number("iid")
    source = call.source(iid=iid)
    merge = record_of(
        call.get(f"/merge_requests/{iid}", source), call.session, source, "merge request", "iid"
    )
    pipeline = (
        merge.get("head_pipeline") if isinstance(merge.get("head_pipeline"), Mapping) else None
    )
    status = merge.get("detailed_merge_status") or merge.get("merge_status")
    description = merge.get("description") or ""
    lines = [
        f"merge request {call.project}!{iid}: {merge.get('title')} ({merge.get('state')}"
        + (", draft)" if merge.get("draft") else ")"),
        f"from {merge.get('source_branch')} ({short_sha(merge.get('sha'))}) into "
        f"{merge.get('target_branch')} · by {_user(merge.get('author'))}",
        f"merge status: {said(status, 'unknown')} · conflicts: "
        f"{'yes' if merge.get('has_conflicts') else 'no'} · head pipeline: "
        + (f"{pipeline.get('id')} ({pipeline.get('status')})" if pipeline else "none"),
        str(merge.get("web_url") or ""),
        "",
        shorten(description) if description.strip() else "(no description)",
    ]
    data = {
        "iid": iid, "title": merge.get("title"), "state": merge.get("state"),
        "description": description, "source_branch": merge.get("source_branch"),
        "target_branch": merge.get("target_branch"), "sha": merge.get("sha"),
        "merge_status": status, "url": merge.get("web_url"),
        "head_pipeline": {"id": pipeline.get("id"), "status": pipeline.get("status")}
        if pipeline else None,
    }  # fmt: skip
    return Result("\n".join(lines).strip(), data)


def _outcome(status: Any) -> str:
    return str(status) if status in FINISHED else f"not finished ({status})"


def _pipeline_line(pipeline: Mapping[str, Any]) -> str:
    return (
        f"pipeline {pipeline.get('id')} · {pipeline.get('source')} on {pipeline.get('ref')} · "
        f"{short_sha(pipeline.get('sha'))} · {_outcome(pipeline.get('status'))} · "
        f"{pipeline.get('created_at')}"
    )


def _list_pipelines(call: _Call) -> Result:
    query: dict[str, Any] = {}
    ref = optional_text(call.args, "ref", call.operation, REF, "a branch or tag name")
    if ref is not None:
        query["ref"] = ref
    status = one_of(call.args, "status", call.operation, PIPELINE_STATUSES)
    if status:
        query["status"] = status
    listed = call.pages("/pipelines", call.source(), query, PIPELINES_SHOWN)
    pipelines = [p for p in listed.items if isinstance(p, Mapping)]
    data = {
        "pipelines": [
            {"id": p.get("id"), "ref": p.get("ref"), "sha": p.get("sha"),
             "status": p.get("status"), "finished": p.get("status") in FINISHED,
             "url": p.get("web_url")}
            for p in pipelines
        ],
        "more": listed.more,
    }  # fmt: skip
    lines = [_pipeline_line(p) for p in pipelines]
    return Result(newest_first(f"pipelines of {call.project}", query, lines, listed.more), data)


def _jobs(call: _Call, pipeline_id: int) -> Listed:
    source = record(NAME, "list_pipeline_jobs",
                    {"project": call.project, "pipeline_id": pipeline_id})  # fmt: skip
    return call.pages(f"/pipelines/{pipeline_id}/jobs", source, {}, 200)


def _job_line(job: Mapping[str, Any]) -> str:
    reason = f" ({job['failure_reason']})" if job.get("failure_reason") else ""
    allowed = " (allowed to fail)" if job.get("allow_failure") else ""
    return (
        f"{job.get('name')} (job {job.get('id')}, stage {job.get('stage')}): "
        f"{_outcome(job.get('status'))}{reason}{allowed}"
    )


def _trace(call: _Call, job_id: int) -> Answer:
    source = record(NAME, "get_job_log", {"project": call.project, "job_id": job_id})
    return request(
        call.session, "GET", f"{call.base}/jobs/{job_id}/trace", source=source,
        headers={**call.headers, "Accept": "text/plain"},
    )  # fmt: skip


def _get_pipeline(call: _Call) -> Result:
    pipeline_id = call.number("pipeline_id")
    source = call.source(pipeline_id=pipeline_id)
    pipeline = record_of(
        call.get(f"/pipelines/{pipeline_id}", source), call.session, source, "pipeline", "id"
    )
    status = pipeline.get("status")
    lines = [
        f"pipeline {pipeline_id} of {call.project}: {pipeline.get('source')} on "
        f"{pipeline.get('ref')} ({short_sha(pipeline.get('sha'))})",
        str(pipeline.get("web_url") or ""),
    ]
    data: dict[str, Any] = {
        "id": pipeline_id, "status": status, "finished": status in FINISHED,
        "ref": pipeline.get("ref"), "sha": pipeline.get("sha"), "url": pipeline.get("web_url"),
    }  # fmt: skip
    if status not in FINISHED:
        lines.insert(1, f"not finished: status {status}; no result yet")
        return Result("\n".join(lines), data)
    lines.insert(1, f"finished: status {status}, duration {said(pipeline.get('duration'))} s")
    if pipeline.get("yaml_errors"):
        lines.append(f"configuration errors: {pipeline['yaml_errors']}")
    if status != "failed":
        return Result("\n".join(lines), data)
    jobs = _jobs(call, pipeline_id)
    failing = [
        j for j in jobs.items
        if isinstance(j, Mapping) and j.get("status") == "failed" and not j.get("allow_failure")
    ]  # fmt: skip
    data["failing_jobs"] = [
        {"id": j.get("id"), "name": j.get("name"), "stage": j.get("stage"),
         "failure_reason": j.get("failure_reason")}
        for j in failing
    ]  # fmt: skip
    add_failing_jobs(
        lines, jobs, list(zip(failing, data["failing_jobs"], strict=True)),
        said_as="failed jobs", line=_job_line, log="trace", read=functools.partial(_trace, call),
    )  # fmt: skip
    return Result("\n".join(lines), data)


def _list_pipeline_jobs(call: _Call) -> Result:
    pipeline_id = call.number("pipeline_id")
    listed = _jobs(call, pipeline_id)
    jobs = [j for j in listed.items if isinstance(j, Mapping)]
    head = f"jobs of pipeline {pipeline_id} of {call.project}: {len(jobs)}"
    body = listing([_job_line(j) for j in jobs], listed.more, "none: the list is empty")
    data = {
        "jobs": [
            {"id": j.get("id"), "name": j.get("name"), "stage": j.get("stage"),
             "status": j.get("status"), "allow_failure": bool(j.get("allow_failure"))}
            for j in jobs
        ],
        "more": listed.more,
    }  # fmt: skip
    return Result(f"{head}\n{body}", data)


def _get_job_log(call: _Call) -> Result:
    job_id = call.number("job_id")
    answer = _trace(call, job_id)
    return excerpt_result(f"trace of job {job_id} of {call.project}", answer, job_id=job_id)


def _create_issue(call: _Call) -> Result:
    body: dict[str, Any] = {"title": text(call.args, "title", call.operation)}
    description = optional_text(call.args, "description", call.operation)
    if description:
        body["description"] = description
    made = call.send("POST", "/issues", body, f"project {call.project}")
    return Result(
        f"opened issue {call.project}#{made.get('iid')}: {made.get('web_url')}",
        {"iid": made.get("iid"), "url": made.get("web_url")},
    )


def _comment_issue(call: _Call) -> Result:
    iid = call.number("iid")
    note = call.send(
        "POST", f"/issues/{iid}/notes", {"body": text(call.args, "body", call.operation)},
        f"issue {call.project}#{iid}",
    )  # fmt: skip
    return Result(
        f"commented on {call.project}#{iid} (note {note.get('id')})", {"id": note.get("id")}
    )


def _open_merge_request(call: _Call) -> Result:
    body: dict[str, Any] = {
        "source_branch": text(call.args, "source_branch", call.operation),
        "target_branch": text(call.args, "target_branch", call.operation),
        "title": text(call.args, "title", call.operation),
    }
    description = optional_text(call.args, "description", call.operation)
    if description:
        body["description"] = description
    made = call.send("POST", "/merge_requests", body, f"project {call.project}")
    return Result(
        f"opened merge request {call.project}!{made.get('iid')} from {body['source_branch']} "
        f"into {body['target_branch']}: {made.get('web_url')}",
        {"iid": made.get("iid"), "url": made.get("web_url")},
    )


def _merge_merge_request(call: _Call) -> Result:
    iid = call.number("iid")
    done = call.send(
        "PUT", f"/merge_requests/{iid}/merge", None, f"merge request {call.project}!{iid}"
    )
    state = done.get("state")
    if state != "merged":
        return Result(
            f"merge request {call.project}!{iid} is {said(state, 'in an unknown state')}, not "
            f"merged yet (merge status: {said(done.get('detailed_merge_status'), 'unknown')})",
            {"merged": False, "state": state},
        )
    commit = done.get("merge_commit_sha") or done.get("squash_commit_sha") or done.get("sha")
    return Result(
        f"merged merge request {call.project}!{iid} (commit {short_sha(commit)})",
        {"merged": True, "sha": commit},
    )


class GitLabConnector(ServiceConnector):
    name = NAME
    call_class = _Call
    handlers = by_operation(
        _get_issue, _get_merge_request, _list_pipelines, _get_pipeline, _list_pipeline_jobs,
        _get_job_log, _create_issue, _comment_issue, _open_merge_request, _merge_merge_request
    )  # fmt: skip
