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
from sdd_git.connectors.toolwords import folded, hers_by_words, name_says
from sdd_git.shellpolicy.decision import Decision, Verdict

_RELEASE = "a release is the person's (sdd release)"
_O = Operation


def _row(*operations: Operation) -> dict[str, Operation]:
    """A connector's row of the table: its operations by name."""
    return {o.name: o for o in operations}


TABLE: dict[str, dict[str, Operation]] = {
    "github": _row(
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
    ),
    "gitlab": _row(
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
    ),
    "jenkins": _row(
        _O("get_build", READ, "read build {number} of job {job}", ("job", "number"),
           record="build {number} of Jenkins job {job}"),
        _O("get_build_log", READ, "read the console log of build {number} of job {job}",
           ("job", "number"), record="console log of build {number} of Jenkins job {job}"),
        _O("get_test_report", READ, "read the test report of build {number} of job {job}",
           ("job", "number"), record="test report of build {number} of Jenkins job {job}"),
        _O("trigger_build", ACT, "start Jenkins job {job}", ("job",), ("parameters",)),
    ),
    "artifactory": _row(
        _O("get_item_info", READ, "read the artifact {repo}/{path}", ("repo", "path"),
           record="artifact {repo}/{path}"),
        _O("get_build_info", READ, "read build {build_name} {build_number}",
           ("build_name", "build_number"), record="build {build_name} {build_number}"),
        _O("promote_build", ACT,
           "promote build {build_name} {build_number} to {target_repo}",
           ("build_name", "build_number", "target_repo"),
           ("status", "comment", "copy", "source_repo")),
    ),
    "jira": _row(
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
    ),
    "aha": _row(
        _O("get_feature", READ, "read feature {id}", ("id",), record="Aha! feature {id}"),
        _O("update_feature", ACT, "change the fields {fields} of feature {id}",
           ("id", "fields")),
        _O("comment_feature", ACT, "comment on feature {id}", ("id", "body")),
    ),
    "asana": _row(
        _O("get_task", READ, "read task {task}", ("task",), record="Asana task {task}"),
        _O("create_task", ACT, "make a task {name!r} in project {project}",
           ("project", "name"), ("notes",)),
        _O("comment_task", ACT, "comment on task {task}", ("task", "text")),
        _O("update_task", ACT, "change the fields {fields} of task {task}",
           ("task", "fields")),
    ),
    "azure-devops": _row(
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
    ),
    "slack": _row(
        _O("post_message", DRAFT, "draft a message to {channel}", ("channel", "text")),
        _O("read_channel", READ, "read the latest messages of {channel}", ("channel",),
           ("limit",), record="messages of Slack channel {channel}"),
    ),
    "teams": _row(
        _O("post_message", DRAFT, "draft a message to {channel}", ("channel", "text")),
    ),
}  # fmt: skip

# sdd's stages and the person's verdicts, as trackers name them: moving a tracker into one of
# these, or setting a field that mirrors one, would make the tracker hold her progress.
_STAGE_WORDS = re.compile(
    r"\b(accept(ed|ance|s)?|approved?|sign(ed|s)?[\W_]*off|qa|pass(ed|es)?|fail(ed|s)?|tested|"
    r"qa[\W_]*(pass|fail|ok|done|approved?|green|red)\w*|"
    r"verified|released?|shipped|done|complete[ds]?|resolved|closed|reading|build|verify|stage)\b"
)
# A verdict, as a label or tag says it (a label "build" is ordinary; "qa passed" is hers).
_VERDICT_WORDS = re.compile(
    r"\b(accept(ed|ance)?|approved|sign(ed)?[\W_]*off|qa[\W_]*(pass(ed)?|fail(ed)?|ok|done)|"
    r"verified|released)\b"
)
# Argument keys whose value moves a status.
_STATUS_KEYS = re.compile(r"(transition|status|state|stage|resolution|column|phase)")
# Keys that only hold the value of the key above them ({"status": {"name": "Accepted"}}).
_VALUE_KEYS = frozenset(("name", "value", "id", "label", "title", "key", "text", "option",
                         "displayname", "to", "target"))  # fmt: skip
_LABEL_KEYS = re.compile(r"^(labels?|tags?)$")
# A flag that marks a record done or accepted (Asana's `completed: true`, `is_accepted: yes`).
_DONE_FLAGS = re.compile(
    r"^(is[\W_]*|mark(ed)?[\W_]*(as[\W_]*)?)?(complete[d]?|done|resolved|closed|accepted|approved|"
    r"verified|released|shipped|passed|signed[\W_]*off)$"
)
_TRUE = frozenset(("true", "yes", "y", "1", "on"))
# A field (a key of the arguments) that mirrors a stage, an acceptance or a QA result.
# (A field named `stage` is checked by its value: see _STATUS_KEYS; a Jenkins STAGE=deploy is not
# a stage of sdd.)
_STAGE_FIELDS = re.compile(r"(^|[^a-z])qa([^a-z]|$)|accept|verdict|sign.?off")
# What makes or changes a release: a verb and "release", in either order, however joined.
_RELEASE_VERBS = (
    r"create|publish|generate|make|draft|new|cut|ship|post|add|tag|do|perform|finali[sz]e|"
    r"update|edit|upsert|put|save|write|submit|set|prepare"
)
# An operation whose name makes a release, accepts, records QA or moves a stage, however named.
_FORBIDDEN_NAMES = re.compile(
    rf"({_RELEASE_VERBS})[\W_]*(?:(?:github|gitlab|git|a|the|new)[\W_]*)?releases?(?![a-z])|"
    rf"(?<![a-z])releases?[\W_]*({_RELEASE_VERBS})|"
    r"accept|approve[\W_]*spec|qa[\W_]*(result|pass|fail|verdict|sign)|record[\W_]*qa|verdict|"
    r"advance|next[\W_]*stage|"
    r"complete[\W_]*change|change[\W_]*pack|(?<![a-z])sdd[\W_]*(next|complete|accept|qa|"
    r"release|decision|send)(?![a-z])"
)
# The hidden commands (event-worker, network-node) are sdd's own, never a job's.
_PERSON_WORDS = (
    r"next|complete|accept|qa|release|decision|change\s+new|allow|deny|send"
    r"|event-worker|network-node"
)
# A person command of sdd, passed as a parameter to a CI job or anywhere else: `sdd`, its
# module, or its entry point, with any options before the command.
_SDD_COMMAND = re.compile(
    r"(?<![a-z0-9_.-])(sdd|sdd_git(?:\.__main__|\.cli\.main)?)"
    r"((\s+-c\s+\S+)|(\s+--?[a-z][\w-]*(=\S+)?))*"
    rf"\s+({_PERSON_WORDS})\b"
)
# sdd-complete as a job's name, SDD_CMD=complete as a parameter: the command in another shape.
_SDD_NAMED = re.compile(
    rf"(?<![a-z0-9])sdd[-_.]+({_PERSON_WORDS})(?![a-z])|"
    rf"(?<![a-z0-9])sdd\w*\s*[=:]\s*({_PERSON_WORDS})\b"
)
# What a shell strips or runs before the words it passes on: quotes, escapes, substitutions,
# and the programs that only pass their arguments on.
_SHELL_NOISE = re.compile(r"""['"\\`]|\$[({]|[)}]""")
_PASSERS = re.compile(
    r"(?<![\w-])(echo|printf|command|exec|env|builtin|eval|xargs|nohup|time|sudo|nice)(?![\w-])"
)
# Keys whose values are prose (a comment, a description): there a sentence may name sdd and
# "next" without running anything. Every other value (a CI parameter, a command, a job's name)
# that names sdd and one of its person commands anywhere is taken as running it, however the
# shell would have been made to put the two together (`x=sdd; $x complete`).
_PROSE_KEYS = frozenset(("body", "text", "description", "title", "summary", "notes", "comment",
                         "message", "name", "purpose", "content", "details", "query",
                         "jql"))  # fmt: skip
_SDD_WORD = re.compile(r"(?<![a-z0-9])sdd(_git)?(?![a-z0-9])")
_PERSON_WORD = re.compile(r"\b(next|complete|accept|qa|release|decision|allow|deny|send)\b")
# A tool that posts a message to a chat, however a server names it (post_message,
# slack_send_message, chat.postMessage, reply_in_thread, send_to_channel).
_CHAT_POST = re.compile(
    r"(post|send|write|reply|publish|say|add)[\W_]*(a[\W_]*|to[\W_]*)?(message|msg|chat|channel|"
    r"thread|dm)|chat[\W_]*post|(message|msg)[\W_]*(post|send)|reply[\W_]*(in|to)[\W_]*thread"
)
_CHAT_WHY = (
    "a role never posts to a chat; it drafts the message (post_message of the slack or teams "
    "connector) and the person sends it with sdd send"
)
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}[\s:]?){4,}")
_PATH_KEYS = re.compile(r"(path|url|uri|endpoint|route|resource)$")
_RELEASE_PATH = re.compile(r"/releases?(/|$|\?)")
_METHOD_KEYS = frozenset(("method", "verb", "http_method", "httpmethod"))


def _key_words(key: str) -> str:
    """A key as words: `qaResult` is `qa result`, `QA_Status` is `qa_status`."""
    return folded(re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key))


@dataclass(frozen=True)
class Classified(Decision):
    """A connector call's class, as the one decision: a read or a draft is allowed, an act asks
    the person, and what is hers is forbidden. `code` is the class, `message` why it is hers."""

    operation: Operation | None = None  # None: not in the table (an MCP tool, a plug-in's)

    @property
    def kind(self) -> str:
        return self.code  # read, act, draft or forbidden

    @property
    def why(self) -> str:
        return self.message


_VERDICTS = {READ: Verdict.ALLOW, DRAFT: Verdict.ALLOW, ACT: Verdict.ASK, FORBIDDEN: Verdict.FORBID}


def _classified(kind: str, operation: Operation | None, why: str = "") -> Classified:
    return Classified(kind, why, _VERDICTS[kind], operation=operation)


def _texts(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """(the keys leading to it, text) for every string inside the arguments, however deep; each
    key is also given as a text of its own (its path ends with itself)."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, Mapping):
        found: list[tuple[tuple[str, ...], str]] = []
        for k, v in value.items():
            found += [((*path, str(k)), str(k))]
            found += _texts(v, (*path, str(k)))
        return found
    if isinstance(value, list | tuple):
        return [pair for item in value for pair in _texts(item, path)]
    if value is None:
        return []
    return [(path, str(value))]


def _decoded(text: str) -> list[str]:
    """What `text` says once decoded: its percent-encoding, and every base64 or hex run in it
    that decodes to text (a CI parameter given as `c2RkIGNvbXBsZXRl` is `sdd complete`)."""
    import base64
    import binascii
    from urllib.parse import unquote_plus

    found = []
    if "%" in text or "+" in text:
        found.append(unquote_plus(text))
    runs = [m.group(0) for m in _BASE64.finditer(text)][:200]
    runs += [re.sub(r"[\s:]", "", m.group(0)) for m in _HEX.finditer(text)][:200]
    for run in runs:
        for decode in (
            lambda r: base64.b64decode(r + "=" * (-len(r) % 4), altchars=b"-_"),
            lambda r: base64.b64decode(r + "=" * (-len(r) % 4)),
            bytes.fromhex,
        ):
            try:
                raw = decode(run)
            except (binascii.Error, ValueError):
                continue
            words = raw.decode("utf-8", errors="ignore")
            if words and sum(c.isprintable() or c.isspace() for c in words) >= 0.9 * len(words):
                found.append(words)
    return found


def _runs_person_command(text: str, depth: int = 0) -> str | None:
    """The person command of sdd `text` runs or names, in any of the shapes above, or None."""
    plain = folded(text)
    shell = " ".join(_PASSERS.sub(" ", _SHELL_NOISE.sub("", plain.replace("\\\n", ""))).split())
    for form in (plain, shell):
        found = _SDD_COMMAND.search(form) or _SDD_NAMED.search(form)
        if found is not None:
            return found.group(0)
    if depth < 2:
        for decoded in _decoded(text):
            hidden = _runs_person_command(decoded, depth + 1)
            if hidden is not None:
                return hidden
    return None


def forbidden_tool(name: str, description: str = "") -> str | None:
    """Why a tool a server lists is the person's by its own name or words (sdd_git.connectors.
    toolwords), or None; or because its description says it runs an sdd person command."""
    reason = hers_by_words(name, description) or forbidden_reason(name, {})
    if reason is not None:
        return reason
    command = _runs_person_command(description)
    if command is not None:
        return f"'{name}' runs a person command of sdd ({command!r}), as its description says"
    return None


def forbidden_reason(operation: str, args: Mapping[str, Any]) -> str | None:
    """Why this call is the person's by any route, or None. Applies to every connector."""
    if _FORBIDDEN_NAMES.search(folded(operation)) or _runs_person_command(operation):
        return f"'{operation}' accepts, records QA, makes a release or moves a stage: the person's"
    said = name_says(operation)
    if said is not None:
        return f"'{operation}' {said}, as its name says: the person's, by any route"
    texts = _texts(args)
    methods = {
        folded(text).strip()
        for keys, text in texts
        if keys and keys[-1] != text and folded(keys[-1]) in _METHOD_KEYS
    }
    reads_only = bool(methods) and methods <= {"get", "head"}
    values = " ".join(t for keys, t in texts if not keys or keys[-1] != t)
    for keys, text in [*texts, ((), values)]:  # the values joined: a command split across args
        command = _runs_person_command(text)
        if command is not None:
            return f"an argument runs a person command of sdd ({command!r})"
        if not keys:
            continue
        key = keys[-1]
        if key == text:  # a key itself: a field named after a stage
            if _STAGE_FIELDS.search(_key_words(text)):
                return (
                    f"the field '{text[:60]}' mirrors a stage or her verdict; trackers never "
                    "hold it"
                )
            continue
        named_command = _SDD_NAMED.search(folded(f"{key}={text}"))  # SDD_CMD: complete
        if named_command is not None:
            return f"an argument runs a person command of sdd ({named_command.group(0)!r})"
        if _key_words(key) not in _PROSE_KEYS:
            shell = _SHELL_NOISE.sub("", folded(text))
            if _SDD_WORD.search(shell) and _PERSON_WORD.search(shell):
                return f"'{key}: {text[:60]}' names sdd and a person command of it"
        value = folded(text)
        named = _key_words(key)
        holder = _key_words(keys[-2]) if len(keys) > 1 and named in _VALUE_KEYS else ""
        if (_STATUS_KEYS.search(named) or _STATUS_KEYS.search(holder)) and _STAGE_WORDS.search(
            value
        ):
            return (
                f"'{key}: {text[:60]}' moves a status that mirrors a stage or her verdict; a "
                "tracker may show status, never hold a change's progress"
            )
        if _DONE_FLAGS.match(named) and value.strip() in _TRUE:
            return (
                f"'{key}: {text[:20]}' marks it done or accepted: the person's, never a tracker's"
            )
        if (_LABEL_KEYS.match(named) or _LABEL_KEYS.match(holder)) and _VERDICT_WORDS.search(value):
            return f"the label '{text[:60]}' records her verdict; trackers never hold it"
        if not reads_only and _PATH_KEYS.search(named) and _RELEASE_PATH.search(value):
            return f"'{key}: {text[:60]}' makes a release; {_RELEASE}"
    return None


def classify(
    connector: str, operation: str, args: Mapping[str, Any], declared_reads: tuple[str, ...] = ()
) -> Classified:
    """The class of one call. The table's word is final for its operations, except that the
    rules of `forbidden_reason` can only make a call forbidden, never less. An operation the
    table does not know (an MCP tool, a plug-in's) is an act, so it stops, unless the person's
    config declares it a read (`declared_reads`); its own annotations are hints, never rules."""
    known = TABLE.get(connector, {}).get(operation)
    # A read of the table moves nothing: its arguments (`status: completed` filters a list)
    # are not checked as a status change. Its name still is, as every other call's.
    reason = forbidden_reason(operation, {} if known is not None and known.kind == READ else args)
    if known is not None and known.kind == FORBIDDEN:
        return _classified(FORBIDDEN, known, known.why)
    if reason is not None:
        return _classified(FORBIDDEN, known, reason)
    if known is not None:
        return _classified(known.kind, known)
    if _CHAT_POST.search(folded(operation)):
        # A chat server's own tool (an MCP server for Slack or Teams, a plug-in) would post a
        # role's words to a channel; chat gets only drafts she reads and sends herself.
        return _classified(FORBIDDEN, None, _CHAT_WHY)
    return _classified(READ if operation in declared_reads else ACT, None)
