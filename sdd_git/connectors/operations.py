"""Every connector operation, classified in one table: read (inside the boundary, no stop), act
(as the person: a stop naming the action), draft (kept for the person to send), or forbidden
(rejected before it runs, by any route, even when always allowed).

The table is data, tested as data (as the guard's policy table is). Beyond the named operations,
`classify` applies rules to every call of every connector, an MCP server's or a plug-in's too:
whatever accepts a spec, writes a QA result, makes a release, moves a stage or makes a change
pack is the person's, whatever the service calls it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sdd_git.connectors.base import ACT, DRAFT, FORBIDDEN, READ, Operation

_RELEASE = "a release is the person's (sdd release)"
_O = Operation

TABLE: dict[str, dict[str, Operation]] = {
    "github": {
        o.name: o
        for o in (
            _O("get_issue", READ, "read issue {repo}#{number}", ("repo", "number"),
               record="issue {repo}#{number}"),
            _O("list_issues", READ, "list the issues of {repo}", ("repo",), ("state", "labels"),
               record="issues of {repo}"),
            _O("get_pull_request", READ, "read pull request {repo}#{number}", ("repo", "number"),
               record="pull request {repo}#{number}"),
            _O("list_workflow_runs", READ, "list the Actions runs of {repo}", ("repo",),
               ("branch", "status", "event"), record="Actions runs of {repo}"),
            _O("get_workflow_run", READ, "read Actions run {run_id} of {repo}",
               ("repo", "run_id"), record="Actions run {run_id} of {repo}"),
            _O("list_run_jobs", READ, "list the jobs of Actions run {run_id} of {repo}",
               ("repo", "run_id"), record="jobs of Actions run {run_id} of {repo}"),
            _O("get_job_log", READ, "read the log of Actions job {job_id} of {repo}",
               ("repo", "job_id"), record="log of Actions job {job_id} of {repo}"),
            _O("create_issue", ACT, "open an issue in {repo} titled {title!r}",
               ("repo", "title"), ("body", "labels")),
            _O("comment_issue", ACT, "comment on {repo}#{number}", ("repo", "number", "body")),
            _O("open_pull_request", ACT, "open a pull request in {repo} from {head} into {base}",
               ("repo", "title", "head", "base"), ("body",)),
            _O("merge_pull_request", ACT, "merge pull request {repo}#{number}",
               ("repo", "number"), ("merge_method",)),
            _O("rerun_workflow", ACT, "run Actions run {run_id} of {repo} again",
               ("repo", "run_id")),
            _O("create_release", FORBIDDEN, "make release {tag_name} of {repo}",
               ("repo", "tag_name"), ("name", "body"), why=_RELEASE),
        )
    },
    "gitlab": {
        o.name: o
        for o in (
            _O("get_issue", READ, "read issue {project}#{iid}", ("project", "iid"),
               record="issue {project}#{iid}"),
            _O("get_merge_request", READ, "read merge request {project}!{iid}",
               ("project", "iid"), record="merge request {project}!{iid}"),
            _O("list_pipelines", READ, "list the pipelines of {project}", ("project",),
               ("ref", "status"), record="pipelines of {project}"),
            _O("get_pipeline", READ, "read pipeline {pipeline_id} of {project}",
               ("project", "pipeline_id"), record="pipeline {pipeline_id} of {project}"),
            _O("list_pipeline_jobs", READ, "list the jobs of pipeline {pipeline_id}",
               ("project", "pipeline_id"), record="jobs of pipeline {pipeline_id} of {project}"),
            _O("get_job_log", READ, "read the log of job {job_id} of {project}",
               ("project", "job_id"), record="log of job {job_id} of {project}"),
            _O("create_issue", ACT, "open an issue in {project} titled {title!r}",
               ("project", "title"), ("description",)),
            _O("comment_issue", ACT, "comment on {project}#{iid}", ("project", "iid", "body")),
            _O("open_merge_request", ACT,
               "open a merge request in {project} from {source_branch} into {target_branch}",
               ("project", "title", "source_branch", "target_branch"), ("description",)),
            _O("merge_merge_request", ACT, "merge merge request {project}!{iid}",
               ("project", "iid")),
            _O("create_release", FORBIDDEN, "make release {tag_name} of {project}",
               ("project", "tag_name"), why=_RELEASE),
        )
    },
    "jenkins": {
        o.name: o
        for o in (
            _O("get_build", READ, "read build {number} of job {job}", ("job", "number"),
               record="build {number} of Jenkins job {job}"),
            _O("get_build_log", READ, "read the console log of build {number} of job {job}",
               ("job", "number"), record="console log of build {number} of Jenkins job {job}"),
            _O("get_test_report", READ, "read the test report of build {number} of job {job}",
               ("job", "number"), record="test report of build {number} of Jenkins job {job}"),
            _O("trigger_build", ACT, "start Jenkins job {job}", ("job",), ("parameters",)),
        )
    },
    "artifactory": {
        o.name: o
        for o in (
            _O("get_item_info", READ, "read the artifact {repo}/{path}", ("repo", "path"),
               record="artifact {repo}/{path}"),
            _O("get_build_info", READ, "read build {build_name} {build_number}",
               ("build_name", "build_number"), record="build {build_name} {build_number}"),
            _O("promote_build", ACT,
               "promote build {build_name} {build_number} to {target_repo}",
               ("build_name", "build_number", "target_repo"),
               ("status", "comment", "copy", "source_repo")),
        )
    },
    "jira": {
        o.name: o
        for o in (
            _O("get_issue", READ, "read issue {key}", ("key",), record="issue {key}"),
            _O("search", READ, "search issues: {jql}", ("jql",), ("max_results",),
               record="issues matching {jql}"),
            _O("get_transitions", READ, "list the transitions of {key}", ("key",),
               record="transitions of {key}"),
            _O("create_issue", ACT, "open an issue in project {project} titled {summary!r}",
               ("project", "summary"), ("description", "issuetype")),
            _O("comment_issue", ACT, "comment on {key}", ("key", "body")),
            _O("update_issue", ACT, "change the fields {fields} of {key}", ("key", "fields")),
            _O("transition_issue", ACT, "move {key} to {transition}", ("key", "transition")),
        )
    },
    "aha": {
        o.name: o
        for o in (
            _O("get_feature", READ, "read feature {id}", ("id",), record="Aha! feature {id}"),
            _O("update_feature", ACT, "change the fields {fields} of feature {id}",
               ("id", "fields")),
            _O("comment_feature", ACT, "comment on feature {id}", ("id", "body")),
        )
    },
    "asana": {
        o.name: o
        for o in (
            _O("get_task", READ, "read task {task}", ("task",), record="Asana task {task}"),
            _O("create_task", ACT, "make a task {name!r} in project {project}",
               ("project", "name"), ("notes",)),
            _O("comment_task", ACT, "comment on task {task}", ("task", "text")),
            _O("update_task", ACT, "change the fields {fields} of task {task}",
               ("task", "fields")),
        )
    },
    "azure-devops": {
        o.name: o
        for o in (
            _O("get_work_item", READ, "read work item {id} of {project}", ("project", "id"),
               record="work item {id} of {project}"),
            _O("get_build", READ, "read build {build_id} of {project}", ("project", "build_id"),
               record="build {build_id} of {project}"),
            _O("get_build_log", READ, "read log {log_id} of build {build_id} of {project}",
               ("project", "build_id", "log_id"),
               record="log {log_id} of build {build_id} of {project}"),
            _O("comment_work_item", ACT, "comment on work item {id} of {project}",
               ("project", "id", "text")),
            _O("update_work_item", ACT, "change the fields {fields} of work item {id}",
               ("project", "id", "fields")),
        )
    },
    "slack": {
        o.name: o
        for o in (
            _O("post_message", DRAFT, "draft a message to {channel}", ("channel", "text")),
            _O("read_channel", READ, "read the latest messages of {channel}", ("channel",),
               ("limit",), record="messages of Slack channel {channel}"),
        )
    },
    "teams": {
        o.name: o
        for o in (
            _O("post_message", DRAFT, "draft a message to {channel}", ("channel", "text")),
        )
    },
}  # fmt: skip

# sdd's stages and the person's verdicts, as trackers name them: moving a tracker into one of
# these, or setting a field that mirrors one, would make the tracker hold her progress.
_STAGE_WORDS = re.compile(
    r"\b(accept(ed|ance)?|approved?|sign(ed)?[ -]?off|qa[ _-]?(pass(ed)?|fail(ed)?|ok|done)|"
    r"verified|released?|done|complete[d]?|reading|build|verify|stage)\b",
    re.IGNORECASE,
)
# Argument keys whose value moves a status.
_STATUS_KEYS = re.compile(r"(transition|status|state|stage|resolution|column|phase)", re.I)
# A field (a key of the arguments) that mirrors a stage, an acceptance or a QA result.
# (A field named `stage` is checked by its value: see _STATUS_KEYS; a Jenkins STAGE=deploy is not
# a stage of sdd.)
_STAGE_FIELDS = re.compile(r"(^|[^a-z])qa([^a-z]|$)|accept|verdict|sign.?off", re.I)
# An operation whose name makes a release, accepts, records QA or moves a stage, however named.
_FORBIDDEN_NAMES = re.compile(
    r"(create|publish|generate|make|draft)_?release|release_create|"
    r"accept|approve_spec|qa_result|record_qa|advance|next_stage|complete_change|change_pack",
    re.I,
)
# A person command of sdd, passed as a parameter to a CI job or anywhere else.
_SDD_COMMAND = re.compile(
    r"\bsdd(\s+-C\s+\S+)?\s+(next|complete|accept|qa|release|decision|change\s+new|allow|deny)\b"
)


@dataclass(frozen=True)
class Verdict:
    kind: str  # read, act, draft or forbidden
    operation: Operation | None  # None: not in the table (an MCP tool, a plug-in's operation)
    why: str = ""  # for forbidden: in plain words


def _texts(value: Any, key: str = "") -> list[tuple[str, str]]:
    """(key, text) for every string inside the arguments, however deep."""
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, Mapping):
        return [pair for k, v in value.items() for pair in _texts(v, str(k))] + [
            (str(k), str(k)) for k in value
        ]
    if isinstance(value, list | tuple):
        return [pair for item in value for pair in _texts(item, key)]
    if value is None:
        return []
    return [(key, str(value))]


def forbidden_reason(operation: str, args: Mapping[str, Any]) -> str | None:
    """Why this call is the person's by any route, or None. Applies to every connector."""
    if _FORBIDDEN_NAMES.search(operation):
        return f"'{operation}' accepts, records QA, makes a release or moves a stage: the person's"
    for key, text in _texts(args):
        command = _SDD_COMMAND.search(text)
        if command is not None:
            return f"an argument runs a person command of sdd ({command[0]!r})"
        if key != text and _STATUS_KEYS.search(key) and _STAGE_WORDS.search(text):
            return (
                f"'{key}: {text[:60]}' moves a status that mirrors a stage or her verdict; a "
                "tracker may show status, never hold a change's progress"
            )
        if key == text and _STAGE_FIELDS.search(text):  # a field named after a stage
            return f"the field '{text[:60]}' mirrors a stage or her verdict; trackers never hold it"
    return None


def classify(
    connector: str, operation: str, args: Mapping[str, Any], declared_reads: tuple[str, ...] = ()
) -> Verdict:
    """The class of one call. The table's word is final for its operations, except that the
    rules of `forbidden_reason` can only make a call forbidden, never less. An operation the
    table does not know (an MCP tool, a plug-in's) is an act, so it stops, unless the person's
    config declares it a read (`declared_reads`); its own annotations are hints, never rules."""
    known = TABLE.get(connector, {}).get(operation)
    # A read of the table moves nothing: its arguments (`status: completed` filters a list)
    # are not checked as a status change. Its name still is, as every other call's.
    reason = forbidden_reason(operation, {} if known is not None and known.kind == READ else args)
    if known is not None and known.kind == FORBIDDEN:
        return Verdict(FORBIDDEN, known, known.why)
    if reason is not None:
        return Verdict(FORBIDDEN, known, reason)
    if known is not None:
        return Verdict(known.kind, known)
    return Verdict(READ if operation in declared_reads else ACT, None)
