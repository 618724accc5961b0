from __future__ import annotations

from sdd_git.root import Root
from tests.conftest import SddRunner


def test_agents_install_writes_only_host_stubs_and_no_role(sdd: SddRunner, root: Root) -> None:
    result = sdd("agents", "install", "claude")
    assert result.code == 0, result.stderr
    written = result.stdout.split()
    assert sorted(written) == [
        ".claude/agents/sdd-implementer.md",
        ".claude/agents/sdd-planner.md",
        ".claude/agents/sdd-reviewer.md",
        ".claude/agents/sdd.md",
    ]
    assert "no role was created" in result.stderr
    assert list((root.path / ".sdd/roles").iterdir()) == []


def test_agents_install_unknown_host_is_a_usage_error(sdd: SddRunner) -> None:
    result = sdd("agents", "install", "x")
    assert result.code == 2
    assert "error:" in result.stderr
