"""The git hooks decide in the shell, before any Python: they too write events only into a
`.sdd/local` that is a real folder of hers, writable by her alone (issue 21, part 1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sdd_git.events import hooks as core
from sdd_git.root import Root
from sdd_git.routines.hookindex import write_index
from tests.events.hookhelp import (
    event_files,
    merge_feature,
    product,
    routine,
    script,
    worker_idle,
)


@pytest.fixture
def listening(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Root:
    """A product whose hooks are installed and whose index says a routine listens."""
    product(root)
    core.install(root)
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}]))
    return root


def test_a_hook_writes_no_event_through_a_linked_sdd_local(listening: Root, tmp_path: Path) -> None:
    """Another user's folder, with an index planted in it that says a routine listens."""
    shared = tmp_path / "x"
    shutil.copytree(listening.local, shared)
    before = sorted(p.relative_to(shared) for p in shared.rglob("*"))
    shutil.rmtree(listening.local)
    listening.local.symlink_to(shared)

    merge_feature(listening)

    assert sorted(p.relative_to(shared) for p in shared.rglob("*")) == before
    assert not (shared / "events").exists()


def test_a_hook_writes_no_event_into_a_group_writable_sdd_local(listening: Root) -> None:
    listening.local.chmod(0o775)
    merge_feature(listening)
    assert event_files(listening) == []
    listening.local.chmod(0o755)
    merge_feature(listening, name="g")
    assert [e["kind"] for e in event_files(listening)] == ["pr-merged"]
    worker_idle(listening)  # the worker that hook started is done before the folder goes
