"""The shell side of the hooks, fed exactly what git feeds them: which ref moves fire which
events, what a bad index does, and the event file the shell writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sdd_git.events import hooks as core
from sdd_git.events.queue import pending
from sdd_git.root import Root
from sdd_git.routines.hookindex import index_path, write_index
from tests.events.hookhelp import event_files, product, routine, wait_until

OLD, NEW = "1" * 40, "2" * 40
ZERO = "0" * 40


@pytest.fixture
def repo(root: Root, tmp_path: Path) -> Root:
    """Hooks installed with an interpreter that only leaves a trace: no worker runs here."""
    product(root, role=None)
    starter = tmp_path / "python"
    starter.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path / "started"}"\n')
    starter.chmod(0o755)
    core.install(root, python=str(starter))
    return root


def transaction(root: Root, state: str, *lines: str) -> int:
    hook = root.path / ".git" / "hooks" / "reference-transaction"
    text = "".join(f"{line}\n" for line in lines)
    return subprocess.run([str(hook), state], cwd=root.path, input=text, text=True).returncode


def pushes(root: Root) -> list[tuple[str, str]]:
    return sorted((e["branch"], e["ref"]) for e in event_files(root) if e["kind"] == "push")


def test_a_committed_move_of_a_listened_branch_or_its_remote_copy_is_a_push(
    repo: Root, tmp_path: Path
) -> None:
    routine(repo, "on-main", "push main")
    routine(repo, "on-release", "push release/1.0")
    write_index(repo)
    other = "3" * 40
    assert (
        transaction(
            repo,
            "committed",
            f"{OLD} {NEW} refs/heads/main",
            f"{OLD} {NEW} HEAD",
            f"{ZERO} {other} refs/remotes/origin/release/1.0",
            f"{OLD} {other} refs/heads/feature",  # nobody listens
            f"{OLD} {other} refs/tags/main",  # a tag is not a branch
            f"{OLD} {ZERO} refs/remotes/origin/main",  # deleted: fires nothing
            f"{other} {other} refs/heads/release/1.0",  # did not move
        )
        == 0
    )
    assert pushes(repo) == [("main", NEW), ("release/1.0", other)]
    names = sorted(p.name for p in (repo.local / "events").glob("*.json"))
    assert names == [
        f"ev-hook-push-main-{NEW}.json",
        f"ev-hook-push-release+1.0-{other}.json",
    ]
    started = tmp_path / "started"
    wait_until(started.exists, what="the worker being started")  # detached: it may lag
    assert f"-m sdd_git event-worker {repo.path}" in started.read_text()


def test_the_event_file_the_shell_writes_is_one_the_queue_reads(repo: Root) -> None:
    routine(repo, "on-main", "push main")
    write_index(repo)
    transaction(repo, "committed", f"{OLD} {NEW} refs/heads/main")
    [event] = pending(repo)
    assert (event.kind, event.ref, event.branch, event.source) == ("push", NEW, "main", "hook")
    assert event.extra == {"hook": "reference-transaction"}
    assert event.at.endswith("Z") and len(event.at) == 20
    assert not list((repo.local / "events").glob(".tmp-*"))


def test_the_same_move_seen_twice_is_one_event_even_after_it_is_done(repo: Root) -> None:
    routine(repo, "on-main", "push main")
    write_index(repo)
    transaction(repo, "committed", f"{OLD} {NEW} refs/heads/main")
    transaction(repo, "committed", f"{OLD} {NEW} refs/remotes/origin/main")
    assert len(event_files(repo)) == 1
    [path] = (repo.local / "events").glob("*.json")
    (repo.local / "events" / "done").mkdir()
    path.rename(repo.local / "events" / "done" / path.name)
    transaction(repo, "committed", f"{OLD} {NEW} refs/heads/main")
    assert pending(repo) == []


def test_nothing_happens_before_the_update_is_committed(repo: Root, tmp_path: Path) -> None:
    routine(repo, "on-main", "push main")
    write_index(repo)
    for state in ("prepared", "aborted"):
        assert transaction(repo, state, f"{OLD} {NEW} refs/heads/main") == 0
    assert event_files(repo) == []
    assert not (tmp_path / "started").exists()


@pytest.mark.parametrize(
    "index",
    [
        "main ma'in\nlisten push ma'in\n",  # a quote would end up inside the JSON
        "main main\nlisten push ma\\in\n",
        "main -x\nlisten push -x\n",
    ],
)
def test_an_index_with_a_name_the_shell_cannot_trust_fires_nothing(
    repo: Root, index: str, tmp_path: Path
) -> None:
    index_path(repo).parent.mkdir(parents=True, exist_ok=True)
    index_path(repo).write_text(index)
    assert transaction(repo, "committed", f"{OLD} {NEW} refs/heads/main") == 0
    assert event_files(repo) == []


def test_a_value_that_is_not_a_commit_id_fires_nothing(repo: Root) -> None:
    routine(repo, "on-main", "push main")
    write_index(repo)
    transaction(
        repo,
        "committed",
        f"{OLD} ref:refs/heads/other refs/heads/main",  # a symbolic ref's new value
        f'{OLD} {"2" * 39}" refs/heads/main',
        f"{OLD} {'A' * 40} refs/heads/main",  # git writes lower case
    )
    assert event_files(repo) == []


def test_post_merge_of_a_squash_fires_nothing(repo: Root) -> None:
    routine(repo, "on-merge", "pr-merged")
    write_index(repo)
    hook = repo.path / ".git" / "hooks" / "post-merge"
    assert subprocess.run([str(hook), "1"], cwd=repo.path).returncode == 0
    assert event_files(repo) == []
    assert subprocess.run([str(hook), "0"], cwd=repo.path).returncode == 0
    [event] = event_files(repo)
    assert (event["kind"], event["hook"]) == ("pr-merged", "post-merge")
    assert json.loads(event["_path"].read_text())["id"] == event["_path"].stem


def test_a_chained_post_rewrite_gets_gits_stdin_and_its_exit_code_is_the_hooks(
    repo: Root, tmp_path: Path
) -> None:
    legacy = repo.path / ".git" / "hooks" / "post-rewrite.before-sdd"
    seen = tmp_path / "seen"
    legacy.write_text(f'#!/bin/sh\necho "args: $*" > "{seen}"\ncat >> "{seen}"\nexit 4\n')
    legacy.chmod(0o755)
    hook = repo.path / ".git" / "hooks" / "post-rewrite"
    lines = f"{OLD} {NEW}\n{NEW} {OLD} extra\n"
    ran = subprocess.run([str(hook), "rebase"], cwd=repo.path, input=lines, text=True)
    assert ran.returncode == 4
    assert seen.read_text() == f"args: rebase\n{lines}"
