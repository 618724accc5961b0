"""What routines rely on for main-build-failed: a role reads a failed Jenkins build and a failed
GitHub Actions run, with their log excerpts, inside the boundary (no stop), through the real
built-in connectors talking to loopback servers in each service's wire format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import stops
from tests.conftest import SddRunner
from tests.connectors import test_github, test_jenkins
from tests.connectors.core_support import configure
from tests.connectors.loopback import Loopback
from tests.runner.scripted import add_role, events, script


@pytest.fixture
def servers() -> Iterator[tuple[Loopback, Loopback]]:
    with (
        Loopback(test_jenkins.routes(), test_jenkins.html("error_404.html", 404)) as jenkins,
        Loopback(test_github.routes()) as github,
    ):
        yield jenkins, github


def _read(connector: str, operation: str, **args: Any) -> dict[str, Any]:
    return {
        "tool": "connector_read",
        "args": {"connector": connector, "operation": operation, "args": args},
    }


def test_a_role_reads_a_failed_jenkins_build_and_actions_run_with_no_stop(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    servers: tuple[Loopback, Loopback],
) -> None:
    jenkins, github = servers
    monkeypatch.setenv("CI_TOKEN", test_jenkins.TOKEN)
    monkeypatch.setenv("GH_TOKEN_FOR_TESTS", test_github.TOKEN)
    configure(
        root,
        connectors={
            "ci": {"kind": "jenkins", "base_url": jenkins.url, "token_env": "CI_TOKEN",
                   "user": test_jenkins.USER},
            "github": {"base_url": github.url, "token_env": "GH_TOKEN_FOR_TESTS"},
        },
    )  # fmt: skip
    add_role(root, "diagnoser", produces="other")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [_read("ci", "get_build", job="acme/app/main", number=42)]},
            {"tool_calls": [_read("github", "get_workflow_run", repo="acme/app", run_id=30433642)]},
            {"say": "LoginTest.acceptsLongPassword fails on both."},
        ],
    )
    result = sdd("role", "run", "diagnoser", "--json", "--task",
                 "Why did the main build fail on @ci and on @github?")  # fmt: skip
    outcome = json.loads(result.stdout)
    assert (outcome["status"], outcome["exit_code"]) == ("done", 0)
    assert stops.pending(root) == []
    logged = events(root, outcome["run"])
    results = [str(e["content"]) for e in logged if e["event"] == "tool_result"]
    assert "finished: FAILURE" in results[0]
    assert "[ERROR]   LoginTest.acceptsLongPassword:31" in results[0]
    assert "conclusion failure" in results[1]
    assert "FAILED tests/test_login.py::test_long_password" in results[1]
    assert not [e for e in logged if e["event"] in ("stop", "action_done", "rejected")]
    assert {s.method for s in jenkins.requests + github.requests} == {"GET"}
    everything = "\n".join(
        p.read_text(errors="replace") for p in root.sdd.rglob("*") if p.is_file()
    )
    assert test_jenkins.TOKEN not in everything and test_github.TOKEN not in everything
