"""Real git commands with sdd's hooks installed: merges, fetches and rebases fire the routines
that listen, in a worker detached from git, and nothing else; a chained hook keeps its place and
its exit code; nothing sdd does can fail a git command."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sdd_git.events import hooks as core
from sdd_git.events.queue import done_folder, events_folder
from sdd_git.root import Root
from sdd_git.routines.hookindex import write_index
from tests.events.hookhelp import (
    ROLE,
    ended,
    event_files,
    git,
    merge_feature,
    product,
    routine,
    runs_of,
    script,
    wait_until,
    worker_idle,
)


@pytest.fixture
def repo(root: Root) -> Iterator[Root]:
    """The product, committed, with sdd's hooks installed; every worker done by the end."""
    product(root)
    core.install(root)
    yield root
    worker_idle(root)


def hooks_folder(root: Root) -> Path:
    return root.path / ".git" / "hooks"


def write_hook(root: Root, name: str, body: str) -> Path:
    path = hooks_folder(root) / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


def tracer(folder: Path, name: str, trace: Path) -> Path:
    """An executable that only leaves a line in `trace` when something starts it."""
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{trace}"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_merge_into_main_fires_the_pr_merged_routine_and_its_run_ends(
    repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    routine(repo, "on-merge", "pr-merged")
    write_index(repo)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}]))
    head = merge_feature(repo)
    [event] = [e for e in event_files(repo) if e["kind"] == "pr-merged"]
    assert (event["source"], event["ref"], event["branch"]) == ("hook", head, "main")
    [run] = wait_until(lambda: runs_of(repo, "on-merge", event["id"]), what="the routine's run")
    assert run["origin"] == "routine"
    wait_until(lambda: ended(run), what="the routine's run ending")
    done = wait_until(lambda: (done_folder(repo) / f"{event['id']}.json").exists())
    assert done


def test_a_merge_into_another_branch_fires_nothing(
    repo: Root, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    routine(repo, "on-merge", "pr-merged")
    routine(repo, "on-push", "push main")
    write_index(repo)
    trace = tmp_path / "python.trace"
    core.install(repo, python=str(tracer(tmp_path, "python", trace)))
    git(repo.path, "checkout", "-q", "-b", "develop")
    merge_feature(repo, into="develop")
    # The hook writes its events before git returns: none now means none at all.
    assert event_files(repo) == []
    assert not trace.exists()


def test_a_fetch_that_moves_origin_main_is_seen_as_a_push_to_main(
    repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    routine(repo, "on-push", "push main")
    write_index(repo)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Saw the push."}]))
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(origin))
    git(repo.path, "remote", "add", "origin", str(origin))
    git(repo.path, "fetch", "-q", "origin")  # origin/main appears: already at main's commit
    worker_idle(repo)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    (other / "theirs.txt").write_text("theirs\n")
    git(other, "add", "theirs.txt")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", "main")
    moved_to = git(other, "rev-parse", "HEAD").strip()
    git(repo.path, "fetch", "-q", "origin")
    pushes = [e for e in event_files(repo) if e["kind"] == "push" and e["ref"] == moved_to]
    assert len(pushes) == 1
    assert (pushes[0]["branch"], pushes[0]["source"], pushes[0]["hook"]) == (
        "main",
        "hook",
        "reference-transaction",
    )
    wait_until(lambda: runs_of(repo, "on-push", pushes[0]["id"]), what="the push routine's run")


def test_a_pull_with_rebase_onto_main_fires_pr_merged(
    repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    routine(repo, "on-merge", "pr-merged")
    write_index(repo)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read it."}]))
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(origin))
    git(repo.path, "remote", "add", "origin", str(origin))
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    (other / "theirs.txt").write_text("theirs\n")
    git(other, "add", "theirs.txt")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", "main")
    (repo.path / "mine.txt").write_text("mine\n")
    git(repo.path, "add", "mine.txt")
    git(repo.path, "commit", "-q", "-m", "mine")
    git(repo.path, "pull", "-q", "--rebase", "origin", "main")
    head = git(repo.path, "rev-parse", "HEAD").strip()
    merged = [e for e in event_files(repo) if e["kind"] == "pr-merged"]
    assert [(e["ref"], e["hook"]) for e in merged] == [(head, "post-rewrite")]
    wait_until(lambda: runs_of(repo, "on-merge", merged[0]["id"]), what="the routine's run")


def test_a_hook_that_was_there_still_runs_with_its_arguments_and_stdin_and_keeps_its_exit_code(
    root: Root, tmp_path: Path
) -> None:
    product(root)
    trace = tmp_path / "legacy.trace"
    write_hook(root, "post-merge", f'echo "post-merge $*" >> "{trace}"\nexit 3\n')
    write_hook(
        root,
        "reference-transaction",
        f'cat >> "{trace}"\n[ "$1" = prepared ] && [ -e "{tmp_path}/refuse" ] && exit 1\nexit 0\n',
    )
    core.install(root)
    merge_feature(root)
    assert "post-merge 0" in trace.read_text()
    # git ignores post-merge's exit code; run the hook as git does to read it.
    ran = subprocess.run(
        [str(hooks_folder(root) / "post-merge"), "0"], cwd=root.path, stdin=subprocess.DEVNULL
    )
    assert ran.returncode == 3
    # In `prepared`, reference-transaction's exit code can stop the update: git sees the old
    # hook's refusal through sdd's hook, and the old hook got git's lines on its stdin.
    before = git(root.path, "rev-parse", "HEAD").strip()
    (tmp_path / "refuse").touch()
    (root.path / "late.txt").write_text("late\n")
    git(root.path, "add", "late.txt")
    refused = subprocess.run(
        ["git", "commit", "-q", "-m", "late"], cwd=root.path, capture_output=True, text=True
    )
    assert refused.returncode != 0
    assert git(root.path, "rev-parse", "HEAD").strip() == before
    assert re.search(rf"^{before} [0-9a-f]{{40}} refs/heads/main$", trace.read_text(), re.M)


def test_sdd_skip_hooks_writes_no_event_and_the_chained_hook_still_runs(
    root: Root, tmp_path: Path
) -> None:
    product(root)
    trace = tmp_path / "legacy.trace"
    write_hook(root, "post-merge", f'echo ran >> "{trace}"\n')
    core.install(root)
    routine(root, "on-merge", "pr-merged")
    routine(root, "on-push", "push main")
    write_index(root)
    git(root.path, "checkout", "-q", "-b", "feature")
    (root.path / "f.txt").write_text("f\n")
    git(root.path, "add", "f.txt")
    git(root.path, "commit", "-q", "-m", "f")
    git(root.path, "checkout", "-q", "main")
    git(root.path, "merge", "-q", "--no-ff", "feature", "-m", "m", env={"SDD_SKIP_HOOKS": "1"})
    assert trace.read_text() == "ran\n"
    assert event_files(root) == []
    assert not events_folder(root).exists()


def test_with_no_routine_listening_no_event_is_written_and_no_python_starts(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    product(root)
    trace = tmp_path / "python.trace"
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    tracer(fake_bin, "python3", trace)  # the hooks' fallback interpreter
    tracer(fake_bin, "python", trace)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    core.install(root, python=str(tracer(tmp_path, "sdd-python", trace)))
    nightly = root.sdd / "roles" / ROLE / "routines" / "nightly.yaml"
    nightly.parent.mkdir(parents=True, exist_ok=True)
    nightly.write_text('name: nightly\nschedule: "0 9 * * 1-5"\ninput: the day\nexpected: a note\n')
    routine(root, "on-merge", "pr-merged", paused=True)
    write_index(root)  # a schedule and a paused routine: nothing a hook could fire
    merge_feature(root)
    git(root.path, "commit", "-q", "--allow-empty", "-m", "moves main")
    assert event_files(root) == []
    assert not trace.exists()
    # The same repository with a listener does start the interpreter the hook names.
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    merge_feature(root, name="g")
    wait_until(lambda: trace.exists(), what="the traced interpreter starting")
    assert "sdd-python -P -m sdd_git event-worker" in trace.read_text()  # -P: no cwd import
    assert [e["kind"] for e in event_files(root)] == ["pr-merged"]


@pytest.mark.parametrize("broken", ["provider", "role"])
def test_a_failing_routine_never_fails_the_git_command(
    repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    routine(repo, "on-merge", "pr-merged")
    write_index(repo)
    if broken == "provider":
        monkeypatch.setenv("SDD_PROVIDER", f"script:{tmp_path / 'no-such-script.yaml'}")
    else:
        monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "x"}]))
        role_file = repo.sdd / "roles" / ROLE / "ROLE.md"
        role_file.write_text("---\nrole: [unclosed\n---\n", encoding="utf-8")
    merge_feature(repo)  # git() raises on a non-zero exit
    [event] = event_files(repo)
    done = done_folder(repo) / f"{event['id']}.json"
    wait_until(done.exists, what="the event reaching done/")
    [outcome] = json.loads(done.read_text())["outcomes"]
    assert outcome["status"] in ("error", "failed")
    assert outcome["routine"] == f"{ROLE}/on-merge"
