"""GitHub, through its REST API (https://docs.github.com/en/rest), GitHub Actions included.

    connectors:
      github: {token_env: GITHUB_TOKEN, repo: acme/app}   # base_url: https://api.github.com

Every request carries `Authorization: Bearer TOKEN`, `Accept: application/vnd.github+json` and
`X-GitHub-Api-Version: 2022-11-28`. Reads: an issue, the issues of a repository (Link pages), a
pull request, Actions runs, one run (with its failing jobs and their log excerpts), the jobs of
a run, a job's log. Acts: open an issue, comment, open and merge a pull request, run a run
again. A release is the person's: `create_release` is never sent.

A job's log answers 302 with a download URL (a signed, short-lived address on another host).
It is followed once: with the token only when it stays on the API's own host (as the loopback
server in the tests does); to another host only over https (or the API's own scheme) and
without the token, since the signature in the URL is the permission."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sdd_git.connectors.base import (
    ConnectorError,
    Result,
    Session,
    Unavailable,
)
from sdd_git.connectors.builtin.buildlog import add_failing_jobs, excerpt_result
from sdd_git.connectors.builtin.hostkit import (
    Listed,
    ServiceCall,
    ServiceConnector,
    by_operation,
    follow_pages,
    items,
    listing,
    newest_first,
    one_of,
    optional_text,
    record,
    record_of,
    said,
    segment,
    short_sha,
    shorten,
    text,
    token_of,
)
from sdd_git.connectors.http import Answer, request

NAME = "github"
API_VERSION = "2022-11-28"
OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
REPO_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
BRANCH = re.compile(r"[^\s~^:?*\[\\]{1,255}")
FAILED = ("failure", "timed_out", "startup_failure")
RUN_STATUSES = ("completed", "action_required", "cancelled", "failure", "neutral", "skipped",
                "stale", "success", "timed_out", "in_progress", "queued", "requested",
                "waiting", "pending")  # fmt: skip
RUNS_SHOWN = 30


class _Call(ServiceCall):
    """One call: its checked repository, and requests signed for GitHub."""

    connector = NAME

    def __init__(self, session: Session, operation: str, args: Mapping[str, Any]) -> None:
        super().__init__(session, operation, args)
        repo = self.within_arg("repo")
        owner, _, name = repo.partition("/")
        if not OWNER.fullmatch(owner) or not REPO_NAME.fullmatch(name) or name in (".", ".."):
            raise ConnectorError(f"{operation}: 'repo' is owner/name (acme/app), not {repo!r}")
        self.repo = repo
        self.base = f"/repos/{segment(owner, 'an owner')}/{segment(name, 'a repository name')}"
        self.headers = {
            "Authorization": f"Bearer {token_of(session)}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
        }

    def get(self, path: str, source: str, query: Mapping[str, Any] | None = None) -> Any:
        return request(
            self.session, "GET", self.base + path, source=source, query=query,
            headers=self.headers,
        ).json()  # fmt: skip

    def send(self, method: str, path: str, body: Any, what: str) -> Answer:
        return request(
            self.session, method, self.base + path, source=what, body=body, headers=self.headers
        )

    def pages(
        self, path: str, source: str, query: Mapping[str, Any], key: str | None, limit: int
    ) -> Listed:
        def items_of(data: Any) -> list[Any]:
            found = data.get(key) if key and isinstance(data, Mapping) else data
            return list(found) if isinstance(found, list) else []

        return follow_pages(
            self.session, self.base + path, source=source, headers=self.headers,
            query={**query, "per_page": min(100, limit)}, items_of=items_of, max_items=limit,
        )  # fmt: skip


# -- reads ---------------------------------------------------------------------------------------


def _login(user: Any) -> str:
    return str(user.get("login")) if isinstance(user, Mapping) and user.get("login") else "unknown"


def _names(items: Any, key: str) -> list[str]:
    if not isinstance(items, list):
        return []
    return [str(i.get(key)) for i in items if isinstance(i, Mapping) and i.get(key)]


def _get_issue(call: _Call) -> Result:
    number = call.number("number")
    source = call.source(number=number)
    issue = record_of(
        call.get(f"/issues/{number}", source), call.session, source, "issue", "number"
    )
    labels = _names(issue.get("labels"), "name")
    assignees = [_login(a) for a in issue.get("assignees") or []]
    kind = "pull request" if issue.get("pull_request") else "issue"
    body = issue.get("body") or ""
    lines = [
        f"{kind} {call.repo}#{number}: {issue.get('title')} ({issue.get('state')})",
        f"by {_login(issue.get('user'))} · labels: {said(labels)} · assignees: "
        f"{said(assignees)} · comments: {issue.get('comments', 0)}",
        f"created {issue.get('created_at')}, updated {issue.get('updated_at')}"
        + (f", closed {issue['closed_at']}" if issue.get("closed_at") else ""),
        str(issue.get("html_url") or ""),
        "",
        shorten(body) if body.strip() else "(no description)",
    ]
    data = {
        "number": number, "title": issue.get("title"), "state": issue.get("state"),
        "body": body, "labels": labels, "assignees": assignees,
        "author": _login(issue.get("user")), "comments": issue.get("comments", 0),
        "url": issue.get("html_url"), "pull_request": bool(issue.get("pull_request")),
    }  # fmt: skip
    return Result("\n".join(lines).strip(), data)


def _list_issues(call: _Call) -> Result:
    state = one_of(call.args, "state", call.operation, ("open", "closed", "all")) or "open"
    labels = call.args.get("labels")
    if isinstance(labels, list | tuple):
        labels = ",".join(str(label) for label in labels)
    query: dict[str, Any] = {"state": state}
    if labels:
        query["labels"] = str(labels)
    listed = call.pages("/issues", call.source(), query, None, 100)
    issues = [
        {"number": i.get("number"), "title": i.get("title"), "state": i.get("state"),
         "labels": _names(i.get("labels"), "name"), "pull_request": bool(i.get("pull_request"))}
        for i in listed.items if isinstance(i, Mapping)
    ]  # fmt: skip
    lines = [
        f"#{i['number']} {i['title']} ({i['state']})"
        + (f" [{said(i['labels'])}]" if i["labels"] else "")
        + (" (pull request)" if i["pull_request"] else "")
        for i in issues
    ]
    filters = f"state {state}" + (f", labels {labels}" if labels else "")
    head = f"issues of {call.repo} ({filters}): {len(issues)}{'+' if listed.more else ''}"
    body = listing(lines, listed.more, "none: the list is empty")
    return Result(f"{head}\n{body}", {"issues": issues, "more": listed.more})


def _get_pull_request(call: _Call) -> Result:
    number = call.number("number")
    source = call.source(number=number)
    pull: Any = record_of(
        call.get(f"/pulls/{number}", source), call.session, source, "pull request", "number"
    )
    head = pull.get("head") if isinstance(pull.get("head"), Mapping) else {}
    base = pull.get("base") if isinstance(pull.get("base"), Mapping) else {}
    mergeable = pull.get("mergeable")
    can_merge = "not computed yet" if mergeable is None else ("yes" if mergeable else "no")
    state = "merged" if pull.get("merged") else str(pull.get("state"))
    body = pull.get("body") or ""
    lines = [
        f"pull request {call.repo}#{number}: {pull.get('title')} ({state}"
        + (", draft)" if pull.get("draft") else ")"),
        f"from {head.get('ref')} ({short_sha(head.get('sha'))}) into {base.get('ref')} · by "
        f"{_login(pull.get('user'))}",
        f"mergeable: {can_merge} (state: {said(pull.get('mergeable_state'), 'unknown')}) · "
        f"commits: {pull.get('commits', 'unknown')} · changed files: "
        f"{pull.get('changed_files', 'unknown')}",
        str(pull.get("html_url") or ""),
        "",
        shorten(body) if body.strip() else "(no description)",
    ]
    data = {
        "number": number, "title": pull.get("title"), "state": state, "body": body,
        "draft": bool(pull.get("draft")), "head": head.get("ref"), "head_sha": head.get("sha"),
        "base": base.get("ref"), "mergeable": mergeable, "merged": bool(pull.get("merged")),
        "url": pull.get("html_url"),
    }  # fmt: skip
    return Result("\n".join(lines).strip(), data)


def _run_line(run: Mapping[str, Any]) -> str:
    outcome = (
        f"{run.get('status')}/{run.get('conclusion')}"
        if run.get("status") == "completed"
        else f"not finished ({run.get('status')})"
    )
    return (
        f"run {run.get('id')} · {run.get('name')} #{run.get('run_number')} · {run.get('event')} "
        f"on {run.get('head_branch')} · {short_sha(run.get('head_sha'))} · {outcome} · "
        f"{run.get('created_at')}"
    )


def _list_workflow_runs(call: _Call) -> Result:
    query: dict[str, Any] = {}
    branch = optional_text(call.args, "branch", call.operation, BRANCH, "a branch name")
    if branch is not None:
        query["branch"] = branch
    status = one_of(call.args, "status", call.operation, RUN_STATUSES)
    if status:
        query["status"] = status
    event = optional_text(call.args, "event", call.operation)
    if event:
        query["event"] = event
    listed = call.pages("/actions/runs", call.source(), query, "workflow_runs", RUNS_SHOWN)
    runs = [r for r in listed.items if isinstance(r, Mapping)]
    what = f"Actions runs of {call.repo}"
    data = {"runs": [_run_data(r) for r in runs], "more": listed.more}
    return Result(newest_first(what, query, [_run_line(r) for r in runs], listed.more), data)


def _run_data(run: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": run.get("id"), "name": run.get("name"), "run_number": run.get("run_number"),
        "event": run.get("event"), "branch": run.get("head_branch"),
        "sha": run.get("head_sha"), "status": run.get("status"),
        "conclusion": run.get("conclusion"), "finished": run.get("status") == "completed",
        "url": run.get("html_url"), "created_at": run.get("created_at"),
    }  # fmt: skip


def _jobs(call: _Call, run_id: int, source: str) -> Listed:
    return call.pages(f"/actions/runs/{run_id}/jobs", source, {"filter": "latest"}, "jobs", 100)


def _failed_steps(job: Mapping[str, Any]) -> list[str]:
    return [
        str(s.get("name")) for s in items(job.get("steps"))
        if isinstance(s, Mapping) and s.get("conclusion") in FAILED
    ]  # fmt: skip


def _job_line(job: Mapping[str, Any]) -> str:
    outcome = (
        f"{job.get('conclusion')}"
        if job.get("status") == "completed"
        else f"not finished ({job.get('status')})"
    )
    failed = _failed_steps(job)
    steps = f" at step {', '.join(repr(s) for s in failed)}" if failed else ""
    return f"{job.get('name')} (job {job.get('id')}): {outcome}{steps}"


def _get_workflow_run(call: _Call) -> Result:
    run_id = call.number("run_id")
    source = call.source(run_id=run_id)
    run = record_of(call.get(f"/actions/runs/{run_id}", source), call.session, source, "run", "id")
    lines = [
        f"Actions run {run_id} of {call.repo}: {run.get('name')} #{run.get('run_number')} "
        f"(attempt {run.get('run_attempt', 1)}; {run.get('event')} on {run.get('head_branch')}, "
        f"{short_sha(run.get('head_sha'))})",
        f"title: {said(run.get('display_title'))}",
        f"{run.get('html_url') or ''}",
    ]
    data = _run_data(run)
    if run.get("status") != "completed":
        lines.insert(1, f"not finished: status {run.get('status')}; no conclusion yet")
        return Result("\n".join(lines), data)
    conclusion = run.get("conclusion")
    lines.insert(1, f"finished: status completed, conclusion {conclusion}")
    jobs = _jobs(call, run_id, f"jobs of Actions run {run_id} of {call.repo}")
    failing = [j for j in jobs.items if isinstance(j, Mapping) and j.get("conclusion") in FAILED]
    data["failing_jobs"] = [
        {"id": j.get("id"), "name": j.get("name"), "conclusion": j.get("conclusion"),
         "failed_steps": _failed_steps(j)}
        for j in failing
    ]  # fmt: skip
    if conclusion in FAILED or failing:
        add_failing_jobs(
            lines, jobs, list(zip(failing, data["failing_jobs"], strict=True)),
            said_as="failing jobs", line=_job_line, log="log",
            read=functools.partial(_job_log, call),
        )  # fmt: skip
    return Result("\n".join(lines), data)


def _list_run_jobs(call: _Call) -> Result:
    run_id = call.number("run_id")
    listed = _jobs(call, run_id, call.source(run_id=run_id))
    jobs = [j for j in listed.items if isinstance(j, Mapping)]
    head = f"jobs of Actions run {run_id} of {call.repo} (latest attempt): {len(jobs)}"
    body = listing([_job_line(j) for j in jobs], listed.more, "none: the list is empty")
    data = {
        "jobs": [
            {"id": j.get("id"), "name": j.get("name"), "status": j.get("status"),
             "conclusion": j.get("conclusion"), "failed_steps": _failed_steps(j)}
            for j in jobs
        ],
        "more": listed.more,
    }  # fmt: skip
    return Result(f"{head}\n{body}", data)


def _job_log(call: _Call, job_id: int) -> Answer:
    source = record(NAME, "get_job_log", {"repo": call.repo, "job_id": job_id})
    answer = request(
        call.session, "GET", f"{call.base}/actions/jobs/{job_id}/logs", source=source,
        headers=call.headers, redirect_ok=True,
    )  # fmt: skip
    if not 300 <= answer.status < 400:
        return answer  # a server that answers with the log itself
    return _download(call, answer.headers["location"], source)


def _download(call: _Call, location: str, source: str) -> Answer:
    """The log at a redirect's Location, once. The token goes only to the API's own host."""
    api = urlsplit(call.session.base_url)
    target = urlsplit(location)
    if not target.netloc and not target.scheme:  # a relative Location
        return request(call.session, "GET", location, source=source, headers=call.headers)
    if (target.scheme, target.netloc) == (api.scheme, api.netloc):
        return request(call.session, "GET", location, source=source, headers=call.headers)
    if target.scheme != "https" and target.scheme != api.scheme:
        raise Unavailable(f"{call.session.name}: the log's download address is not https")
    where = _reach(target.hostname or "")
    if where != "public" and where != _reach(api.hostname or ""):
        # A service sending sdd to this machine or its network (a cloud's metadata address,
        # an internal server) would have it read what no role may, and hand it to the role.
        # Only a GitHub Enterprise on that same kind of address may send it there.
        raise Unavailable(
            f"{call.session.name}: the log's download address is on this machine or its "
            "private network; it was not followed"
        )
    origin = urlunsplit((target.scheme, target.netloc, "", "", ""))
    unsigned = replace(call.session, base_url=origin, token=None)
    return request(unsigned, "GET", location, source=source, headers={"Accept": "text/plain"})


def _reach(host: str) -> str:
    """Where `host` is: this machine, the link (a cloud's metadata address), a private network,
    another address that is not public, or public (any name, as far as sdd can tell unresolved)."""
    import ipaddress

    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return "loopback"
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return "public"
    for kind in ("loopback", "link_local", "private"):
        if getattr(address, f"is_{kind}"):
            return kind
    return "public" if address.is_global else "reserved"


def _get_job_log(call: _Call) -> Result:
    job_id = call.number("job_id")
    answer = _job_log(call, job_id)
    return excerpt_result(f"log of Actions job {job_id} of {call.repo}", answer, job_id=job_id)


# -- acts ----------------------------------------------------------------------------------------


def _created(answer: Answer) -> Mapping[str, Any]:
    data = answer.json()
    return data if isinstance(data, Mapping) else {}


def _create_issue(call: _Call) -> Result:
    body: dict[str, Any] = {"title": text(call.args, "title", call.operation)}
    description = optional_text(call.args, "body", call.operation)
    if description:
        body["body"] = description
    labels = call.args.get("labels")
    if labels:
        if isinstance(labels, str):
            labels = [part.strip() for part in labels.split(",") if part.strip()]
        if not isinstance(labels, list | tuple) or not all(isinstance(x, str) for x in labels):
            raise ConnectorError("create_issue: 'labels' is a list of label names")
        body["labels"] = list(labels)
    made = _created(call.send("POST", "/issues", body, f"repository {call.repo}"))
    return Result(
        f"opened issue {call.repo}#{made.get('number')}: {made.get('html_url')}",
        {"number": made.get("number"), "url": made.get("html_url")},
    )


def _comment_issue(call: _Call) -> Result:
    number = call.number("number")
    made = _created(
        call.send(
            "POST", f"/issues/{number}/comments", {"body": text(call.args, "body", call.operation)},
            f"issue {call.repo}#{number}",
        )
    )  # fmt: skip
    return Result(
        f"commented on {call.repo}#{number}: {made.get('html_url')}",
        {"id": made.get("id"), "url": made.get("html_url")},
    )


def _open_pull_request(call: _Call) -> Result:
    body: dict[str, Any] = {
        "title": text(call.args, "title", call.operation),
        "head": text(call.args, "head", call.operation),
        "base": text(call.args, "base", call.operation),
    }
    description = optional_text(call.args, "body", call.operation)
    if description:
        body["body"] = description
    made = _created(call.send("POST", "/pulls", body, f"repository {call.repo}"))
    return Result(
        f"opened pull request {call.repo}#{made.get('number')} from {body['head']} into "
        f"{body['base']}: {made.get('html_url')}",
        {"number": made.get("number"), "url": made.get("html_url")},
    )


def _merge_pull_request(call: _Call) -> Result:
    number = call.number("number")
    method = one_of(call.args, "merge_method", call.operation, ("merge", "squash", "rebase"))
    body = {"merge_method": method} if method else {}
    done = _created(
        call.send("PUT", f"/pulls/{number}/merge", body, f"pull request {call.repo}#{number}")
    )
    if not done.get("merged"):
        return Result(
            f"pull request {call.repo}#{number} was not merged: {said(done.get('message'))}",
            {"merged": False, "message": done.get("message")},
        )
    return Result(
        f"merged pull request {call.repo}#{number} (commit {short_sha(done.get('sha'))})",
        {"merged": True, "sha": done.get("sha"), "message": done.get("message")},
    )


def _rerun_workflow(call: _Call) -> Result:
    run_id = call.number("run_id")
    call.send("POST", f"/actions/runs/{run_id}/rerun", None, f"Actions run {run_id} of {call.repo}")
    return Result(f"Actions run {run_id} of {call.repo} was asked to run again", {"run_id": run_id})


class GitHubConnector(ServiceConnector):
    name = NAME
    call_class = _Call
    handlers = by_operation(
        _get_issue, _list_issues, _get_pull_request, _list_workflow_runs, _get_workflow_run,
        _list_run_jobs, _get_job_log, _create_issue, _comment_issue, _open_pull_request,
        _merge_pull_request, _rerun_workflow
    )  # fmt: skip
