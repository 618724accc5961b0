"""`sdd hooks install | uninstall | status`: the manners of a careful hook manager, checked on
real repositories: existing hooks chained and given back byte for byte, core.hooksPath
respected, only sdd's own unchanged files ever replaced or removed."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from sdd_git.events import hooks as core
from sdd_git.root import Root
from sdd_git.routines.hookindex import index_path
from tests.conftest import SddRunner
from tests.events.hookhelp import git, routine, snapshot


def hooks_folder(root: Root) -> Path:
    return root.path / ".git" / "hooks"


def write_hook(root: Root, name: str, text: str, mode: int = 0o755) -> Path:
    path = hooks_folder(root) / name
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_install_writes_three_marked_executable_hooks_and_the_index(
    root: Root, sdd: SddRunner
) -> None:
    routine(root, "on-merge", "pr-merged")
    result = sdd("hooks", "install")
    assert result.code == 0, result.stderr
    for name in core.HOOK_NAMES:
        path = hooks_folder(root) / name
        assert path.stat().st_mode & 0o777 == 0o755
        data = path.read_bytes()
        assert core.signature(data) == "intact"
        assert f"SDD_PYTHON={sys.executable}\n".encode() in data
        assert f"{name}: installed" in result.stderr
    assert "listen pr-merged" in index_path(root).read_text(encoding="utf-8")
    status = sdd("hooks", "status", "--json")
    states = {h["hook"]: h["state"] for h in json.loads(status.stdout)["hooks"]}
    assert states == dict.fromkeys(core.HOOK_NAMES, "installed")


def test_installing_again_changes_nothing_and_never_chains_sdd_to_itself(
    root: Root, sdd: SddRunner
) -> None:
    assert sdd("hooks", "install").code == 0
    before = snapshot(hooks_folder(root))
    again = sdd("hooks", "install")
    assert again.code == 0 and "already installed" in again.stderr
    assert snapshot(hooks_folder(root)) == before
    assert not list(hooks_folder(root).glob("*.before-sdd"))


def test_hooks_already_there_are_chained_and_uninstall_gives_the_folder_back_byte_for_byte(
    root: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    write_hook(root, "post-merge", "#!/bin/sh\necho merged >> merged.log\n", 0o750)
    write_hook(root, "post-rewrite", "#!/bin/sh\nexit 0\n", 0o644)  # git does not run it
    shared = tmp_path / "team-hook"
    shared.write_text("#!/bin/sh\nexit 0\n")
    os.symlink(shared, hooks_folder(root) / "reference-transaction")
    before = snapshot(hooks_folder(root))
    assert sdd("hooks", "install").code == 0
    for name in core.HOOK_NAMES:
        assert core.signature((hooks_folder(root) / name).read_bytes()) == "intact"
    assert (hooks_folder(root) / "reference-transaction.before-sdd").is_symlink()
    assert (hooks_folder(root) / "post-merge.before-sdd").stat().st_mode & 0o777 == 0o750
    status = sdd("hooks", "status")
    assert "installed, chains post-merge.before-sdd" in status.stdout
    result = sdd("hooks", "uninstall")
    assert result.code == 0, result.stderr
    assert "post-merge.before-sdd is post-merge again" in result.stderr
    assert snapshot(hooks_folder(root)) == before


def test_uninstall_after_a_plain_install_leaves_the_folder_as_git_init_made_it(
    root: Root, sdd: SddRunner
) -> None:
    before = snapshot(hooks_folder(root))
    assert sdd("hooks", "install").code == 0
    assert sdd("hooks", "uninstall").code == 0
    assert snapshot(hooks_folder(root)) == before
    status = sdd("hooks", "status", "--json")
    assert {h["state"] for h in json.loads(status.stdout)["hooks"]} == {"not installed"}


def test_core_hooks_path_set_elsewhere_refuses_with_the_fix_and_writes_nothing(
    root: Root, sdd: SddRunner
) -> None:
    git(root.path, "config", "core.hooksPath", ".githooks")
    before = snapshot(hooks_folder(root))
    result = sdd("hooks", "install")
    assert result.code == 1
    assert "core.hooksPath is set to .githooks" in result.stderr
    assert "git config --unset core.hooksPath" in result.stderr
    assert "sdd hooks install --path" in result.stderr
    assert snapshot(hooks_folder(root)) == before
    assert not (root.path / ".githooks").exists()
    assert not index_path(root).exists()


def test_core_hooks_path_naming_the_repositorys_own_folder_is_no_obstacle(
    root: Root, sdd: SddRunner
) -> None:
    git(root.path, "config", "core.hooksPath", ".git/hooks")
    assert sdd("hooks", "install").code == 0
    assert core.signature((hooks_folder(root) / "post-merge").read_bytes()) == "intact"


def test_a_hook_changed_after_install_is_reported_never_overwritten_and_never_removed(
    root: Root, sdd: SddRunner
) -> None:
    assert sdd("hooks", "install").code == 0
    path = hooks_folder(root) / "post-merge"
    path.write_text(path.read_text() + "echo mine\n")
    assert "modified by someone else" in sdd("hooks", "status").stdout
    before = snapshot(hooks_folder(root))
    refused = sdd("hooks", "install")
    assert refused.code == 1 and "changed since" in refused.stderr
    assert snapshot(hooks_folder(root)) == before
    result = sdd("hooks", "uninstall")
    assert "post-merge: left: sdd wrote it, but it was changed since" in result.stderr
    assert path.read_text().endswith("echo mine\n")
    assert not (hooks_folder(root) / "post-rewrite").exists()


def test_a_hook_and_a_chained_file_both_foreign_are_refused_before_any_write(
    root: Root, sdd: SddRunner
) -> None:
    write_hook(root, "reference-transaction", "#!/bin/sh\nexit 0\n")
    write_hook(root, "reference-transaction.before-sdd", "#!/bin/sh\nexit 0\n")
    before = snapshot(hooks_folder(root))
    result = sdd("hooks", "install")
    assert result.code == 1 and "neither is sdd's" in result.stderr
    assert snapshot(hooks_folder(root)) == before  # post-merge was not written either


def test_a_chained_file_alone_is_not_brought_back_to_life(root: Root, sdd: SddRunner) -> None:
    write_hook(root, "post-merge.before-sdd", "#!/bin/sh\nexit 0\n")
    result = sdd("hooks", "install")
    assert result.code == 1 and "git does not run it now" in result.stderr


def test_install_refuses_inside_a_role_run(
    root: Root, sdd: SddRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_RUN_ID", "run-1")
    before = snapshot(hooks_folder(root))
    result = sdd("hooks", "install")
    assert result.code == 1 and "inside a role run" in result.stderr
    assert snapshot(hooks_folder(root)) == before


def test_an_sdd_root_below_the_top_of_its_repository_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.errors import SddError
    from sdd_git.root import init_root

    git(tmp_path, "init", "-q")
    inner = init_root(tmp_path / "sub", product="x").root
    with pytest.raises(SddError, match="not the top of its git working tree"):
        core.install(inner)


def test_status_says_when_core_hooks_path_sends_git_elsewhere(root: Root, sdd: SddRunner) -> None:
    assert sdd("hooks", "install").code == 0
    git(root.path, "config", "core.hooksPath", "elsewhere")
    result = sdd("hooks", "status")
    assert "core.hooksPath is set to elsewhere" in result.stderr
    assert "no routine listens" in result.stderr


def test_installed_files_are_executable_from_the_first_moment(root: Root) -> None:
    core.install(root)
    for name in core.HOOK_NAMES:
        mode = (hooks_folder(root) / name).stat().st_mode
        assert mode & stat.S_IXUSR
    assert not [p for p in hooks_folder(root).iterdir() if p.name.endswith(".sdd-tmp")]
