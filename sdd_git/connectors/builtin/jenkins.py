"""Jenkins, through its remote access API (https://www.jenkins.io/doc/book/using/remote-access-api/).

    connectors:
      jenkins: {base_url: https://ci.example.com, user: ada, token_env: JENKINS_TOKEN}

Requests are signed with HTTP Basic `user:API token` (`user` from the config). A job is named
as Jenkins shows it, folders with `/` (`team/app/main`), and becomes `/job/team/job/app/job/main`;
a build is its number or a permalink (`lastBuild`, `lastFailedBuild`...). Reads: a build
(`/api/json`; a failed, unstable or aborted one with its console log excerpt), its console log
(`/consoleText`), its test report (`/testReport/api/json`). The one act: start a job
(`/build`, or `/buildWithParameters` with its parameters as a form), with a CSRF crumb from
`/crumbIssuer/api/json` when the server issues one."""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from typing import Any

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    NotSignedIn,
    Result,
    Session,
)
from sdd_git.connectors.builtin.buildlog import add_excerpt, excerpt_result
from sdd_git.connectors.builtin.hostkit import (
    ServiceCall,
    ServiceConnector,
    basic_auth,
    by_operation,
    items,
    positive_int,
    record_of,
    said,
    segments,
    token_of,
)
from sdd_git.connectors.http import Answer, request

NAME = "jenkins"
# Characters Jenkins itself refuses in a job's name (jenkins.model.Jenkins.checkGoodName).
JOB_NAME = re.compile(r"[^?*/\\%!@#$^&|<>\[\]:;\x00-\x1f\x7f]{1,255}")
PERMALINKS = ("lastBuild", "lastCompletedBuild", "lastFailedBuild", "lastSuccessfulBuild",
              "lastStableBuild", "lastUnstableBuild", "lastUnsuccessfulBuild")  # fmt: skip
PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}")
HEADER_NAME = re.compile(r"[A-Za-z0-9-]{1,64}")
FAILED = ("FAILURE", "UNSTABLE", "ABORTED")
CASES_SHOWN = 20
REPORT_TREE = (
    "failCount,passCount,skipCount,duration,empty,"
    "suites[name,cases[className,name,status,errorDetails]],"
    "childReports[child[url],result[failCount,passCount,skipCount,"
    "suites[name,cases[className,name,status,errorDetails]]]]"
)


def job_path(job: str, operation: str) -> str:
    """`team/app` as `/job/team/job/app`, each name checked and encoded."""
    what = "a Jenkins job name (folders joined with '/', no '..', none of ?*\\%!@#$^&|<>[]:;)"
    parts = segments(job, what, JOB_NAME)
    return "".join(f"/job/{part}" for part in parts)


class _Call(ServiceCall):
    connector = NAME

    def __init__(self, session: Session, operation: str, args: Mapping[str, Any]) -> None:
        super().__init__(session, operation, args)
        self.job = self.within_arg("job", configured=False)
        self.job_path = job_path(self.job, operation)
        user = session.settings.get("user")
        token = token_of(session)
        if not isinstance(user, str) or not user.strip():
            raise NotSignedIn(
                f"{session.name}: Jenkins signs in with a user name and an API token, and no "
                "user is configured",
                hint=f"set connectors.{session.name}.user in .sdd/config.yaml",
            )
        self.headers = basic_auth(user.strip(), token)

    def build(self) -> str:
        value = self.args.get("number")
        if isinstance(value, str) and value.strip() in PERMALINKS:
            return value.strip()
        return str(positive_int(self.args, "number", self.operation))

    def get(self, path: str, source: str, query: Mapping[str, Any] | None = None) -> Answer:
        return request(
            self.session, "GET", self.job_path + path, source=source, query=query,
            headers=self.headers,
        )  # fmt: skip


def _when(millis: Any) -> str:
    if not isinstance(millis, int | float) or isinstance(millis, bool):
        return "unknown"
    moment = datetime.datetime.fromtimestamp(millis / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _actions(build: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return [
        a
        for a in items(build.get("actions"))
        if isinstance(a, Mapping) and kind in str(a.get("_class", ""))
    ]


def _get_build(call: _Call) -> Result:
    number = call.build()
    source = call.source(number=number)
    build = record_of(call.get(f"/{number}/api/json", source).json(), call.session, source,
                      "build", "number")  # fmt: skip
    result = build.get("result")
    label = f"build {build.get('number', number)} of Jenkins job {call.job}"
    lines = [f"{label}: {build.get('fullDisplayName') or build.get('displayName') or ''}".rstrip()]
    data: dict[str, Any] = {
        "number": build.get("number"), "result": result, "url": build.get("url"),
        "finished": not build.get("building") and result is not None,
    }  # fmt: skip
    if build.get("building") or build.get("inProgress"):
        lines.append(f"not finished: building since {_when(build.get('timestamp'))}; no result yet")
    elif result is None:
        lines.append("not finished: no result yet")
    else:
        seconds = build.get("duration")
        took = f", took {round(seconds / 1000)} s" if isinstance(seconds, int | float) else ""
        lines.append(f"finished: {result} (started {_when(build.get('timestamp'))}{took})")
    causes = [
        str(c.get("shortDescription"))
        for action in _actions(build, "CauseAction")
        for c in action.get("causes") or []
        if isinstance(c, Mapping) and c.get("shortDescription")
    ]
    if causes:
        lines.append(f"cause: {'; '.join(causes)}")
    parameters = {
        str(p.get("name")): p.get("value")
        for action in _actions(build, "ParametersAction")
        for p in action.get("parameters") or []
        if isinstance(p, Mapping) and p.get("name")
    }
    if parameters:
        lines.append(
            "parameters: " + ", ".join(f"{k}={said(v, '')}" for k, v in parameters.items())
        )
    tests = _actions(build, "TestResultAction")
    if tests:
        t = tests[0]
        lines.append(
            f"tests: {t.get('failCount', 'unknown')} failed, {t.get('skipCount', 'unknown')} "
            f"skipped, of {t.get('totalCount', 'unknown')} (get_test_report for the cases)"
        )
        data["tests"] = {k: t.get(k) for k in ("failCount", "skipCount", "totalCount")}
    lines.append(str(build.get("url") or ""))
    if result in FAILED and not build.get("building"):
        what = f"console log of build {build.get('number', number)}"
        read = functools.partial(call.get, f"/{number}/consoleText", f"console log of {source}")
        add_excerpt(lines, data, what, read)
    return Result("\n".join(line for line in lines if line), data)


def _get_build_log(call: _Call) -> Result:
    number = call.build()
    answer = call.get(f"/{number}/consoleText", call.source(number=number))
    what = f"console log of build {number} of Jenkins job {call.job}"
    return excerpt_result(what, answer, number=number)


def _cases(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        case for suite in items(report.get("suites")) if isinstance(suite, Mapping)
        for case in items(suite.get("cases")) if isinstance(case, Mapping)
    ]  # fmt: skip


def _get_test_report(call: _Call) -> Result:
    number = call.build()
    report = call.get(
        f"/{number}/testReport/api/json", call.source(number=number), {"tree": REPORT_TREE}
    ).json()
    report = record_of(report, call.session, call.source(number=number), "test report",
                       "failCount", "passCount", "skipCount", "childReports")  # fmt: skip
    parts = [report]
    for child in report.get("childReports") or []:  # a matrix or multi-module build
        if isinstance(child, Mapping) and isinstance(child.get("result"), Mapping):
            parts.append(child["result"])
    counts = {
        key: sum(int(p.get(key) or 0) for p in parts)
        for key in ("failCount", "passCount", "skipCount")
    }
    failing = [c for p in parts for c in _cases(p) if c.get("status") in ("FAILED", "REGRESSION")]
    total = sum(counts.values())
    lines = [
        f"test report of build {number} of Jenkins job {call.job}: {counts['failCount']} failed, "
        f"{counts['passCount']} passed, {counts['skipCount']} skipped (of {total})"
    ]
    if total == 0:
        lines.append("the report holds no tests")
    for case in failing[:CASES_SHOWN]:
        details = " ".join(str(case.get("errorDetails") or "").split())[:300]
        lines.append(
            f"- {case.get('className')}.{case.get('name')}: {case.get('status')}"
            + (f": {details}" if details else "")
        )
    if len(failing) > CASES_SHOWN:
        lines.append(f"(and {len(failing) - CASES_SHOWN} more failing cases not shown)")
    data = {
        **counts,
        "failing": [
            {"class": c.get("className"), "name": c.get("name"), "status": c.get("status"),
             "details": c.get("errorDetails")}
            for c in failing[:CASES_SHOWN]
        ],
    }  # fmt: skip
    return Result("\n".join(lines), data)


def _parameters(call: _Call) -> dict[str, str]:
    given = call.args.get("parameters")
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ConnectorError("trigger_build: 'parameters' is an object of names and values")
    found: dict[str, str] = {}
    for name, value in given.items():
        if not isinstance(name, str) or not PARAMETER.fullmatch(name):
            raise ConnectorError(f"trigger_build: {name!r} is not a parameter name")
        if isinstance(value, bool):
            found[name] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            found[name] = str(value)
        else:
            raise ConnectorError(f"trigger_build: parameter {name} is a text, number or yes/no")
    return found


def _crumb(call: _Call) -> dict[str, str]:
    """The CSRF crumb header, when the server issues one (a server without CSRF protection,
    or one that takes API tokens without it, answers 404)."""
    try:
        answer = request(
            call.session, "GET", "/crumbIssuer/api/json", source="the crumb issuer",
            headers=call.headers,
        )  # fmt: skip
    except Missing:
        return {}
    data = answer.json()
    field = data.get("crumbRequestField") if isinstance(data, Mapping) else None
    crumb = data.get("crumb") if isinstance(data, Mapping) else None
    if isinstance(field, str) and HEADER_NAME.fullmatch(field) and isinstance(crumb, str):
        return {field: crumb}
    return {}


def _trigger_build(call: _Call) -> Result:
    parameters = _parameters(call)
    headers = {**call.headers, **_crumb(call)}
    what = f"Jenkins job {call.job}"
    if parameters:
        answer = request(
            call.session, "POST", f"{call.job_path}/buildWithParameters", source=what,
            body=parameters, form=True, headers=headers,
        )  # fmt: skip
    else:
        answer = request(
            call.session, "POST", f"{call.job_path}/build", source=what, headers=headers
        )
    queued = answer.headers.get("location", "")
    item = re.search(r"/queue/item/([0-9]+)/?$", queued)
    return Result(
        f"Jenkins job {call.job} was started"
        + (f" (queue item {item.group(1)})" if item else "")
        + (f" with {', '.join(f'{k}={v}' for k, v in parameters.items())}" if parameters else ""),
        {"job": call.job, "queue_item": int(item.group(1)) if item else None,
         "parameters": parameters},
    )  # fmt: skip


class JenkinsConnector(ServiceConnector):
    name = NAME
    call_class = _Call
    handlers = by_operation(
        _get_build, _get_build_log, _get_test_report, _trigger_build
    )  # fmt: skip
