"""The scripted connector: canned answers from a YAML file, the test seam (as the scripted
provider is for models). It records every call it gets, so a test can prove what ran.

    connectors:
      github: {kind: script, like: github, file: github.yaml, needs_token: true}

    # github.yaml
    operations:
      get_issue:
        - when: {number: 7}             # optional: these arguments must match
          text: "Issue 7: the export is slow"
          data: {title: The export is slow, body: It takes a minute.}
        - missing: true                 # anything else: the record is not there
      merge_pull_request: {text: merged}
      get_build: {error: unavailable, message: the server is down}
    send_draft: {text: posted}
    calls: github.calls.jsonl           # default: beside the file, FILE.calls.jsonl

`like` names the kind whose rows of the operation table classify its calls (and so it is also a
code host for `open_pull_request` when `like: github`). An operation the file answers but the
table does not know is an act. `${token}` in an answer is replaced by the session's token (to
prove the masker catches a service echoing it). Calls are recorded with their arguments and
whether a token was given, never the token."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sdd_git.connectors.base import (
    ACT,
    ConnectorError,
    Missing,
    NotSignedIn,
    Operation,
    Refused,
    Result,
    Session,
    Unavailable,
)
from sdd_git.connectors.operations import TABLE
from sdd_git.errors import RecordError

_ERRORS: dict[str, type[ConnectorError]] = {
    "unavailable": Unavailable,
    "refused": Refused,
    "not_signed_in": NotSignedIn,
}


class ScriptConnector:
    name = "script"
    needs_token = False  # `needs_token: true` in the config makes a session need one

    def __init__(self) -> None:
        self._script: dict[str, Any] | None = None
        self._like = ""

    def operations(self) -> Mapping[str, Operation]:
        rows = TABLE.get(self._like, {})
        answered = (self._script or {}).get("operations") or {}
        found = {name: rows.get(name) or Operation(name, ACT, f"use {name}") for name in answered}
        return {**rows, **found}

    def call(self, session: Session, operation: str, args: Mapping[str, Any]) -> Result:
        script = self._read(session)
        self._record(session, script, operation, dict(args))
        if session.settings.get("needs_token") and not session.token:
            raise NotSignedIn(f"{session.name} is not signed in")
        answers = (script.get("operations") or {}).get(operation)
        if answers is None:
            raise Unavailable(f"{session.name}: the script has no answer for {operation}")
        for answer in answers if isinstance(answers, list) else [answers]:
            if not isinstance(answer, dict):
                continue
            when = answer.get("when") or {}
            if all(_same(args.get(k), v) for k, v in when.items()):
                return _answer(session, operation, args, answer)
        raise Unavailable(
            f"{session.name}: the script has no answer for {operation} with these arguments"
        )

    def send_draft(self, session: Session, channel: str, text: str) -> Result:
        script = self._read(session)
        self._record(session, script, "send_draft", {"channel": channel, "text": text})
        answer = script.get("send_draft") or {"text": f"posted to {channel}"}
        return _answer(session, "send_draft", {"channel": channel}, answer)

    def _read(self, session: Session) -> dict[str, Any]:
        from sdd_git.yamlio import read_mapping

        path = _path(session, str(session.settings.get("file")))
        if path.is_symlink():  # a role could have linked it to a file of the person's
            raise ConnectorError(f"connector {session.name}: the script file {path} is a link")
        if not path.is_file():
            raise RecordError(f"connector {session.name}: no script file {path}")
        script = read_mapping(path, None)  # not a link (above); wherever she keeps it
        self._script = script
        like = session.settings.get("like")
        self._like = like if isinstance(like, str) else ""
        script.setdefault("_path", str(path))
        return script

    def _record(
        self, session: Session, script: Mapping[str, Any], operation: str, args: dict[str, Any]
    ) -> None:
        # sdd's own process writes this log, outside any sandbox, and a role may have written
        # the script: the log stays beside it (a name, no folder), and a link is not followed.
        calls = script.get("calls")
        beside = Path(str(script["_path"]))
        if isinstance(calls, str):
            if Path(calls).name != calls or calls in (".", ".."):
                raise ConnectorError(
                    f"connector {session.name}: calls: {calls!r} must be a file name beside "
                    "the script, not a path"
                )
            path = beside.parent / calls
        else:
            path = Path(str(beside) + ".calls.jsonl")
        line = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "connector": session.name,
            "operation": operation,
            "args": args,
            "signed_in": bool(session.token),
        }
        text = session.masked(json.dumps(line, ensure_ascii=False, default=str)) + "\n"
        try:
            descriptor = os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600
            )
        except OSError as exc:
            raise ConnectorError(
                f"connector {session.name}: cannot write its call log {path} ({exc.strerror})"
            ) from None
        try:
            os.write(descriptor, text.encode("utf-8"))
        finally:
            os.close(descriptor)


def _path(session: Session, value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = Path(str(session.settings.get("root") or ".")) / path
    return path


def _same(given: Any, wanted: Any) -> bool:
    return given == wanted or str(given) == str(wanted)


def _answer(
    session: Session, operation: str, args: Mapping[str, Any], answer: Mapping[str, Any]
) -> Result:
    if answer.get("missing"):
        what = answer.get("source") or f"{operation} {json.dumps(dict(args), default=str)}"
        raise Missing(f"{what} on {session.name}", str(answer.get("why") or ""))
    error = answer.get("error")
    if error is not None:
        kind = _ERRORS.get(str(error), ConnectorError)
        raise kind(session.masked(str(answer.get("message") or error)))
    data = answer.get("data") or {}
    text = answer.get("text")
    if text is None:
        text = json.dumps(data, indent=1, ensure_ascii=False, default=str)
    text = str(text)
    if session.token:
        text = text.replace("${token}", session.token)
    return Result(text, data if isinstance(data, dict) else {"value": data})
