"""Every route of the policy table, run through the guard: must-match examples are stopped the
way the table says, must-not-match examples pass. For a "runs_code" route, must-match examples
pass the guard but run code (no saved rule allows them without a sandbox), and must-not-match
examples do not."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import guard
from sdd_git.tools.catalog import TOOL_CLASSES
from tests.shellpolicy.routes import ROUTES, Route

EVERY_TOOL = tuple(TOOL_CLASSES)


def _args(route: Route, example: str) -> tuple[str, dict[str, Any]]:
    if route.tool == "run_command":
        return "run_command", {"command": example, "purpose": "p"}
    if route.tool == "write_file":
        return "write_file", {"path": example, "content": "x", "purpose": "p"}
    if route.tool == "git_commit":
        return "git_commit", {"message": "m", "paths": [example]}
    return example, {}  # the example is the tool's name


@pytest.fixture
def product(root: Root) -> Path:
    qa = root.path / "changes" / "CH-0001" / "qa.yaml"
    qa.parent.mkdir(parents=True)
    qa.write_text("[]\n")
    os.symlink("changes/CH-0001/qa.yaml", root.path / "notes.md")
    os.symlink("memory", root.path / "records")
    (root.path / "pack" / "builder").mkdir(parents=True)
    (root.path / "pack" / "builder" / "ROLE.md").write_text("---\nname: builder\n---\n")
    (root.path / ".claude" / "agents").mkdir(parents=True)
    (root.path / ".claude" / "agents" / "reviewer.md").write_text("a reviewer\n")
    (root.path / "guide").mkdir()
    (root.path / "guide" / "AGENTS.md").write_text("Be brief.\n")
    return root.path


def _cases(matching: bool) -> list[Any]:
    return [
        pytest.param(route, example, id=f"{route.id}: {example}")
        for route in ROUTES
        for example in (route.must_match if matching else route.must_not_match)
    ]


@pytest.mark.parametrize(("route", "example"), _cases(True))
def test_must_match(product: Path, route: Route, example: str) -> None:
    tool, args = _args(route, example)
    verdict = guard.check(tool, args, product, EVERY_TOOL)
    if route.code == "uncertain":
        assert isinstance(verdict, guard.Clearance) and not verdict.certain, verdict
    elif route.code == "runs_code":
        assert isinstance(verdict, guard.Clearance), f"{example!r} was rejected: {verdict}"
        assert verdict.runs_code and verdict.reasons, f"{route.what}: {example!r}: {verdict}"
    else:
        assert isinstance(verdict, guard.Rejection), f"{route.what}: {example!r} passed"
        assert verdict.code == route.code, verdict


@pytest.mark.parametrize(("route", "example"), _cases(False))
def test_must_not_match(product: Path, route: Route, example: str) -> None:
    tool, args = _args(route, example)
    verdict = guard.check(tool, args, product, EVERY_TOOL)
    assert isinstance(verdict, guard.Clearance), f"{example!r} was rejected: {verdict}"
    if route.code == "uncertain":
        assert verdict.certain, example
    if route.code == "runs_code":
        assert not verdict.runs_code, f"{example!r} counted as running code: {verdict.reasons}"


def test_the_table_has_an_adversarial_suite_worth_the_name() -> None:
    assert sum(len(r.must_match) for r in ROUTES) >= 40


def test_every_tool_has_a_class_and_an_executor_or_a_runner_home() -> None:
    from sdd_git.tools.toolbox import HANDOFF_SCHEMA, LOOP_SCHEMAS, TOOLS

    for name, kind in TOOL_CLASSES.items():
        assert kind in ("read", "draft", "loop", "consequential"), name
        assert name in TOOLS or name in LOOP_SCHEMAS or name == HANDOFF_SCHEMA.name, name
    for name, tool in TOOLS.items():
        assert TOOL_CLASSES.get(name) == tool.tool_class, name
