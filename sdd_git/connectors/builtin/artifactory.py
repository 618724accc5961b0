"""JFrog Artifactory, through its REST API (https://jfrog.com/help/r/jfrog-rest-apis).

    connectors:
      artifactory: {base_url: https://acme.jfrog.io/artifactory, token_env: JFROG_TOKEN}

An access token goes in `Authorization: Bearer`. Reads: an item's info (`/api/storage/{repo}/
{path}`: a file's size, checksums, who deployed it and when; a folder's children) and a build's
info (`/api/build/{name}/{number}`: its commit, modules, artifacts and promotion history). The
one act: promote a build (`POST /api/build/promote/{name}/{number}`) to a target repository,
moved by default as the API does, copied with `copy: true`. A promotion's `status` that names a
release or an acceptance is the person's, and is never sent."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from sdd_git.connectors.base import ConnectorError, Refused, Result, Session
from sdd_git.connectors.builtin.hostkit import (
    ServiceCall,
    ServiceConnector,
    bearer,
    by_operation,
    optional_text,
    record_of,
    said,
    segment,
    segments,
    short_sha,
    text,
)
from sdd_git.connectors.http import request

NAME = "artifactory"
REPO_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
PATH_PART = re.compile(r"[^\\%?#]{1,255}")
BUILD_NAME = re.compile(r"[^/\\%?#]{1,255}")
BUILD_NUMBER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
CHILDREN_SHOWN = 50
ARTIFACTS_SHOWN = 20


class _Call(ServiceCall):
    connector = NAME


def _project_query(session: Session) -> dict[str, Any] | None:
    project = session.settings.get("project")
    return {"project": project} if isinstance(project, str) and project else None


def _get_item_info(call: _Call) -> Result:
    repo = text(call.args, "repo", call.operation)
    path = text(call.args, "path", call.operation)
    inside = "a path inside the repository (no '..', '%', '?', '#')"
    encoded = "/".join(
        [segment(repo, "a repository key", REPO_KEY), *segments(path, inside, PATH_PART)]
    )
    source = call.source(repo=repo, path=path)
    answer = request(
        call.session, "GET", f"/api/storage/{encoded}", source=source, headers=bearer(call.session)
    ).json()
    item: Any = record_of(answer, call.session, source, "artifact", "path", "repo", "uri")
    where = f"{item.get('repo', repo)}{item.get('path', '/' + path.strip('/'))}"
    if "children" in item:
        children = [c for c in item.get("children") or [] if isinstance(c, Mapping)]
        names = [
            f"{c.get('uri', '').lstrip('/')}{'/' if c.get('folder') else ''}" for c in children
        ]
        lines = [
            f"folder {where}: {len(children)} items",
            f"created {said(item.get('created'))}, last modified {said(item.get('lastModified'))}",
        ]
        lines.extend(f"- {n}" for n in names[:CHILDREN_SHOWN])
        if not children:
            lines.append("(the folder is empty)")
        if len(children) > CHILDREN_SHOWN:
            lines.append(f"(and {len(children) - CHILDREN_SHOWN} more not shown)")
        data = {"repo": item.get("repo"), "path": item.get("path"), "folder": True,
                "children": names}  # fmt: skip
        return Result("\n".join(lines), data)
    checksums = item.get("checksums") if isinstance(item.get("checksums"), Mapping) else {}
    lines = [
        f"artifact {where}: {said(item.get('size'), 'unknown')} bytes, "
        f"{said(item.get('mimeType'), 'unknown type')}",
        f"sha256 {said(checksums.get('sha256'), 'unknown')}, sha1 "
        f"{said(checksums.get('sha1'), 'unknown')}",
        f"created {said(item.get('created'))} by {said(item.get('createdBy'), 'unknown')}; last "
        f"modified {said(item.get('lastModified'))} by {said(item.get('modifiedBy'), 'unknown')}",
        f"download: {said(item.get('downloadUri'))}",
    ]
    if item.get("remoteUrl"):
        lines.append(f"cached from: {item['remoteUrl']}")
    data = {
        "repo": item.get("repo"), "path": item.get("path"), "folder": False,
        "size": item.get("size"), "sha256": checksums.get("sha256"),
        "sha1": checksums.get("sha1"), "created": item.get("created"),
        "last_modified": item.get("lastModified"), "download_uri": item.get("downloadUri"),
    }  # fmt: skip
    return Result("\n".join(lines), data)


def _build_parts(args: Mapping[str, Any], operation: str) -> tuple[str, str, str]:
    name = text(args, "build_name", operation)
    number = text(args, "build_number", operation)
    encoded = (
        segment(name, "a build name (no '/', '%', '?', '#')", BUILD_NAME)
        + "/"
        + segment(number, "a build number such as 51 or 1.4.2-17", BUILD_NUMBER)
    )
    return name, number, encoded


def _get_build_info(call: _Call) -> Result:
    name, number, encoded = _build_parts(call.args, call.operation)
    source = call.source(build_name=name, build_number=number)
    answer = request(
        call.session, "GET", f"/api/build/{encoded}", source=source,
        query=_project_query(call.session), headers=bearer(call.session),
    ).json()  # fmt: skip
    info = record_of(
        answer.get("buildInfo") if isinstance(answer, Mapping) else None, call.session, source,
        "build info", "name", "number", "started",
    )  # fmt: skip
    vcs = [v for v in info.get("vcs") or [] if isinstance(v, Mapping)]
    modules = [m for m in info.get("modules") or [] if isinstance(m, Mapping)]
    artifacts = [
        f"{m.get('id')}: {a.get('name')}"
        for m in modules for a in m.get("artifacts") or [] if isinstance(a, Mapping)
    ]  # fmt: skip
    statuses = [s for s in info.get("statuses") or [] if isinstance(s, Mapping)]
    lines = [
        f"build {name} {number}: started {said(info.get('started'))}, "
        f"{len(modules)} modules, {len(artifacts)} artifacts",
    ]
    for v in vcs:
        lines.append(
            f"commit {short_sha(v.get('revision'))} on {said(v.get('branch'), 'unknown branch')} "
            f"({said(v.get('url'), 'unknown repository')})"
        )
    if info.get("url"):
        lines.append(f"CI build: {info['url']}")
    lines.extend(f"- {a}" for a in artifacts[:ARTIFACTS_SHOWN])
    if len(artifacts) > ARTIFACTS_SHOWN:
        lines.append(f"(and {len(artifacts) - ARTIFACTS_SHOWN} more artifacts not shown)")
    if statuses:
        lines.append("promotions:")
        lines.extend(
            f"- {s.get('status')} to {said(s.get('repository'), 'no repository')} on "
            f"{s.get('timestamp')} by {said(s.get('user'), 'unknown')}"
            for s in statuses
        )
    else:
        lines.append("promotions: none")
    data = {
        "name": info.get("name", name), "number": info.get("number", number),
        "started": info.get("started"), "vcs": [dict(v) for v in vcs],
        "artifacts": artifacts, "statuses": [dict(s) for s in statuses],
    }  # fmt: skip
    return Result("\n".join(lines), data)


def _promote_build(call: _Call) -> Result:
    name, number, encoded = _build_parts(call.args, call.operation)
    target = text(call.args, "target_repo", call.operation)
    segment(target, "a repository key", REPO_KEY)
    copy = call.args.get("copy", False)
    if not isinstance(copy, bool):
        raise ConnectorError("promote_build: 'copy' is true or false")
    user = call.session.settings.get("user")
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+0000"
    body: dict[str, Any] = {
        "comment": optional_text(call.args, "comment", call.operation) or "promoted through sdd",
        "ciUser": user if isinstance(user, str) and user else "sdd",
        "timestamp": stamp,
        "dryRun": False,
        "targetRepo": target,
        "copy": copy,
        "artifacts": True,
        "dependencies": False,
        "failFast": True,
    }
    status = optional_text(call.args, "status", call.operation)
    if status:
        body["status"] = status
    source_repo = optional_text(call.args, "source_repo", call.operation)
    if source_repo:
        segment(source_repo, "a repository key", REPO_KEY)
        body["sourceRepo"] = source_repo
    answer = request(
        call.session, "POST", f"/api/build/promote/{encoded}", source=f"build {name} {number}",
        query=_project_query(call.session), body=body, headers=bearer(call.session),
    ).json()  # fmt: skip
    messages = [
        m for m in (answer.get("messages") if isinstance(answer, Mapping) else None) or []
        if isinstance(m, Mapping)
    ]  # fmt: skip
    errors = [str(m.get("message")) for m in messages if str(m.get("level")).lower() == "error"]
    if errors:
        raise Refused(
            f"{call.session.name} did not promote build {name} {number}: "
            + call.session.masked("; ".join(errors))[:300]
        )
    how = "copied" if copy else "moved"
    return Result(
        f"promoted build {name} {number} to {target} ({how})"
        + (f" with status {status}" if status else ""),
        {"build_name": name, "build_number": number, "target_repo": target, "copy": copy,
         "messages": [dict(m) for m in messages]},
    )  # fmt: skip


class ArtifactoryConnector(ServiceConnector):
    name = NAME
    call_class = _Call
    handlers = by_operation(_get_item_info, _get_build_info, _promote_build)
