"""sdd's own state folders are hers alone, or sdd does not use them (issue 21, part 1).

The route: the ignore line `.sdd/local/` matched only a folder, so a committed link
`.sdd/local -> /tmp/x` came with a clone, and her conversations, stops, events and run logs
went into another user's writable folder. Each test uses real git, real links and real modes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sdd_git import lockfile
from sdd_git.events.queue import write_event
from sdd_git.records.person import init
from sdd_git.roles.conversation import add_message
from sdd_git.root import Root
from sdd_git.runner import stops
from sdd_git.runner.clock import system_clock
from sdd_git.runner.logevents import Unknown
from sdd_git.runner.logwriter import RunLog
from sdd_git.statefolders import StateFolderError
from tests.conftest import SddRunner, git

FIX_LINK = "rm .sdd/local"


def _stop() -> stops.Stop:
    return stops.Stop(
        id="stop-abc123", run="run-20260101-000000-abcdef", role="builder", kind="approval",
        action="write a file", choices=stops.APPROVAL_CHOICES, origin="person",
        created_at=0.0, expires_at=None,
    )  # fmt: skip


WRITERS: dict[str, Callable[[Root], object]] = {
    "a stop": lambda root: stops.save(root, _stop()),
    "an event": lambda root: write_event(root, "push", "a" * 40, "watcher", branch="main"),
    "a conversation": lambda root: add_message(
        root, "builder", lambda s: s, sender="person", text="hi"
    ),
    "a lock": lambda root: lockfile.hold(root.local / "locks" / "role-builder.lock").__enter__(),
}


@pytest.fixture
def clone_with_linked_state(tmp_path: Path) -> tuple[Root, Path]:
    """A repository whose author committed `.sdd/local` as a link to a folder anyone may write
    in, cloned by her: git checks the link out as it was committed."""
    shared = tmp_path / "x"
    shared.mkdir()
    shared.chmod(0o1777)  # /tmp-like: another local user's, writable by all
    author = init(tmp_path / "author", product="Expenses").root
    if author.local.exists():
        for entry in sorted(author.local.rglob("*"), reverse=True):
            entry.rmdir() if entry.is_dir() else entry.unlink()
        author.local.rmdir()
    author.local.symlink_to(shared)
    git(author.path, "add", "-A")
    git(author.path, "add", "-f", ".sdd/local")
    git(author.path, "commit", "-q", "-m", "state")
    assert git(author.path, "ls-files", "-s", ".sdd/local").startswith("120000")
    subprocess.run(
        ["git", "clone", "-q", str(author.path), str(tmp_path / "hers")], check=True
    )  # fmt: skip
    hers = Root(tmp_path / "hers")
    assert hers.local.is_symlink() and hers.local.resolve() == shared.resolve()
    return hers, shared


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_committed_link_as_sdd_local_is_refused_with_the_fix_and_nothing_lands_there(
    clone_with_linked_state: tuple[Root, Path], writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, shared = clone_with_linked_state
    monkeypatch.chdir(root.path)  # the hint's command is for her terminal, in the product
    with pytest.raises(StateFolderError) as refused:
        WRITERS[writer](root)
    assert ".sdd/local is a link" in refused.value.message
    assert FIX_LINK in (refused.value.hint or "")
    assert list(shared.iterdir()) == []


def test_her_commands_refuse_a_committed_link_as_sdd_local_and_say_how_to_fix_it(
    clone_with_linked_state: tuple[Root, Path], sdd: SddRunner
) -> None:
    root, shared = clone_with_linked_state
    listed = sdd("stops", cwd=root.path)
    assert listed.code == 1
    assert "error: .sdd/local is a link" in listed.stderr
    assert f"hint: remove the link: {FIX_LINK}" in listed.stderr
    assert "Traceback" not in listed.stderr
    assert list(shared.iterdir()) == []


def test_a_committed_link_as_sdd_role_runs_is_refused_and_no_run_log_lands_there(
    root: Root, tmp_path: Path
) -> None:
    shared = tmp_path / "x"
    shared.mkdir()
    (root.sdd / "role-runs").symlink_to(shared)
    with pytest.raises(StateFolderError, match=r"\.sdd/role-runs is a link"):
        RunLog.open(root, "run-20260101-000000-abcdef", lambda s: s, system_clock)
    assert list(shared.iterdir()) == []


def test_a_group_writable_role_runs_folder_is_refused_with_the_chmod_that_fixes_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = root.sdd / "role-runs"
    runs.mkdir(exist_ok=True)
    runs.chmod(0o775)
    before = sorted(runs.iterdir())
    from tests.runner.scripted import script

    script(tmp_path, monkeypatch, [{"say": "ok"}])
    done = sdd("role", "run", "spec-steward", "--task", "Say ok")
    assert done.code == 1, done.stdout + done.stderr
    assert "error: .sdd/role-runs can be written by your group (mode 775)" in done.stderr
    assert "hint: chmod go-w .sdd/role-runs" in done.stderr
    assert sorted(runs.iterdir()) == before
    runs.chmod(0o755)
    assert sdd("role", "run", "spec-steward", "--task", "Say ok").code == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another uid needs root")
def test_a_state_folder_another_user_owns_is_refused(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root.path)
    root.local.mkdir(exist_ok=True)
    os.chown(root.local, 65534, 65534)  # nobody's
    with pytest.raises(StateFolderError, match="belongs to another user") as refused:
        stops.save(root, _stop())
    assert "mv .sdd/local .sdd/local.not-mine" in (refused.value.hint or "")
    assert not (root.local / "stops").exists()


def test_state_folders_sdd_makes_under_umask_002_are_hers_alone(tmp_path: Path) -> None:
    before = os.umask(0o002)
    try:
        root = init(tmp_path / "p", product="Expenses").root
        RunLog.open(root, "run-20260101-000000-abcdef", lambda s: s, system_clock).append(
            Unknown(name="x")
        )
        stops.save(root, _stop())
    finally:
        os.umask(before)
    for folder in (root.local, root.sdd / "role-runs"):
        assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0, folder


def test_init_writes_ignore_lines_that_match_a_link_as_well_as_a_folder(tmp_path: Path) -> None:
    root = init(tmp_path / "p", product="Expenses").root
    for name in (".sdd/local", ".sdd/role-runs"):
        folder = root.path / name
        if folder.exists():
            os.rename(folder, tmp_path / folder.name)
        folder.symlink_to(tmp_path / "elsewhere")
        # A link that git would commit shows as untracked unless the ignore line matches it.
        assert git(root.path, "status", "--porcelain", "--", name) == "", name
        assert git(root.path, "check-ignore", name).strip() == name


def test_init_adds_the_new_ignore_lines_beside_an_older_files_slashed_ones(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / ".gitignore").write_text("# sdd\n.sdd/role-runs/\n.sdd/local/\n")
    init(folder, product="Expenses")
    lines = (folder / ".gitignore").read_text().splitlines()
    assert lines[:3] == ["# sdd", ".sdd/role-runs/", ".sdd/local/"]
    assert ".sdd/local" in lines and ".sdd/role-runs" in lines


def test_a_linked_state_folder_keeps_no_parse_cache_and_reads_none_planted_there(
    root: Root, tmp_path: Path, sdd: SddRunner
) -> None:
    """`sdd role list` keeps a cache in `.sdd/local/cache`: with `.sdd/local` a link it lists
    without one, and a cache planted in the link's target is never read."""
    shared = tmp_path / "x"
    (shared / "cache" / "roles").mkdir(parents=True)
    planted = {"version": 1, "entries": {"repo:ghost": {"sha": "x", "value": {}}}}
    (shared / "cache" / "roles" / "00.json").write_text(json.dumps(planted))
    if root.local.exists():
        os.rename(root.local, tmp_path / "old-local")
    root.local.symlink_to(shared)
    listed = sdd("role", "list", "--all")
    assert listed.code == 0, listed.stderr
    assert "ghost" not in listed.stdout
    assert sorted(p.name for p in (shared / "cache" / "roles").iterdir()) == ["00.json"]
    assert json.loads((shared / "cache" / "roles" / "00.json").read_text()) == planted
