"""`handoff {to, task, cites}` through the one dispatch (CONTRACT §9): it stops like any
consequential call; once allowed, both conversations show it with its cites and the receiver
wakes in a run of its own with origin `role`, under its own boundary; with messaging off nothing
is sent. A bad receiver or cite is refused before anything is written."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from sdd_git.records import decisions
from sdd_git.root import Root
from sdd_git.runner import conversation, stops
from sdd_git.runner.state import offered_tools
from sdd_git.tools.toolbox import TOOLS
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, events, script, transcript, write_call
from tests.tools import fails, make_context
from tests.trusthelp import confirm

WAIT_SECONDS = 60.0


def handoff(to: str, task: str, cites: list[str] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"to": to, "task": task}
    if cites is not None:
        args["cites"] = cites
    return {"tool": "handoff", "args": args}


def runs_of(root: Root, role: str) -> list[list[dict[str, Any]]]:
    """The event lists of every run of `role`, oldest first."""
    folder = root.sdd / "role-runs"
    found = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        logged = events(root, path.stem)
        if logged and logged[0].get("event") == "run_started" and logged[0]["roles"] == [role]:
            found.append(logged)
    return found


def woken_run(root: Root, role: str) -> list[dict[str, Any]]:
    """The receiver's background run, once it has ended (bounded wait)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = runs_of(root, role)
        if found and found[-1][-1].get("event") == "run_ended":
            return found[-1]
        time.sleep(0.1)
    outputs = sorted((root.local / "handoffs").glob("*.log"))
    shown = [p.read_text(errors="replace") for p in outputs]
    raise AssertionError(f"no finished run of {role} after {WAIT_SECONDS}s; output: {shown}")


def handoff_messages(root: Root, role: str) -> list[dict[str, Any]]:
    return [m for m in conversation.messages(root, role) if m.get("kind") == "handoff"]


def tool_results(root: Root, run_id: str, tool: str = "handoff") -> list[str]:
    return [
        str(e["content"])
        for e in events(root, run_id)
        if e["event"] == "tool_result" and e.get("tool") == tool
    ]


def nothing_sent(root: Root, *roles: str) -> None:
    for role in roles:
        assert handoff_messages(root, role) == [], role
        assert runs_of(root, role) == [] or role == roles[0], role
    assert not (root.local / "handoffs").exists()


@pytest.fixture
def pair(root: Root) -> str:
    """A change with an accepted section, and two roles: the sender and the receiver."""
    change = accepted_change(root)
    add_role(root, "sender")
    add_role(root, "receiver")
    return change


def test_handoff_is_offered_to_every_role_and_is_consequential() -> None:
    from sdd_git.roles.registry import BUILTINS
    from sdd_git.tools.catalog import TOOL_CLASSES

    assert TOOL_CLASSES["handoff"] == "consequential"
    assert TOOLS["handoff"].tool_class == "consequential"
    schema = TOOLS["handoff"].schema.parameters
    assert schema["properties"]["cites"]["type"] == "array"
    assert schema["properties"]["cites"]["items"]["type"] == "string"
    assert schema["required"] == ["to", "task"]
    for builtin in BUILTINS:
        assert "handoff" in offered_tools(builtin, None)
    assert "handoff" in offered_tools(None, None)


def test_a_handoff_stops_and_once_allowed_both_conversations_show_it_and_the_receiver_wakes(
    sdd: SddRunner, root: Root, pair: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decision = decisions.load(root).entries[-1].id
    cites = ["SPEC-0001#S1", decision]
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "sender", "tool_calls": [handoff("receiver", "Check the search", cites)]},
            {"role": "sender", "say": "Handed over."},
            {"role": "receiver", "say": "Checked: the search lists the charge."},
        ],
    )
    first = json.loads(sdd("role", "run", "sender", "--task", "Hand it over", "--json").stdout)
    assert first["exit_code"] == 3
    stop = first["stop"]
    assert stop["action"] == 'Hand the task "Check the search" to the role receiver.'
    assert "handoff" in [t["name"] for t in transcript(tmp_path)[0]["tools"]]
    nothing_sent(root, "sender", "receiver")

    second = sdd("allow", stop["id"], "--json")
    assert second.code == 0, second.stderr
    sent = handoff_messages(root, "sender")
    received = handoff_messages(root, "receiver")
    assert len(sent) == len(received) == 1
    for message in (sent[0], received[0]):
        assert message["from"] == "sender" and message["to"] == "receiver"
        assert message["task"] == "Check the search"
        assert message["cites"] == cites
        assert "SPEC-0001#S1" in message["text"] and decision in message["text"]
    handed = [e for e in events(root, first["run"]) if e["event"] == "handoff"]
    assert [(e["to"], e["cites"], e["sent"]) for e in handed] == [("receiver", cites, True)]
    assert "Handed off to receiver" in tool_results(root, first["run"])[0]

    woken = woken_run(root, "receiver")
    started = woken[0]
    assert started["origin"] == "role"
    assert started["change"] == pair
    assert woken[-1]["status"] == "done"
    # It replies to the handoff in its own conversation, so it sees the task and the cites.
    person = next(e for e in woken if e["event"] == "message" and e["role"] == "user")
    assert f"In reply to {received[0]['id']}" in person["content"]
    assert "SPEC-0001#S1" in person["content"]


def test_an_approval_never_travels_with_a_handoff(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(
        root,
        "sender",
        extra="boundary:\n  always_allow:\n"
        "    - {tool: handoff, inputs: {to: receiver, task: Write a}}\n"
        '    - {tool: write_file, inputs: {path: a.txt, content: "x\\n"}}\n',
    )
    add_role(root, "receiver")
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "sender", "tool_calls": [handoff("receiver", "Write a")]},
            {"role": "sender", "say": "Handed over."},
            {"role": "receiver", "tool_calls": [write_call("a.txt")]},
            {"role": "receiver", "say": "never"},
        ],
    )
    result = sdd("role", "run", "sender", "--task", "Hand it over")
    assert result.code == 0, result.stderr  # the sender's own rule let its handoff run
    woken = woken_run(root, "receiver")
    assert woken[-1]["status"] == "stopped"
    (stop,) = [s for s in stops.pending(root) if s.role == "receiver"]
    assert stop.tool == "write_file" and stop.origin == "role"
    assert stop.expires_at is not None  # a stop of a run another role woke expires
    assert not (root.path / "a.txt").exists()
    assert [e["event"] for e in woken].count("action_done") == 0


def test_with_messaging_off_nothing_is_sent_and_the_sender_is_told(
    sdd: SddRunner, root: Root, pair: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = root.config.read_text()
    assert "messaging: on" in config
    root.config.write_text(config.replace("messaging: on", "messaging: off"))
    confirm(root, ".sdd/config.yaml")  # she wrote it herself
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "sender", "tool_calls": [handoff("receiver", "Check it", ["SPEC-0001#S1"])]},
            {"role": "sender", "say": "Not sent, then."},
            {"role": "receiver", "say": "never"},
        ],
    )
    first = json.loads(sdd("role", "run", "sender", "--task", "Hand it over", "--json").stdout)
    assert sdd("allow", first["stop"]["id"]).code == 0
    (said,) = tool_results(root, first["run"])
    assert said.startswith("Not sent: messaging between roles is off")
    handed = [e for e in events(root, first["run"]) if e["event"] == "handoff"]
    assert [(e["to"], e["cites"], e["sent"]) for e in handed] == [
        ("receiver", ["SPEC-0001#S1"], False)
    ]
    time.sleep(0.5)  # anything started would have written its log by now
    nothing_sent(root, "sender", "receiver")
    assert runs_of(root, "receiver") == []


def test_an_unknown_receiver_is_refused_and_nothing_is_written(
    sdd: SddRunner, root: Root, pair: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "sender", "tool_calls": [handoff("nobody", "Check it")]},
            {"role": "sender", "say": "No such role."},
        ],
    )
    first = json.loads(sdd("role", "run", "sender", "--task", "Hand it over", "--json").stdout)
    assert sdd("allow", first["stop"]["id"]).code == 0
    (said,) = tool_results(root, first["run"])
    assert said == "handoff failed: no role 'nobody'"
    logged = events(root, first["run"])
    assert not [e for e in logged if e["event"] in ("handoff", "action_done")]
    assert [e["tool"] for e in logged if e["event"] == "action_failed"] == ["handoff"]
    nothing_sent(root, "sender", "nobody")


@pytest.mark.parametrize(
    ("cite", "said"),
    [
        ("SPEC-0001#S9", "cites SPEC-0001#S9, and SPEC-0001 has no section S9"),
        ("SPEC-0042#S1", "cites SPEC-0042#S1, and there is no spec SPEC-0042"),
        ("D-0099", "cites D-0099, and there is no decision D-0099"),
        ("CH-0099", "cites CH-0099, and there is no change CH-0099"),
        ("CH-0001/SC-3", "cites CH-0001/SC-3, and CH-0001 has no scenario SC-3"),
        ("the spec", "'the spec' is not a record id"),
    ],
)
def test_a_cite_of_a_record_that_does_not_exist_is_refused_and_nothing_is_written(
    root: Root, pair: str, cite: str, said: str
) -> None:
    context = make_context(root, role="sender", change=pair)
    refused = fails(
        context, "handoff", to="receiver", task="Check it", cites=["SPEC-0001#S1", cite]
    )
    assert said in refused
    nothing_sent(root, "sender", "receiver")


def test_every_kind_of_real_record_may_be_cited(root: Root, pair: str) -> None:
    from sdd_git.records.acceptance import add_scenario

    root.config.write_text(root.config.read_text().replace("messaging: on", "messaging: off"))
    add_scenario(root, pair, "Hotel search", "search hotel", "the charge is listed", False)
    context = make_context(root, role="sender", change=pair)
    cites = ["SPEC-0001#S1", "SPEC-0001", "D-0001", pair, f"{pair}/SC-1", "D-0001"]
    outcome = TOOLS["handoff"].run({"to": "receiver", "task": "Check", "cites": cites}, context)
    assert outcome.data == {
        "handoff": {"to": "receiver", "cites": cites[:5], "sent": False}  # each cite once
    }


def test_handing_off_to_oneself_is_refused(root: Root, pair: str) -> None:
    context = make_context(root, role="sender", change=pair)
    refused = fails(context, "handoff", to="sender", task="Check it")
    assert refused == "handoff: you are sender; hand the task to another role"
    for name in ("../sender", "-x", "Sender"):
        assert "is not a role name" in fails(context, "handoff", to=name, task="Check it")
    nothing_sent(root, "sender", "receiver")
