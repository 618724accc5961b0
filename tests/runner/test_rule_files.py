"""Rules come only from the person: files that define roles, skills and their rules are
protected paths for file tools and shell writes alike, in the product and in `$SDD_HOME`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import guard
from sdd_git.sandbox.policy import RECORD_FOLDERS
from sdd_git.tools.catalog import TOOL_CLASSES

EVERY_TOOL = tuple(TOOL_CLASSES)


def _check(root: Path, tool: str, **args: Any) -> guard.Rejection | guard.Clearance:
    return guard.check(tool, {"purpose": "p", **args}, root, EVERY_TOOL)


def _shell(root: Path, command: str) -> guard.Rejection | guard.Clearance:
    return _check(root, "run_command", command=command)


def _refused(verdict: guard.Rejection | guard.Clearance) -> str:
    assert isinstance(verdict, guard.Rejection), verdict
    assert verdict.code == "protected_path", verdict
    return verdict.message


def test_the_record_folders_are_the_sandbox_policys() -> None:
    assert guard.PROTECTED_TOP == RECORD_FOLDERS


def test_the_refusal_says_rules_come_only_from_the_person(root: Root) -> None:
    message = _refused(_check(root.path, "write_file", path="docs/ROLE.md", content="x"))
    assert "rules come only from the person" in message
    message = _refused(_shell(root.path, "cp x .github/skills/s/SKILL.md"))
    assert "rules come only from the person" in message


def test_deleting_a_role_file_is_refused(root: Root) -> None:
    _refused(_check(root.path, "delete_file", path="src/pack/SKILL.md"))


def test_a_symlink_to_a_role_file_is_the_role_file(root: Root) -> None:
    (root.path / "pack").mkdir()
    (root.path / "pack" / "ROLE.md").write_text("x")
    os.symlink("pack/ROLE.md", root.path / "alias.md")
    _refused(_check(root.path, "write_file", path="alias.md", content="x"))
    _refused(_shell(root.path, "echo x > alias.md"))


def test_sdd_home_is_protected_by_its_absolute_path(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "elsewhere" / "sdd-home"
    monkeypatch.setenv("SDD_HOME", str(home))
    _refused(_shell(root.path, f"echo x > {home}/roles/x/notes.yaml"))
    _refused(_shell(root.path, f"cp -r src {home}/roles/evil"))
    _refused(_shell(root.path, f"rm -rf {tmp_path}/elsewhere"))  # it holds $SDD_HOME
    assert isinstance(_shell(root.path, f"echo x > {tmp_path}/elsewhere/notes"), guard.Clearance)


def test_sdd_home_inside_the_product_is_protected_for_file_tools(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_HOME", str(root.path / "sdd-home"))
    _refused(_check(root.path, "write_file", path="sdd-home/config.yaml", content="x"))


def test_copying_a_folder_that_holds_a_role_file_is_refused(root: Root, tmp_path: Path) -> None:
    pack = tmp_path / "outside" / "deep" / "er"
    pack.mkdir(parents=True)
    (pack / "Role.md").write_text("x")
    message = _refused(_shell(root.path, f"cp -r {tmp_path}/outside src/roles"))
    assert "Role.md" in message
    _refused(_shell(root.path, f"mv {tmp_path}/outside src/roles"))
    _refused(_shell(root.path, f"rsync -a {tmp_path}/outside/ src/roles/"))


def test_copying_a_product_that_holds_roles_out_of_it_is_fine(root: Root, tmp_path: Path) -> None:
    (root.path / ".sdd" / "roles" / "builder").mkdir(parents=True)
    (root.path / ".sdd" / "roles" / "builder" / "ROLE.md").write_text("x")
    verdict = _shell(root.path, f"cp -r . {tmp_path}/build")
    assert isinstance(verdict, guard.Clearance) and verdict.certain
    _refused(_shell(root.path, f"cp -r . {root.path}/src/copy"))  # it lands in the product
    _refused(_shell(root.path, f"mv .sdd/roles {tmp_path}/roles"))  # the record, moved away


def test_a_folder_too_big_to_search_makes_a_copy_uncertain(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guard, "_SOURCE_SCAN_LIMIT", 3)
    big = tmp_path / "big"
    big.mkdir()
    for index in range(5):
        (big / f"f{index}.txt").write_text("x")
    verdict = _shell(root.path, f"cp -r {big} src/big")
    assert isinstance(verdict, guard.Clearance) and not verdict.certain


def test_a_folder_above_a_rule_folder_is_protected_only_when_it_holds_one(root: Root) -> None:
    assert isinstance(_shell(root.path, "rm -rf .github"), guard.Clearance)
    (root.path / ".github" / "skills").mkdir(parents=True)
    _refused(_shell(root.path, "rm -rf .github"))
    # Deleting some files under it is the person's call, not a refusal.
    verdict = _shell(root.path, "find .github -name '*.orig' -delete")
    assert isinstance(verdict, guard.Clearance) and not verdict.certain


def test_a_program_handed_a_role_file_is_uncertain(root: Root) -> None:
    verdict = _shell(root.path, "mytool docs/ROLE.md")
    assert isinstance(verdict, guard.Clearance) and not verdict.certain


def test_reading_role_files_stays_allowed(root: Root) -> None:
    for command in ("cat docs/ROLE.md", "grep -rn name templates", "ls .claude/agents"):
        verdict = _shell(root.path, command)
        assert isinstance(verdict, guard.Clearance) and verdict.certain, command
    assert isinstance(_check(root.path, "read_file", path="templates/x/ROLE.md"), guard.Clearance)


@pytest.mark.parametrize(
    "path",
    [
        ".pre-commit-config.yaml",
        "lefthook.yml",
        ".config/lefthook.yml",
        "lefthook-local.yml",
        ".lefthook/post-merge/run.sh",
        ".husky/post-merge",
    ],
)
def test_the_hook_managers_files_are_protected(root: Root, path: str) -> None:
    # What pre-commit, lefthook or husky name runs at her next commit or merge, outside any
    # sandbox: a role that wrote one would run a command with all her rights.
    _refused(_check(root.path, "write_file", path=path, content="x"))
    _refused(_shell(root.path, f"printf 'pre-commit:\\n' > {path}"))
