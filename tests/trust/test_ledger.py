"""Her ledger: what she confirmed counts, and nothing a repository carries can stand in for it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sdd_git.paths import display
from sdd_git.records.person import init
from sdd_git.root import Root
from sdd_git.statefolders import StateFolderError
from sdd_git.trust import ledger
from sdd_git.trust.pending import ledger_for
from tests.conftest import commit_all, git

SURFACE = {"boundary": {"always_allow": [{"tool": "run_command", "inputs": {"command": "ls"}}]}}


def test_a_recorded_surface_is_confirmed_and_any_other_is_not(root: Root) -> None:
    ledger.record(root, [(".sdd/roles/a/ROLE.md", SURFACE)], "test")
    read = ledger.read(root)
    assert read.confirmed(".sdd/roles/a/ROLE.md", SURFACE)
    assert not read.confirmed(".sdd/roles/a/ROLE.md", {**SURFACE, "level": 5})
    assert not read.confirmed(".sdd/roles/b/ROLE.md", SURFACE)
    assert read.before(".sdd/roles/a/ROLE.md") == SURFACE
    assert read.problem is None


def test_a_ledger_copied_from_another_folder_confirms_nothing(root: Root, tmp_path: Path) -> None:
    """A valid ledger of her other clone, copied (or committed past .gitignore) into this one."""
    ledger.record(root, [("k", SURFACE)], "test")
    other = init(tmp_path / "other", None).root
    shutil.copy(ledger.ledger_path(root), ledger.ledger_path(other))
    read = ledger.read(other)
    assert read.entries == {}
    assert "anchor" in (read.problem or "")


def test_a_ledger_that_arrives_by_git_confirms_nothing(root: Root, tmp_path: Path) -> None:
    """An attacker's branch force-adds .sdd/local/trust.json; a fresh clone gets it."""
    ledger.record(root, [(".sdd/config.yaml", {"provider": {"base_url": "http://evil"}})], "x")
    git(root.path, "add", "-f", ".sdd/local/trust.json")
    commit_all(root.path, "planted")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(root.path), str(clone))
    assert (clone / ".sdd/local/trust.json").is_file()
    assert ledger.read(Root(clone.resolve())).entries == {}


def test_a_rewritten_ledger_confirms_nothing(root: Root) -> None:
    """A command (or anyone who can write the file) edits it: it no longer matches its anchor."""
    ledger.record(root, [("k", SURFACE)], "test")
    path = ledger.ledger_path(root)
    path.write_text(path.read_text().replace('"k"', '"other"'))
    assert ledger.read(root).entries == {}


def test_a_linked_state_folder_holds_no_ledger(root: Root, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.move(root.local, elsewhere) if root.local.exists() else elsewhere.mkdir()
    os.symlink(elsewhere, root.local)
    assert ledger.read(root).entries == {}
    assert "link" in (ledger.read(root).problem or "")
    from sdd_git.errors import RecordError

    with pytest.raises(RecordError, match="cannot record"):
        ledger.record(root, [("k", SURFACE)], "test")


def test_a_ledger_others_may_write_confirms_nothing(root: Root) -> None:
    ledger.record(root, [("k", SURFACE)], "test")
    os.chmod(ledger.ledger_path(root), 0o666)
    assert ledger.read(root).entries == {}


def test_on_a_ci_engine_the_ledger_is_not_consulted(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ledger_for(root) is not None
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert ledger_for(root) is None


def test_a_person_command_never_confirms_in_passing_what_she_had_not(root: Root) -> None:
    before = {"level": 0}
    assert ledger.record_written(root, "k", None, before, "create", existed=False)
    after = {"level": 1}
    assert ledger.record_written(root, "k", before, after, "edit")
    # A merge replaced it meanwhile: her next edit leaves the merged surface unconfirmed.
    merged = {"level": 50}
    assert not ledger.record_written(root, "k", merged, {"level": 50, "x": 1}, "edit")
    assert ledger.read(root).confirmed("k", after)


def test_a_group_writable_state_folder_confirms_nothing_and_is_refused_with_the_fix(
    root: Root,
) -> None:
    """Many systems give each user a group of her own and umask 002. A `.sdd/local` her group
    may write in could hold what a group member planted: the ledger there confirms nothing,
    and recording in it is refused, saying the chmod that fixes it."""
    os.chmod(root.local, 0o775)
    assert ledger.read(root).problem is not None
    with pytest.raises(StateFolderError) as refused:
        ledger.record(root, [("k", SURFACE)], "test")
    assert refused.value.hint == "chmod go-w " + display(root.local)
    os.chmod(root.local, 0o755)
    ledger.record(root, [("k", SURFACE)], "test")
    assert ledger.read(root).confirmed("k", SURFACE)


def test_a_state_folder_sdd_makes_under_umask_002_is_hers_alone(
    root: Root,
) -> None:
    shutil.rmtree(root.local)
    before = os.umask(0o002)
    try:
        ledger.record(root, [("k", SURFACE)], "test")
    finally:
        os.umask(before)
    assert os.stat(root.local).st_mode & 0o077 == 0
    assert ledger.read(root).confirmed("k", SURFACE)
