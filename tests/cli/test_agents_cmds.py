from __future__ import annotations

import json

from sdd_git.root import Root
from tests.conftest import SddRunner


def test_agents_install_writes_what_claude_reads_and_no_role(sdd: SddRunner, root: Root) -> None:
    result = sdd("agents", "install", "claude")
    assert result.code == 0, result.stderr
    assert result.stdout.split() == ["AGENTS.md", "CLAUDE.md", ".claude/settings.json"]
    assert "Claude Code reads CLAUDE.md" in result.stderr
    assert "no role was created" in result.stderr
    assert list((root.path / ".sdd/roles").iterdir()) == []
    assert json.loads((root.path / ".claude/settings.json").read_text("utf-8"))["permissions"]


def test_agents_install_twice_writes_nothing(sdd: SddRunner) -> None:
    assert sdd("agents", "install", "kilo").code == 0
    again = sdd("agents", "install", "kilo")
    assert again.code == 0
    assert again.stdout == ""
    assert "already up to date: AGENTS.md" in again.stderr


def test_agents_install_says_which_file_grok_reads(sdd: SddRunner) -> None:
    result = sdd("agents", "install", "grok")
    assert result.code == 0
    assert result.stdout.split() == ["AGENTS.md"]
    assert "Grok Build reads AGENTS.md" in result.stderr


def test_agents_install_dry_run_prints_and_writes_nothing(sdd: SddRunner, root: Root) -> None:
    from tests.trusthelp import confirm

    pinned = "git+https://github.com/acme/sdd.git@" + "3f1c2a9b" * 5
    root.config.write_text(root.config.read_text() + f"ci: {{install: '{pinned}'}}\n")
    confirm(root, ".sdd/config.yaml")  # where Copilot's steps install sdd from (ci.install)
    result = sdd("agents", "install", "copilot", "--dry-run")
    assert result.code == 0, result.stderr
    assert "==> .github/workflows/copilot-setup-steps.yml (would create) <==" in result.stdout
    assert "copilot-setup-steps:" in result.stdout
    assert "nothing was written" in result.stderr
    assert not (root.path / "AGENTS.md").exists()
    assert not (root.path / ".github").exists()


def test_agents_install_ollama_exits_2_with_the_provider_hint(sdd: SddRunner, root: Root) -> None:
    result = sdd("agents", "install", "ollama")
    assert result.code == 2
    assert "error: there is no ollama host stub" in result.stderr
    assert "hint:" in result.stderr and "http://localhost:11434/v1" in result.stderr
    assert not (root.path / "AGENTS.md").exists()


def test_agents_install_unknown_host_is_a_usage_error(sdd: SddRunner) -> None:
    result = sdd("agents", "install", "x")
    assert result.code == 2
    assert "error:" in result.stderr


def test_agents_install_copilot_says_it_replaced_a_bare_install_of_sdd(
    sdd: SddRunner, root: Root
) -> None:
    from tests.trusthelp import confirm

    pinned = "git+https://github.com/acme/sdd.git@" + "3f1c2a9b" * 5
    root.config.write_text(root.config.read_text() + f"ci: {{install: '{pinned}'}}\n")
    confirm(root, ".sdd/config.yaml")
    setup = root.path / ".github/workflows/copilot-setup-steps.yml"
    setup.parent.mkdir(parents=True)
    setup.write_text(
        "on: workflow_dispatch\njobs:\n  copilot-setup-steps:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: uv pip install --system SDD-Git==0.1.0\n",
        encoding="utf-8",
    )
    result = sdd("agents", "install", "copilot")
    assert result.code == 0, result.stderr
    assert "the step number 1 installed sdd by its bare name (SDD-Git==0.1.0)" in result.stderr
    assert "ci.install of .sdd/config.yaml" in result.stderr
    assert "SDD-Git" not in setup.read_text("utf-8")
    assert pinned in setup.read_text("utf-8")
