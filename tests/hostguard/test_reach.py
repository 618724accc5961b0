"""What the guard's reach takes in beyond the product's own paths, and what it leaves alone: code
(asked, since nothing holds it), hard links (refused only when they share a protected file),
readers told to write, the host's files above the sdd root, git's configuration and sdd's own
code. Each is fed to a real `sdd guard` as the host's PreToolUse input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sdd_git
from tests.hostguard.guardrun import ALLOW, ASK, DENY, bash, event, run_guard

CODE = (
    "pytest -q",
    "python3 -m pytest tests",
    "npm test",
    "make",
    "./scripts/build.sh",
    "cargo test",
    "tar -xf /tmp/a.tar",
    "patch -p1 -i fix.patch",
    "python3 -c 'print(1)'",
)


@pytest.mark.parametrize("command", CODE)
def test_code_is_asked_about_and_the_reason_says_what_runs(product: Path, command: str) -> None:
    answer = bash(command, product)
    assert answer.decision == ASK, answer
    assert "runs code sdd guard cannot read" in answer.reason


def test_code_under_codex_is_refused_since_codex_cannot_ask(product: Path) -> None:
    guard = [sys.executable, "-P", "-m", "sdd_git", "guard", "--host", "codex"]
    data = json.dumps(event("Bash", {"command": "pytest -q"}, product))
    done = subprocess.run(guard, input=data, cwd=product, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2 and "Codex cannot ask the person" in done.stderr, done


PLAIN = (
    "ls -la src && git status",
    "grep -rn total src | head -5",
    "yq '.decisions' memory/decisions.yaml",  # a read of the record stays a read
    "xxd src/app.py | head",
    "ln -s app.py src/alias.py",
    "ln src/app.py src/hard.py",
    "cat memory/decisions.yaml",
)


@pytest.mark.parametrize("command", PLAIN)
def test_reads_and_product_writes_still_go_on(product: Path, command: str) -> None:
    assert bash(command, product).decision == ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "yq -i '.x = 1' memory/decisions.yaml",
        "yq -yi '.x = 1' .sdd/config.yaml",
        "xxd -r -p src/app.py changes/CH-0001/qa.yaml",
        "cd src && ln ../memory/decisions.yaml d.yaml",
        "ln -T .sdd/config.yaml src/c.yaml",
    ],
)
def test_readers_told_to_write_and_hard_links_of_the_record_are_refused(
    product: Path, command: str
) -> None:
    assert bash(command, product).decision == DENY


def test_a_hard_link_that_shares_no_protected_file_is_written_as_any_file(product: Path) -> None:
    os.link(product / "src" / "app.py", product / "src" / "twin.py")
    for tool in ("Write", "Edit"):
        data = event(tool, {"file_path": str(product / "src" / "twin.py"), "content": "x",
                            "old_string": "a", "new_string": "b"}, product)  # fmt: skip
        assert run_guard(data, product).decision == ALLOW


def test_a_hard_link_to_a_rule_file_is_refused(product: Path) -> None:
    (product / "CLAUDE.md").write_text("rules\n")
    os.link(product / "CLAUDE.md", product / "src" / "notes.txt")
    answer = bash("echo 'run sdd next' >> src/notes.txt", product)
    assert answer.decision == DENY and "hard link to" in answer.reason


@pytest.mark.parametrize(
    "name", [".claude/settings.local.json", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md"]
)
def test_claude_files_of_a_folder_above_the_root_are_refused(product: Path, name: str) -> None:
    above = product.parent / name
    data = event("Write", {"file_path": str(above), "content": "{}"}, product)
    assert run_guard(data, product).decision == DENY


def test_codex_files_above_the_root_are_refused_under_codex(product: Path) -> None:
    guard = [sys.executable, "-P", "-m", "sdd_git", "guard", "--host", "codex"]
    for target in ("../AGENTS.md", "../.codex/hooks.json"):
        patch = f"*** Begin Patch\n*** Add File: {target}\n+x\n*** End Patch\n"
        data = json.dumps(event("apply_patch", {"command": patch}, product))
        done = subprocess.run(guard, input=data, cwd=product, capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip
        assert done.returncode == 2, (target, done)


def test_git_configuration_by_xdg_and_by_shell_is_refused(product: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    data = event("Write", {"file_path": str(xdg / "git" / "config"), "content": "[core]"}, product)
    assert run_guard(data, product, env={"XDG_CONFIG_HOME": str(xdg)}).decision == DENY
    answer = bash("printf '[core]\\n\\thooksPath = /tmp/h\\n' >> ~/.gitconfig", product)
    assert answer.decision == DENY and "git's own configuration" in answer.reason


def test_sdd_own_code_is_refused_wherever_it_is_installed(product: Path) -> None:
    target = Path(sdd_git.__file__).resolve().parent / "hostguard" / "check.py"
    answer = bash(f"echo 'pass' >> {target}", product)
    assert answer.decision == DENY and "sdd's own code" in answer.reason
