"""Aha!, through its REST API v1 (https://www.aha.io/api).

    connectors:
      aha: {base_url: https://acme.aha.io/api/v1, token_env: AHA_TOKEN}

`base_url` is the account's API root; the token (an API key or an OAuth token) is sent as
`Authorization: Bearer`. Reads: a feature (`GET /features/{id}`, its HTML description as plain
text) with its comments (`GET /features/{id}/comments`, paged by `page`/`per_page`). Acts:
change fields (`PUT /features/{id}` with a `feature` envelope), comment (`POST
/features/{id}/comments`, the text escaped into HTML).

A feature's workflow status or a custom field that mirrors a stage or her verdict is refused
before the change is sent; a custom field's key is first resolved to the name the person sees,
and a workflow status given by id (which could not be checked by its words) is refused too."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sdd_git.connectors.base import ConnectorError, Missing, Result, Session
from sdd_git.connectors.builtin.hostkit import bearer_call as _call
from sdd_git.connectors.builtin.hostkit import by_operation
from sdd_git.connectors.builtin.trackerkit import (
    TrackerConnector,
    as_mapping,
    comment_lines,
    html_to_text,
    mapping_arg,
    refuse_stage_fields,
    segment,
    shorten,
    text_arg,
    text_to_html,
)

FEATURE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*(-[A-Za-z0-9_]+)*")  # 1007868956, PRJ1-12
COMMENTS_PER_PAGE = 50
MAX_COMMENT_PAGES = 5
_STATUS_ID = re.compile(r"[0-9]{6,}")


def _feature_id(args: Mapping[str, Any], operation: str) -> tuple[str, str]:
    given = text_arg(args, "id", operation)
    return given, segment(given, "an Aha! feature id or key such as PRJ1-12", FEATURE_ID)


def _feature(session: Session, given: str, part: str) -> Mapping[str, Any]:
    found = _call(session, "GET", f"/features/{part}", f"Aha! feature {given}").json()
    feature = found.get("feature") if isinstance(found, Mapping) else None
    if not isinstance(feature, Mapping):
        raise Missing(f"Aha! feature {given} on {session.name}", "the answer held no feature")
    return feature


def _name(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("name") or value.get("reference_num") or "")
    return str(value) if value else ""


def _custom_value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_custom_value(v) for v in value)
    if isinstance(value, Mapping):
        return _name(value) or str(value.get("value") or "")
    return html_to_text(str(value)) if isinstance(value, str) else str(value)


def _get_feature(session: Session, args: Mapping[str, Any]) -> Result:
    given, part = _feature_id(args, "get_feature")
    feature = _feature(session, given, part)
    description = feature.get("description")
    body = description.get("body") if isinstance(description, Mapping) else description
    text = html_to_text(body) if isinstance(body, str) else ""
    status = as_mapping(feature.get("workflow_status"))
    custom = [
        {
            "key": str(c.get("key") or ""),
            "name": str(c.get("name") or c.get("key") or ""),
            "value": _custom_value(c.get("value")),
        }
        for c in feature.get("custom_fields") or []
        if isinstance(c, Mapping)
    ]
    comments = _comments(session, given, part)
    data: dict[str, Any] = {
        "id": str(feature.get("id") or ""),
        "reference": str(feature.get("reference_num") or given),
        "name": str(feature.get("name") or ""),
        "status": _name(status),
        "status_complete": bool(status.get("complete")),
        "kind": _name(feature.get("workflow_kind")),
        "release": _name(feature.get("release")),
        "assignee": _name(feature.get("assigned_to_user")),
        "tags": [str(t) for t in feature.get("tags") or []],
        "description": text,
        "custom_fields": custom,
        "comments": comments,
        "url": str(feature.get("url") or ""),
    }
    lines = [
        f"{data['reference']}: {data['name']}",
        f"status: {data['status'] or 'unknown'}"
        + (f" · type: {data['kind']}" if data["kind"] else "")
        + (f" · release: {data['release']}" if data["release"] else ""),
        f"assignee: {data['assignee'] or 'unassigned'}",
    ]
    if data["tags"]:
        lines.append("tags: " + ", ".join(data["tags"]))
    lines += [f"{c['name']}: {c['value']}" for c in custom if c["value"]]
    if data["url"]:
        lines.append(f"link: {data['url']}")
    lines.append("\ndescription:\n" + (shorten(text) if text else "(none)"))
    lines += comment_lines(comments)
    return Result("\n".join(lines), data)


def _comments(session: Session, given: str, part: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    for page in range(1, MAX_COMMENT_PAGES + 1):
        answer = _call(
            session, "GET", f"/features/{part}/comments", f"comments of Aha! feature {given}",
            query={"page": page, "per_page": COMMENTS_PER_PAGE},
        ).json()  # fmt: skip
        if not isinstance(answer, Mapping):
            break
        for comment in answer.get("comments") or []:
            if isinstance(comment, Mapping):
                found.append(
                    {
                        "author": _name(comment.get("user")),
                        "created": str(comment.get("created_at") or ""),
                        "body": html_to_text(str(comment.get("body") or "")),
                    }
                )
        paging = as_mapping(answer.get("pagination"))
        total = paging.get("total_pages")
        if not isinstance(total, int) or page >= total:
            break
    return found


def _update_feature(session: Session, args: Mapping[str, Any]) -> Result:
    given, part = _feature_id(args, "update_feature")
    fields = dict(mapping_arg(args, "fields", "update_feature"))
    checked: dict[str, Any] = dict(fields)
    status = fields.get("workflow_status", fields.get("status"))
    if status is not None:
        words = _name(status) if isinstance(status, Mapping) else str(status)
        if _STATUS_ID.fullmatch(words.strip()):
            raise ConnectorError(
                f"{session.name}: update_feature of {given} was not sent: a workflow status "
                "given by id cannot be checked for a stage or her verdict",
                hint="name the status instead (workflow_status: In development)",
            )
    custom = fields.get("custom_fields")
    if isinstance(custom, Mapping) and custom:
        feature = _feature(session, given, part)
        names = {
            str(c.get("key")): str(c.get("name") or c.get("key"))
            for c in feature.get("custom_fields") or []
            if isinstance(c, Mapping) and c.get("key")
        }
        for key, value in custom.items():
            checked[str(key)] = value
            checked[names.get(str(key), str(key))] = value
    refuse_stage_fields(session.name, "update_feature", f"Aha! feature {given}", checked)
    answer = _call(
        session, "PUT", f"/features/{part}", f"Aha! feature {given}", body={"feature": fields}
    ).json()
    changed = as_mapping(as_mapping(answer).get("feature"))
    reference = str(changed.get("reference_num") or given)
    return Result(
        f"changed {', '.join(sorted(fields))} of {reference}",
        {"id": given, "reference": reference, "fields": sorted(fields)},
    )


def _comment_feature(session: Session, args: Mapping[str, Any]) -> Result:
    given, part = _feature_id(args, "comment_feature")
    body = text_arg(args, "body", "comment_feature")
    answer = _call(
        session, "POST", f"/features/{part}/comments", f"Aha! feature {given}",
        body={"comment": {"body": text_to_html(body)}},
    ).json()  # fmt: skip
    comment = answer.get("comment") if isinstance(answer, Mapping) else None
    comment_id = str(comment.get("id") or "") if isinstance(comment, Mapping) else ""
    return Result(
        f"commented on Aha! feature {given}" + (f" (comment {comment_id})" if comment_id else ""),
        {"id": given, "comment": comment_id},
    )


class AhaConnector(TrackerConnector):
    name = "aha"
    handlers = by_operation(_get_feature, _update_feature, _comment_feature)
