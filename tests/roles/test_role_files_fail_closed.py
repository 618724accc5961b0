"""Role files fail closed (issue 22, 3): a misspelt key gets "did you mean", as config's do; a
role that does not say what it produces is offered read and draft tools only, never git_push or
deploy; `sdd role create` asks what it produces in a terminal and otherwise needs --produces."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdd_git.roles.registry import find_role
from sdd_git.roles.rolefile import RoleFileError, parse_role, read_role
from sdd_git.root import Root
from sdd_git.runner.state import offered_tools
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, events, script
from tests.trusthelp import confirm

REPO = Path(__file__).resolve().parents[2]
ROLE = """---
role: builder
job: Implement accepted spec sections
level: 0
toolPolicy.delegation: deny
{produces}---
Small commits.
"""
PATH = Path(".sdd/roles/builder/ROLE.md")
ACTIONS = {"write_file", "run_command", "git_push", "deploy", "handoff", "delete_file"}


def _builder(root: Root, produces_line: str) -> None:
    path = root.sdd / "roles" / "builder" / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ROLE.format(produces=produces_line))
    confirm(root, ".sdd/roles/builder/ROLE.md")


def test_a_misspelt_produces_is_an_error_that_asks_did_you_mean() -> None:
    with pytest.raises(RoleFileError) as caught:
        parse_role(ROLE.format(produces="prodcues: code\n"), PATH, folder_name="builder")
    problem = caught.value.problems[0]
    assert problem.render() == (
        ".sdd/roles/builder/ROLE.md:6: key 'prodcues': unknown key 'prodcues': "
        "did you mean 'produces'?"
    )
    assert caught.value.hint == "rename it: produces: code"


def test_a_run_of_a_role_with_a_misspelt_key_is_refused_before_any_call(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    _builder(root, "prodcues: code\n")
    script(tmp_path, monkeypatch, [{"say": "Done."}])
    result = sdd("role", "run", "builder", "--task", "Push it")
    assert result.code == 1
    assert "did you mean 'produces'?" in result.stderr and "Traceback" not in result.stderr
    assert not list((root.sdd / "role-runs").glob("*.jsonl"))


def test_a_role_that_does_not_say_what_it_produces_gets_read_and_draft_tools_only(
    root: Root,
) -> None:
    _builder(root, "")
    role, _ = find_role(root, "builder", use_cache=False)
    assert role.produces is None
    offered = set(offered_tools(role, None))
    assert "read_file" in offered and "draft_reading" in offered and "remember" in offered
    assert not offered & ACTIONS
    assert "draft_plan" not in offered  # a lead's only


def test_its_push_is_rejected_as_not_offered_in_a_real_run(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    _builder(root, "")
    push = {"tool": "git_push", "args": {"purpose": "ship it"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [push]}, {"say": "Could not push."}])
    result = sdd("role", "run", "builder", "--task", "Push it", "--json")
    assert result.code == 0, result.stderr
    run_id = next((root.sdd / "role-runs").glob("run-*.jsonl")).stem
    rejected = [e for e in events(root, run_id) if e["event"] == "rejected"]
    assert [(e["tool"], e["reason"]) for e in rejected] == [("git_push", "not_offered")]
    assert not [e for e in events(root, run_id) if e["event"] == "stop"]


def test_produces_other_said_on_purpose_keeps_every_tool(root: Root) -> None:
    _builder(root, "produces: other\n")
    role, _ = find_role(root, "builder", use_cache=False)
    offered = set(offered_tools(role, None))
    assert {"git_push", "deploy", "write_file", "handoff"} <= offered


def test_role_create_with_no_terminal_needs_produces_and_writes_nothing(
    sdd: SddRunner, root: Root
) -> None:
    result = sdd("role", "create", "helper", "--job", "Help")
    assert result.code == 2
    assert result.stderr.startswith("error: say what the role produces; nothing was written\n")
    assert "hint: add --produces (reading, scenario, code," in result.stderr
    assert not (root.sdd / "roles" / "helper").exists()
    made = sdd("role", "create", "helper", "--job", "Help", "--produces", "review")
    assert made.code == 0, made.stderr
    assert read_role(root.sdd / "roles" / "helper" / "ROLE.md").profile.produces == "review"


def test_role_create_in_a_terminal_asks_what_it_produces(root: Root) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "role", "create", "helper", "--job", "Help"],
        cwd=root.path,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "NO_COLOR": "1"},
        close_fds=True,
    )
    os.close(follower)
    seen, answered = b"", False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
        if not answered and b"What does helper produce?" in seen:
            os.write(leader, b"code\n")
            answered = True
    process.wait(timeout=30)
    os.close(leader)
    said = seen.decode("utf-8", "replace")
    assert answered, said
    assert "(reading, scenario, code, release-notes, plan, review, other)" in said
    assert process.returncode == 0, said
    assert read_role(root.sdd / "roles" / "helper" / "ROLE.md").profile.produces == "code"


def test_every_shipped_template_says_what_it_produces() -> None:
    folders = sorted((REPO / "templates").iterdir())
    assert folders
    for folder in folders:
        parsed = read_role(folder / "ROLE.md", source="template", folder_name=folder.name)
        assert parsed.profile.produces is not None, folder.name
