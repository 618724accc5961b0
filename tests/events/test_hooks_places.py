"""Where sdd's hook can be besides `.git/hooks/HOOK`, checked on real repositories without a hook
manager: a folder core.hooksPath names, a copy nothing runs any more, an unknown hook that
runs sdd's, and a hook from an earlier sdd that chained `HOOK.legacy`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sdd_git.events import hooks as core
from sdd_git.events.hookfile import MARKER, sign
from sdd_git.root import Root
from sdd_git.routines.hookindex import write_index
from tests.conftest import SddRunner
from tests.events.hookhelp import (
    ended,
    event_files,
    git,
    merge_feature,
    product,
    routine,
    runs_of,
    script,
    snapshot,
    wait_until,
    worker_idle,
)


@pytest.fixture
def repo(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    product(root)
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}] * 3))
    yield root
    worker_idle(root)


def hooks_json(sdd: SddRunner) -> dict[str, dict[str, Any]]:
    return {h["hook"]: h for h in json.loads(sdd("hooks", "status", "--json").stdout)["hooks"]}


def merge_fires(root: Root, name: str) -> None:
    head = merge_feature(root, branch=f"b-{name}", name=name)
    [event] = [e for e in event_files(root) if e["kind"] == "pr-merged" and e["ref"] == head]
    [found] = wait_until(lambda: runs_of(root, "on-merge", event["id"]), what="the routine's run")
    wait_until(lambda: ended(found), what="the routine's run ending")


def write(path: Path, text: str, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def test_install_path_writes_into_the_core_hooks_path_folder_with_the_same_chaining(
    repo: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    githooks = repo.path / ".githooks"
    write(githooks / "post-merge", f"#!/bin/sh\necho team >> {trace}\n")
    git(repo.path, "config", "core.hooksPath", ".githooks")
    before, own = snapshot(githooks), snapshot(repo.path / ".git" / "hooks")
    status = hooks_json(sdd)["post-merge"]
    assert status["state"] == "another hook"
    assert status["words"] == (
        "another hook in .githooks: `sdd hooks install --path` keeps it as "
        "post-merge.before-sdd, run first by sdd's"
    )
    assert "not installed in .githooks" in hooks_json(sdd)["post-rewrite"]["words"]
    installed = sdd("hooks", "install", "--path")
    assert installed.code == 0, installed.stderr
    assert "post-merge: installed in .githooks; the hook that was there is kept as " in (
        installed.stderr
    )
    for name in core.HOOK_NAMES:
        assert core.signature((githooks / name).read_bytes()) == "intact"
    assert snapshot(repo.path / ".git" / "hooks") == own  # nothing written where git does not look
    merge_fires(repo, "one")
    assert trace.read_text() == "team\n"
    assert sdd("hooks", "uninstall").code == 0
    assert snapshot(githooks) == before


def test_a_copy_of_sdds_hook_that_nothing_runs_is_said_and_replaced_by_one_git_runs(
    repo: Root, sdd: SddRunner
) -> None:
    """pre-commit's hook deleted by hand leaves sdd's as post-merge.legacy, which git never
    runs: status says so, and install puts sdd's back where git runs it."""
    folder = repo.path / ".git" / "hooks"
    core.install(repo)
    (folder / "post-merge").rename(folder / "post-merge.legacy")
    status = hooks_json(sdd)["post-merge"]
    assert (status["state"], status["fires"]) == ("not installed", False)
    assert status["stale"] == [str(folder / "post-merge.legacy")]
    assert (
        "sdd's copy post-merge.legacy is not run: `sdd hooks install` installs it"
        in (status["words"])
    )
    installed = sdd("hooks", "install")
    assert "removed sdd's unused copy post-merge.legacy" in installed.stderr
    assert not (folder / "post-merge.legacy").exists()
    merge_fires(repo, "one")


def test_an_unknown_hook_that_names_sdds_kept_file_is_said_to_run_it_and_does(
    repo: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    folder = repo.path / ".git" / "hooks"
    core.install(repo)
    (folder / "post-merge").rename(folder / "post-merge.legacy")
    trace = tmp_path / "trace"
    chaining = f'#!/bin/sh\necho theirs >> {trace}\n"$(dirname "$0")/post-merge.legacy" "$@"\n'
    write(folder / "post-merge", chaining)
    status = hooks_json(sdd)["post-merge"]
    assert (status["state"], status["manager"]) == ("installed", "another hook")
    assert "another hook (post-merge) names it, and fires it if it runs it" in status["words"]
    assert sdd("hooks", "install").stderr.startswith("post-merge: already installed")
    merge_fires(repo, "one")
    assert trace.read_text() == "theirs\n"


def test_a_hook_from_an_earlier_sdd_that_chained_hook_legacy_is_moved_to_the_new_name(
    repo: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    folder = repo.path / ".git" / "hooks"
    trace = tmp_path / "trace"
    hers = write(folder / "post-merge", f"#!/bin/sh\necho hers >> {trace}\n", 0o750)
    before = snapshot(folder)
    hers.rename(folder / "post-merge.legacy")
    now = core.render("post-merge")
    body = "\n".join(line for line in now.split("\n") if not line.startswith(MARKER))
    old = body.replace("sdd_legacy=$sdd_here/$sdd_hook.before-sdd\n", "sdd_legacy=$0.legacy\n")
    assert old != body
    write(folder / "post-merge", sign(old))
    status = hooks_json(sdd)["post-merge"]
    assert status["state"] == "out of date" and status["legacy"].endswith("post-merge.legacy")
    installed = sdd("hooks", "install")
    assert installed.code == 0, installed.stderr
    assert "post-merge: updated (chains post-merge.before-sdd)" in installed.stderr
    assert not (folder / "post-merge.legacy").exists()
    merge_fires(repo, "one")
    assert trace.read_text() == "hers\n"
    assert sdd("hooks", "uninstall").code == 0
    assert snapshot(folder) == before


def test_a_relative_path_entry_like_huskys_node_modules_bin_runs_none_of_the_products_files(
    repo: Root, tmp_path: Path
) -> None:
    """husky runs hooks with `node_modules/.bin` first on PATH: a file the product (or any npm
    package) put there named `find` or `mv` would run with her rights inside sdd's hook."""
    core.install(repo)
    trace = tmp_path / "trace"
    planted = repo.path / "node_modules" / ".bin"
    for tool in ("git", "date", "find", "mv", "mkdir", "nohup", "python3", "dirname"):
        write(planted / tool, f'#!/bin/sh\necho "{tool}" >> {trace}\n')
    git(repo.path, "checkout", "-q", "-b", "feature")
    (repo.path / "f.txt").write_text("f\n")
    git(repo.path, "add", "f.txt")
    git(repo.path, "commit", "-q", "-m", "f")
    git(repo.path, "checkout", "-q", "main")
    real_git = shutil.which("git")
    assert real_git is not None
    path = f"node_modules/.bin{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(
        [real_git, "merge", "-q", "--no-ff", "feature", "-m", "m"],
        cwd=repo.path,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [e["kind"] for e in event_files(repo)] == ["pr-merged"]  # the hook did its work
    assert not trace.exists(), trace.read_text()
