"""The run log's events: each kind parses from the line a reader gets and serialises back to the
same fields in the same order; a kind this version does not know is kept, not refused."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import logevents
from sdd_git.runner.logwriter import RunLog
from sdd_git.runner.runlog import read_events

LINES: list[dict[str, Any]] = [
    {"roles": ["builder"], "task": "t", "change": "CH-0001", "origin": "person",
     "provider": "script", "model": "m", "process": {"pid": 1}, "sandbox": "none"},
    {"route": "node", "node": "N1", "scope": "api", "plan": "abc", "why": "node N1"},
    {"change": None, "sections": [], "checks": ["SPEC-0001#S1/C1"], "decisions": []},
    {"message": "warning: x", "switched": {"from": {}, "to": {}}},
    {"message": "boom"},
    {"stop": "S-1", "process": {"pid": 2}},
    {"status": "stopped", "waiting_for": "S-1"},
    {"role": "user", "content": "hi", "conversation_id": "M-1"},
    {"text": "go on"},
    {"role": "builder", "purpose": "author", "call": 1, "pass": None},
    {"role": "builder", "message": {"role": "assistant", "content": "ok"}, "usage": {},
     "thread": "author"},
    {"role": "builder", "results": 2, "tokens": 900},
    {"role": "builder", "tool": "read_file", "args": {"path": "a"}, "call_id": "c1"},
    {"call_id": "c1", "tool": "read_file", "content": "text", "thread": "critic"},
    {"tool": "draft", "reason": "bad", "message": "no", "pass": 2},
    {"tool": "write_file", "args": {}, "would": "write a"},
    {"stop": "S-1", "kind": "approval", "action": "Write a", "tool": "write_file", "args": {},
     "choices": ["allow once", "deny"], "call_id": "c2", "because": "ask", "sandbox": "none",
     "expires_at": None},
    {"stop": "S-1", "choice": "allow_once", "origin": "page"},
    {"tool": "write_file", "args": {}, "by": "allow_once"},
    {"tool": "git_push", "args": {}, "by": None, "reason": "no remote"},
    {"node": "N1", "owner": "builder", "from_run": "run-1", "kind": "commit", "ref": "abc",
     "summary": "s", "sha256": "f00"},
    {"to": "qa", "cites": [], "sent": True, "message": "M-2", "output": "o"},
    {"pass": 1, "text": "draft"},
    {"pass": 2, "changed": ["S1"], "text": "draft"},
    {"pass": 1, "role": "critic", "gaps": []},
    {"reason": "r", "fix": "f", "event_kind": "push"},
    {"source": "main", "why": "gone", "event_kind": "push"},
    {"by": "person"},
]  # fmt: skip


def _kinds() -> list[str]:
    """Every kind, in the order of LINES (zip(strict=True) fails when one has no line)."""
    return list(logevents.KINDS)


@pytest.mark.parametrize(("kind", "line"), list(zip(_kinds(), LINES, strict=True)))
def test_a_line_reads_back_to_the_same_fields_in_the_same_order(
    kind: str, line: dict[str, Any]
) -> None:
    event = logevents.parse({"ts": "x", "run": "run-1", "seq": 3, "event": kind, **line})
    assert type(event) is logevents.KINDS[kind]
    assert list(event.fields().items()) == list(line.items())


def test_a_kind_from_another_version_is_kept_whole() -> None:
    event = logevents.parse({"ts": "x", "run": "r", "seq": 1, "event": "from_later", "a": [1]})
    assert isinstance(event, logevents.Unknown)
    assert (event.kind, event.fields()) == ("from_later", {"a": [1]})


def test_a_field_an_older_version_did_not_write_reads_none() -> None:
    event = logevents.parse({"event": "tool_call", "tool": "read_file"})
    assert isinstance(event, logevents.ToolCall)
    assert (event.tool, event.args, event.call_id, event.thread) == ("read_file", None, None, None)


def test_append_writes_the_header_then_the_fields(root: Root) -> None:
    log = RunLog.open(root, "run-20260101-000000-abcdef", lambda s: s, time.time)
    log.append(logevents.Stop(None, "no-spec", "why"))
    log.append(logevents.RunEnded("no-spec"))
    lines = log.path.read_text().splitlines()
    assert list(json.loads(lines[0])) == ["ts", "run", "seq", "event", "stop", "kind", "action",
                                          "choices"]  # fmt: skip
    assert [e["event"] for e in read_events(log.path)] == ["stop", "run_ended"]
    assert log.ended


def test_an_event_is_a_frozen_record_that_refuses_a_field_it_does_not_have() -> None:
    from sdd_git.runner.logevents import ActionDone, Stop

    done = ActionDone("write_file", {"path": "a"}, "allow_once")
    assert done == ActionDone("write_file", {"path": "a"}, "allow_once")
    assert done != ActionDone("write_file", {"path": "b"}, "allow_once")
    with pytest.raises(AttributeError):
        done.tool = "delete_file"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ActionDone("write_file", {}, "allow_once", toll="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ActionDone("write_file")  # type: ignore[call-arg]
    # A default made anew for each event: one stop's choices are never another's.
    first, second = Stop("S1", "approval", "x"), Stop("S2", "approval", "y")
    assert first.choices == [] and first.choices is not second.choices
