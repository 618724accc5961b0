"""The guard classifies every connector call before anything runs: what is the person's by any
route is rejected with `forbidden_connector`, even when a saved always-allow rule names the call
exactly (the guard stands before the boundary), and nothing reaches the connector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.root import Root
from sdd_git.runner import guard, stops
from sdd_git.tools.catalog import TOOL_CLASSES
from tests.conftest import SddRunner
from tests.connectors.core_support import calls, configure, file_keyring, scripted
from tests.runner.scripted import accepted_change, add_role, events, script

__all__ = ["file_keyring"]

EVERY_TOOL = tuple(TOOL_CLASSES)


def call(tool: str, connector: str, operation: str, **args: Any) -> dict[str, Any]:
    inputs: dict[str, Any] = {"connector": connector, "operation": operation, "args": args}
    if tool == "connector_act":
        inputs["purpose"] = "it is time"
    return {"tool": tool, "args": inputs}


FORBIDDEN_ROUTES = {
    "a GitHub release": call(
        "connector_act", "github", "create_release", repo="acme/app", tag_name="v1.0", name="v1"
    ),
    "a Jira transition to QA Passed": call(
        "connector_act", "jira", "transition_issue", key="ABC-1", transition="QA Passed"
    ),
    "a Jenkins job given sdd complete": call(
        "connector_act", "jenkins", "trigger_build", job="tidy",
        parameters={"COMMAND": "sdd complete CH-0001"},
    ),
    "a tracker field that mirrors a stage": call(
        "connector_act", "jira", "update_issue", key="ABC-1", fields={"sdd_stage": "verify"}
    ),
    "an act through the read tool": call(
        "connector_read", "github", "merge_pull_request", repo="acme/app", number=12
    ),
    "a post through the act tool": call(
        "connector_act", "slack", "post_message", channel="releases", text="Shipped!"
    ),
    "a deploy target whose job runs sdd complete": {
        "tool": "deploy", "args": {"target": "finish"}
    },
}  # fmt: skip


@pytest.fixture
def everything(root: Root, tmp_path: Path) -> None:
    """github, jira, jenkins and slack as scripted stand-ins that would answer anything."""
    answer = {"text": "it ran"}
    configure(
        root,
        connectors={
            "github": scripted(tmp_path, "github", {
                "create_release": answer, "merge_pull_request": answer}),
            "jira": scripted(tmp_path, "jira", {
                "transition_issue": answer, "update_issue": answer}, like="jira"),
            "jenkins": scripted(tmp_path, "jenkins", {"trigger_build": answer}, like="jenkins"),
            "slack": scripted(tmp_path, "slack", {"post_message": answer}, like="slack",
                              send_draft=answer),
        },
        deploy={"finish": {"connector": "jenkins", "job": "close",
                           "parameters": {"RUN": "sdd complete"}}},
    )  # fmt: skip


@pytest.mark.parametrize("route", sorted(FORBIDDEN_ROUTES))
def test_every_forbidden_route_is_rejected_even_when_always_allowed(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    everything: None,
    route: str,
) -> None:
    accepted_change(root)
    forbidden = FORBIDDEN_ROUTES[route]
    inputs = {k: v for k, v in forbidden["args"].items() if k != "purpose"}
    rule = yaml.safe_dump(
        {"boundary": {"always_allow": [{"tool": forbidden["tool"], "inputs": inputs}]}},
        default_flow_style=True,
        width=4096,
    ).strip()[1:-1]
    add_role(root, "eager", produces="other", extra=rule + "\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [forbidden]}, {"say": "Refused."}])
    task = "Do it with @github @jira @jenkins @slack"
    result = sdd("role", "run", "eager", "--task", task, "--json")
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "done", result.stderr
    rejected = [e for e in events(root, outcome["run"]) if e["event"] == "rejected"]
    assert [r["reason"] for r in rejected] == ["forbidden_connector"]
    assert stops.pending(root) == []
    for name in ("github", "jira", "jenkins", "slack"):
        assert calls(tmp_path, name) == [], name  # nothing reached any connector
    assert not any(e["event"] == "action_done" for e in events(root, outcome["run"]))
    assert not (root.local / "drafts").exists()


def check(root: Root, tool: str, attached: tuple[str, ...] = ("github",), **args: Any) -> Any:
    return guard.check(tool, args, root.path, EVERY_TOOL, connectors=attached)


def test_the_guard_names_an_unknown_connector_operation_or_missing_argument(
    root: Root, tmp_path: Path
) -> None:
    configure(root, connectors={"github": scripted(tmp_path, "github", {})})
    unknown = check(root, "connector_read", connector="gitlub", operation="get_issue")
    assert unknown.code == "unknown_connector" and "gitlub" in unknown.message
    operation = check(root, "connector_read", connector="github", operation="get_isue")
    assert operation.code == "unknown_operation" and "get_issue" in operation.message
    needs = check(
        root, "connector_read", connector="github", operation="get_issue", args={"repo": "a/b"}
    )
    assert needs.code == "bad_input" and "needs number" in needs.message
    fine = check(
        root, "connector_read", connector="github", operation="get_issue",
        args={"repo": "a/b", "number": 1},
    )  # fmt: skip
    assert isinstance(fine, guard.Clearance)


def test_a_connector_not_attached_to_the_run_is_rejected(root: Root, tmp_path: Path) -> None:
    configure(root, connectors={"github": scripted(tmp_path, "github", {})})
    found = check(
        root, "connector_read", attached=(), connector="github", operation="get_issue",
        args={"repo": "a/b", "number": 1},
    )  # fmt: skip
    assert found.code == "connector_not_attached" and "@github" in found.message


def test_an_unknown_operation_of_a_connector_the_table_does_not_know_is_an_act(
    root: Root, tmp_path: Path
) -> None:
    configure(
        root,
        connectors={"docs": {**scripted(tmp_path, "docs", {}, like=None), "reads": ["search"]}},
    )
    read = check(root, "connector_read", attached=("docs",), connector="docs", operation="search")
    assert isinstance(read, guard.Clearance)
    other = check(root, "connector_read", attached=("docs",), connector="docs", operation="wipe")
    assert other.code == "forbidden_connector" and "connector_act" in other.message
    acted = check(
        root, "connector_act", attached=("docs",), connector="docs", operation="wipe",
        purpose="p",
    )  # fmt: skip
    assert isinstance(acted, guard.Clearance)  # it stops at the boundary instead


def test_a_forbidden_call_is_named_forbidden_even_where_connectors_are_not_offered(
    root: Root, tmp_path: Path
) -> None:
    configure(root, connectors={"github": scripted(tmp_path, "github", {})})
    release = {"connector": "github", "operation": "create_release",
               "args": {"repo": "a/b", "tag_name": "v1"}, "purpose": "p"}  # fmt: skip
    found = guard.check("connector_act", release, root.path, ("read_file",))
    assert isinstance(found, guard.Rejection) and found.code == "forbidden_connector"
    read = {"connector": "github", "operation": "get_issue", "args": {"repo": "a/b", "number": 1}}
    assert guard.check("connector_read", read, root.path, ("read_file",)).code == "not_offered"  # type: ignore[union-attr]
