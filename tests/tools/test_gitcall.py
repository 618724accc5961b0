"""sdd's own git calls run nothing a role could have written.

Each test plants one route (a hook, a filter, textconv, fsmonitor, a signing program, a pager,
an external diff, an alias, a planted `git`), runs the tool, and checks that the tool did its
job and the marker the planted program would write is not there. Where plain git would run the
program in the same repository, the test then shows it does: the route was live.
"""

from __future__ import annotations

import dataclasses
import stat
import subprocess
from pathlib import Path

import pytest

from sdd_git.root import Root
from sdd_git.tools import gitcall
from sdd_git.tools.base import ToolContext, ToolFailed
from tests.conftest import commit_all, git
from tests.tools import fails, make_context, run


@pytest.fixture
def ctx(root: Root) -> ToolContext:
    return make_context(root)


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


def program(folder: Path, name: str, marker: Path, then: str = "exit 0") -> Path:
    """A shell script that leaves `marker` behind, then does `then`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\n{then}\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def plain_git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git as a person runs it, with every config file and hook: the control."""
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )


def started(root: Root) -> None:
    (root.path / "a.txt").write_text("one\n", encoding="utf-8")
    commit_all(root.path, "start")


# --- hooks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("hooks", ["hooks", ".husky/_"])
def test_hooks_path_inside_the_product_never_runs(
    ctx: ToolContext, root: Root, markers: Path, hooks: str
) -> None:
    started(root)
    marker = markers / "hook"
    for name in ("pre-commit", "commit-msg", "post-commit", "reference-transaction"):
        program(root.path / hooks, name, marker)
    git(root.path, "config", "core.hooksPath", hooks)
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    outcome = run(ctx, "git_commit", message="Change a", paths=["a.txt"])
    assert outcome.data is not None and outcome.data["files"] == ["a.txt"]
    assert git(root.path, "log", "-1", "--format=%s").strip() == "Change a"
    run(ctx, "git_tag", name="v1", message="one")
    assert not marker.exists()
    (root.path / "a.txt").write_text("three\n", encoding="utf-8")
    assert plain_git(root.path, "commit", "-qam", "by hand").returncode == 0
    assert marker.exists()  # the control: plain git ran the role's hook


def test_the_persons_own_hook_never_runs(ctx: ToolContext, root: Root, markers: Path) -> None:
    # Her pre-commit hook runs pytest, which would load a conftest.py the role wrote.
    started(root)
    marker = markers / "hook"
    program(root.path / ".git" / "hooks", "pre-commit", marker)
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    run(ctx, "git_commit", message="Change a", paths=["a.txt"])
    assert git(root.path, "show", "HEAD:a.txt") == "two\n"
    assert not marker.exists()
    (root.path / "a.txt").write_text("three\n", encoding="utf-8")
    assert plain_git(root.path, "commit", "-qam", "by hand").returncode == 0
    assert marker.exists()


def test_push_runs_no_pre_push_hook(
    ctx: ToolContext, root: Root, markers: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-q", str(remote))
    git(root.path, "remote", "add", "origin", str(remote))
    started(root)
    marker = markers / "hook"
    program(root.path / ".git" / "hooks", "pre-push", marker)
    run(ctx, "git_push", remote="origin", branch="main")
    assert git(remote, "rev-parse", "main") == git(root.path, "rev-parse", "HEAD")
    assert not marker.exists()


# --- filters, textconv, external diff ---------------------------------------------------------


def test_filters_never_run(ctx: ToolContext, root: Root, markers: Path) -> None:
    started(root)
    (root.path / "notes.md").write_text("notes\n", encoding="utf-8")
    (root.path / ".gitattributes").write_text("*.txt filter=evil\n", encoding="utf-8")
    commit_all(root.path, "attributes")  # before the driver exists: nothing runs yet
    marker = markers / "filter"
    clean = program(markers.parent / "bin", "clean", marker, then="cat")
    smudge = program(markers.parent / "bin", "smudge", marker, then="cat")
    git(root.path, "config", "filter.evil.clean", str(clean))
    git(root.path, "config", "filter.evil.smudge", str(smudge))
    git(root.path, "config", "filter.evil.required", "true")
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")  # same size: git must re-read it
    (root.path / "notes.md").write_text("more notes\n", encoding="utf-8")
    assert " M a.txt" in run(ctx, "git_status").text
    assert "+two" in run(ctx, "git_diff").text
    message = fails(ctx, "git_commit", message="m", paths=["a.txt"])
    assert message.startswith("git commit: a.txt (filter evil) goes through a git filter")
    assert "Nothing was committed" in message
    assert git(root.path, "log", "-1", "--format=%s").strip() == "attributes"
    run(ctx, "git_commit", message="Notes", paths=["notes.md"])  # no filter: committed
    assert not marker.exists()
    assert plain_git(root.path, "diff").returncode == 0
    assert marker.exists()


def test_a_filter_driver_named_in_attributes_but_not_configured_is_fine(
    ctx: ToolContext, root: Root
) -> None:
    started(root)
    (root.path / ".gitattributes").write_text("* filter=nothing-configured\n", encoding="utf-8")
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    run(ctx, "git_commit", message="Change a", paths=["a.txt", ".gitattributes"])
    assert git(root.path, "show", "HEAD:a.txt") == "two\n"


def test_textconv_and_diff_drivers_never_run(ctx: ToolContext, root: Root, markers: Path) -> None:
    started(root)
    (root.path / ".gitattributes").write_text("*.txt diff=evil\n", encoding="utf-8")
    marker = markers / "textconv"
    textconv = program(markers.parent / "bin", "textconv", marker, then='cat "$1"')
    git(root.path, "config", "diff.evil.textconv", str(textconv))
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    diff = run(ctx, "git_diff").text
    assert "-one" in diff and "+two" in diff
    assert not marker.exists()
    assert plain_git(root.path, "diff").returncode == 0
    assert marker.exists()
    marker.unlink()
    git(
        root.path,
        "config",
        "diff.evil.command",
        str(program(markers.parent / "bin", "cmd", marker)),
    )
    assert "+two" in run(ctx, "git_diff").text
    assert run(ctx, "git_log").text.endswith("start")
    assert not marker.exists()


def test_an_external_diff_never_runs(ctx: ToolContext, root: Root, markers: Path) -> None:
    started(root)
    marker = markers / "external"
    git(root.path, "config", "diff.external", str(program(markers.parent / "bin", "ext", marker)))
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    assert "+two" in run(ctx, "git_diff").text
    assert run(ctx, "git_log").text.endswith("start")
    assert not marker.exists()
    plain_git(root.path, "diff")
    assert marker.exists()


# --- fsmonitor, signing, pager, aliases -------------------------------------------------------


def test_fsmonitor_never_runs(ctx: ToolContext, root: Root, markers: Path) -> None:
    started(root)
    marker = markers / "fsmonitor"
    git(root.path, "config", "core.fsmonitor", str(program(markers.parent / "bin", "fsm", marker)))
    (root.path / "b.txt").write_text("new\n", encoding="utf-8")
    status = run(ctx, "git_status").text
    assert "?? b.txt" in status
    run(ctx, "git_commit", message="Add b", paths=["b.txt"])
    assert not marker.exists()
    plain_git(root.path, "status")
    assert marker.exists()


def test_signing_never_runs_and_commits_stay_unsigned(
    ctx: ToolContext, root: Root, markers: Path
) -> None:
    started(root)
    marker = markers / "gpg"
    gpg = program(markers.parent / "bin", "gpg", marker, then="exit 1")
    for key, value in (
        ("commit.gpgSign", "true"),
        ("tag.gpgSign", "true"),
        ("tag.forceSignAnnotated", "true"),
        ("log.showSignature", "true"),
        ("gpg.program", str(gpg)),
        ("gpg.ssh.program", str(gpg)),
        ("gpg.x509.program", str(gpg)),
    ):
        git(root.path, "config", key, value)
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    run(ctx, "git_commit", message="Change a", paths=["a.txt"])
    assert "gpgsig" not in git(root.path, "cat-file", "commit", "HEAD")
    run(ctx, "git_tag", name="v1", message="First")
    assert "BEGIN PGP" not in git(root.path, "cat-file", "tag", "v1")
    assert run(ctx, "git_log").text.splitlines()[0].endswith("Change a")
    assert not marker.exists()
    (root.path / "a.txt").write_text("three\n", encoding="utf-8")
    assert plain_git(root.path, "commit", "-qam", "by hand").returncode != 0  # gpg "failed"
    assert marker.exists()


def test_pagers_never_run(ctx: ToolContext, root: Root, markers: Path) -> None:
    # git pages only to a terminal, and sdd's calls have none; the settings are a second lock.
    started(root)
    marker = markers / "pager"
    pager = program(markers.parent / "bin", "pager", marker, then="cat")
    git(root.path, "config", "core.pager", str(pager))
    git(root.path, "config", "pager.status", str(pager))
    git(root.path, "config", "pager.log", str(pager))
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    assert " M a.txt" in run(ctx, "git_status").text
    assert run(ctx, "git_log").text.endswith("start")
    assert "+two" in run(ctx, "git_diff").text
    assert not marker.exists()


def test_an_alias_never_shadows_a_command(
    ctx: ToolContext, root: Root, markers: Path, isolated_home: Path
) -> None:
    started(root)
    marker = markers / "alias"
    with (isolated_home / ".gitconfig").open("a", encoding="utf-8") as config:
        config.write(f"[alias]\n\tstatus = !touch {marker}\n\tlog = !touch {marker}\n")
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    assert run(ctx, "git_status").text.startswith("## main")
    assert run(ctx, "git_log").text.endswith("start")
    assert not marker.exists()


# --- the environment --------------------------------------------------------------------------


def test_git_variables_from_the_environment_are_dropped(
    ctx: ToolContext, root: Root, markers: Path, tmp_path: Path
) -> None:
    started(root)
    elsewhere = tmp_path / "elsewhere"
    git(tmp_path, "init", "-q", str(elsewhere))
    marker = markers / "hook"
    program(tmp_path / "hooks", "pre-commit", marker)
    env = {
        **ctx.child_env,
        "GIT_DIR": str(elsewhere / ".git"),
        "GIT_WORK_TREE": str(elsewhere),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.hooksPath",
        "GIT_CONFIG_VALUE_0": str(tmp_path / "hooks"),
        "GIT_EXTERNAL_DIFF": str(program(markers.parent / "bin", "ext", marker)),
    }
    context = dataclasses.replace(ctx, child_env=env)
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    assert " M a.txt" in run(context, "git_status").text
    assert "+two" in run(context, "git_diff").text
    run(context, "git_commit", message="Change a", paths=["a.txt"])
    assert git(root.path, "log", "-1", "--format=%s %an").strip() == "Change a Test Person"
    assert not marker.exists()


def test_a_git_planted_on_path_inside_the_product_never_runs(
    ctx: ToolContext, root: Root, markers: Path
) -> None:
    started(root)
    marker = markers / "git"
    program(root.path / "bin", "git", marker)
    env = {**ctx.child_env, "PATH": f"{root.path / 'bin'}:bin:{ctx.child_env['PATH']}"}
    context = dataclasses.replace(ctx, child_env=env)
    assert run(context, "git_status").text.startswith("## main")
    assert not marker.exists()


# --- push keeps the person's credentials, never a role's --------------------------------------


def test_push_refuses_configuration_from_inside_the_product(
    ctx: ToolContext, root: Root, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-q", str(remote))
    git(root.path, "remote", "add", "origin", str(remote))
    started(root)
    (root.path / "shared.gitconfig").write_text("[push]\n\tdefault = simple\n", encoding="utf-8")
    git(root.path, "config", "include.path", "../shared.gitconfig")
    message = fails(ctx, "git_push", remote="origin", branch="main")
    assert message.startswith("git's configuration reads shared.gitconfig, a file inside")
    assert "Nothing was pushed" in message
    git(root.path, "config", "--unset", "include.path")
    git(root.path, "config", "credential.helper", "!./tools/cred.sh")
    message = fails(ctx, "git_push", remote="origin", branch="main")
    assert message.startswith("git's setting credential.helper runs '!./tools/cred.sh'")
    git(root.path, "config", "--unset", "credential.helper")
    git(root.path, "init", "--bare", "-q", "mirror.git")
    git(root.path, "remote", "add", "mirror", "mirror.git")
    message = fails(ctx, "git_push", remote="mirror", branch="main")
    assert message.startswith("the remote mirror is a folder inside the product")
    assert "Nothing was pushed" in fails(ctx, "git_push")  # no remote named: all are checked
    assert plain_git(remote, "rev-parse", "--verify", "-q", "main").returncode != 0


def test_settings_for_a_push_and_for_everything_else(ctx: ToolContext, root: Root) -> None:
    found = gitcall.settings(ctx)
    everything_else = gitcall.hardening(found, push=False)
    push = gitcall.hardening(found, push=True)
    for options in (everything_else, push):
        assert options[0] == "--no-pager"
        assert "core.hooksPath=/dev/null" in options
        assert "protocol.ext.allow=never" in options
    assert "credential.helper=" in everything_else and "credential.helper=" not in push
    assert "protocol.allow=never" in everything_else and "protocol.allow=never" not in push


def test_filter_drivers_are_switched_off_by_name(ctx: ToolContext, root: Root) -> None:
    git(root.path, "config", "filter.lfs.process", "git-lfs filter-process")
    git(root.path, "config", "filter.Crypt.clean", "git-crypt clean")
    options = gitcall.hardening(gitcall.settings(ctx), push=False)
    for name in ("lfs", "Crypt"):
        for part in ("clean=", "smudge=", "process=", "required=false"):
            assert f"filter.{name}.{part}" in options
    odd = [gitcall.Setting("file:x", "filter.a=b.clean", "evil")]
    with pytest.raises(ToolFailed, match="cannot switch off"):
        gitcall.hardening(odd, push=False)


def test_a_submodules_own_filter_never_runs(
    ctx: ToolContext, root: Root, markers: Path, tmp_path: Path
) -> None:
    library = tmp_path / "library"
    git(tmp_path, "init", "-q", str(library))
    (library / "lib.txt").write_text("a\n", encoding="utf-8")
    commit_all(library, "lib")
    started(root)
    git(
        root.path, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(library), "lib"
    )
    commit_all(root.path, "with lib")
    marker = markers / "filter"
    clean = program(markers.parent / "bin", "clean", marker, then="cat")
    # The submodule's own configuration lives in .git/modules/lib/config.
    git(root.path / "lib", "config", "filter.inner.clean", str(clean))
    (root.path / "lib" / ".gitattributes").write_text("* filter=inner\n", encoding="utf-8")
    (root.path / "lib" / "lib.txt").write_text("b\n", encoding="utf-8")  # same size
    (root.path / "a.txt").write_text("two\n", encoding="utf-8")
    assert " M a.txt" in run(ctx, "git_status").text
    assert "+two" in run(ctx, "git_diff").text
    assert not marker.exists()
    plain_git(root.path, "status")
    assert marker.exists()
