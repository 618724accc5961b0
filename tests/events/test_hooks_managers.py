"""sdd's hooks beside the real hook managers: pre-commit 4.7, lefthook 2.2 and husky 9, each
installed after sdd and before it, in a real repository with a real merge. The merge fires sdd's
routine and the manager's own hook; `sdd hooks status` says so, and says when it would not
(a merge then fires nothing, as it says); uninstall leaves the manager as it found it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.events import hooks as core
from sdd_git.root import Root
from sdd_git.routines.hookindex import write_index
from tests.conftest import SddRunner
from tests.events import managers
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

ORDERS = ["sdd first", "manager first"]


@pytest.fixture
def repo(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The product with a routine on pr-merged and a scripted model; workers done at the end."""
    product(root)
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}] * 4))
    yield root
    worker_idle(root)


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}: {done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def hooks_json(sdd: SddRunner) -> dict[str, dict[str, Any]]:
    result = sdd("hooks", "status", "--json")
    assert result.code == 0, result.stderr
    return {h["hook"]: h for h in json.loads(result.stdout)["hooks"]}


def merge_fires(root: Root, name: str) -> None:
    """A merge into main: its pr-merged event is written, and the routine's run for it ends."""
    head = merge_feature(root, branch=f"b-{name}", name=name)
    [event] = [e for e in event_files(root) if e["kind"] == "pr-merged" and e["ref"] == head]
    [found] = wait_until(lambda: runs_of(root, "on-merge", event["id"]), what="the routine's run")
    wait_until(lambda: ended(found), what="the routine's run ending")


def merge_fires_nothing(root: Root, name: str) -> None:
    head = merge_feature(root, branch=f"b-{name}", name=name)
    # The hook writes its event before git returns: none now means sdd's hook did not run.
    assert [e for e in event_files(root) if e["ref"] == head] == []


def ran(trace: Path) -> list[str]:
    return trace.read_text().split() if trace.exists() else []


def add_lines(root: Root, sdd: SddRunner) -> None:
    """What she does with the lines `sdd hooks install` printed: each block into its file (a
    lefthook job merged into the hook's jobs, husky's lines at the end of its script)."""
    for hook in hooks_json(sdd).values():
        if not hook["lines"]:
            continue
        config = Path(hook["called_from"])
        if config.name.startswith("lefthook"):
            found = yaml.safe_load(config.read_text()) or {}
            for name, body in yaml.safe_load(hook["lines"]).items():
                found.setdefault(name, {}).setdefault("jobs", []).extend(body["jobs"])
            config.write_text(yaml.safe_dump(found, sort_keys=False))
        else:
            config.write_text(config.read_text() + hook["lines"])


# --- pre-commit ------------------------------------------------------------------------------


def pre_commit_install(root: Root, trace: Path) -> str:
    config = {
        "repos": [
            {
                "repo": "local",
                "hooks": [
                    {
                        "id": "mine",
                        "name": "mine",
                        "entry": f"sh -c 'echo pre-commit >> {trace}'",
                        "language": "system",
                        "stages": ["post-merge"],
                        "always_run": True,
                        "pass_filenames": False,
                    }
                ],
            }
        ]
    }
    (root.path / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(root.path, "add", ".pre-commit-config.yaml")
    git(root.path, "commit", "-q", "-m", "pre-commit")
    return run(root.path, str(managers.pre_commit()), "install", "-t", "post-merge")


@pytest.mark.parametrize("order", ORDERS)
def test_pre_commit_runs_sdds_hook_as_its_legacy_hook_in_either_order(
    repo: Root, sdd: SddRunner, tmp_path: Path, order: str
) -> None:
    trace = tmp_path / "trace"
    folder = repo.path / ".git" / "hooks"
    if order == "sdd first":
        assert sdd("hooks", "install").code == 0
        said = pre_commit_install(repo, trace)
        assert "migration mode" in said  # pre-commit moved sdd's hook to post-merge.legacy
    else:
        pre_commit_install(repo, trace)
        installed = sdd("hooks", "install")
        assert installed.code == 0, installed.stderr
        assert "post-merge: installed as post-merge.legacy" in installed.stderr
    assert "File generated by pre-commit" in (folder / "post-merge").read_text()
    assert core.signature((folder / "post-merge.legacy").read_bytes()) == "intact"
    status = hooks_json(sdd)["post-merge"]
    assert (status["state"], status["manager"]) == ("installed", "pre-commit")
    assert status["fires"] is True
    assert status["path"] == str(folder / "post-merge.legacy")
    assert "pre-commit's hook (post-merge) runs it first" in status["words"]
    assert "installed as post-merge.legacy" in sdd("hooks", "status").stdout

    merge_fires(repo, "one")
    assert ran(trace) == ["pre-commit"]
    again = sdd("hooks", "install")  # nothing to do, and no refusal ("neither is sdd's")
    assert again.code == 0 and "post-merge: already installed" in again.stderr

    before = (folder / "post-merge").read_bytes()
    removed = sdd("hooks", "uninstall")
    assert "post-merge: post-merge.legacy: removed" in removed.stderr, removed.stderr
    assert not (folder / "post-merge.legacy").exists()
    assert (folder / "post-merge").read_bytes() == before  # pre-commit's, untouched
    merge_fires_nothing(repo, "two")
    assert ran(trace) == ["pre-commit", "pre-commit"]


def test_a_hook_of_hers_survives_sdd_and_pre_commit_installed_over_it_and_comes_back(
    repo: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    """pre-commit moves the hook it finds to HOOK.legacy, over whatever is there: sdd keeps
    the hook it chains as HOOK.before-sdd, so pre-commit's move never overwrites hers."""
    trace = tmp_path / "trace"
    folder = repo.path / ".git" / "hooks"
    hers = folder / "post-merge"
    hers.write_text(f"#!/bin/sh\necho hers >> {trace}\n")
    hers.chmod(0o750)
    before = snapshot(folder)
    assert sdd("hooks", "install").code == 0
    pre_commit_install(repo, trace)
    assert (folder / "post-merge.before-sdd").read_text() == f"#!/bin/sh\necho hers >> {trace}\n"
    status = hooks_json(sdd)["post-merge"]
    assert status["fires"] and status["legacy"] == str(folder / "post-merge.before-sdd")

    merge_fires(repo, "one")
    assert ran(trace) == ["hers", "pre-commit"]  # hers first (chained by sdd), then pre-commit

    run(repo.path, str(managers.pre_commit()), "uninstall", "-t", "post-merge")
    assert sdd("hooks", "uninstall").code == 0
    assert snapshot(folder) == before


def test_sdd_installed_over_pre_commits_migrated_hook_chains_it(
    repo: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    """Her hook, then pre-commit (hers becomes post-merge.legacy), then sdd: sdd takes
    post-merge.legacy, where pre-commit runs it, and runs hers first; uninstall gives
    pre-commit its legacy hook back."""
    trace = tmp_path / "trace"
    folder = repo.path / ".git" / "hooks"
    (folder / "post-merge").write_text(f"#!/bin/sh\necho hers >> {trace}\n")
    (folder / "post-merge").chmod(0o755)
    pre_commit_install(repo, trace)
    before = snapshot(folder)
    installed = sdd("hooks", "install")
    assert installed.code == 0, installed.stderr
    assert "kept as post-merge.before-sdd" in installed.stderr
    merge_fires(repo, "one")
    assert ran(trace) == ["hers", "pre-commit"]
    assert sdd("hooks", "uninstall").code == 0
    assert snapshot(folder) == before


# --- lefthook --------------------------------------------------------------------------------


def lefthook_install(root: Root, trace: Path) -> str:
    config = {"post-merge": {"jobs": [{"name": "mine", "run": f"echo lefthook >> {trace}"}]}}
    (root.path / "lefthook.yml").write_text(yaml.safe_dump(config))
    return run(root.path, str(managers.lefthook()), "install")


@pytest.mark.parametrize("order", ORDERS)
def test_lefthook_runs_sdds_hook_once_its_config_calls_it_in_either_order(
    repo: Root, sdd: SddRunner, tmp_path: Path, order: str
) -> None:
    trace = tmp_path / "trace"
    folder = repo.path / ".git" / "hooks"
    if order == "sdd first":
        assert sdd("hooks", "install").code == 0
        assert "post-merge.old" in lefthook_install(repo, trace)  # lefthook moved sdd's there
        status = hooks_json(sdd)["post-merge"]
        assert (status["manager"], status["fires"]) == ("lefthook", False)
        assert "nothing runs it" in status["words"]
        merge_fires_nothing(repo, "stranded")  # as status says
        installed = sdd("hooks", "install")
    else:
        lefthook_install(repo, trace)
        installed = sdd("hooks", "install")
    assert installed.code == 0, installed.stderr
    assert "post-merge: " in installed.stderr and "add the lines below" in installed.stderr
    status = hooks_json(sdd)["post-merge"]
    assert status["path"] == str(folder / "post-merge.old")
    assert status["called_from"] == str(repo.path / "lefthook.yml")
    assert status["lines"] in installed.stdout  # the same lines, on stdout, to copy
    assert hooks_json(sdd)["post-rewrite"]["manager"] is None  # lefthook does not run it

    add_lines(repo, sdd)
    status = hooks_json(sdd)["post-merge"]
    assert (status["state"], status["fires"], status["lines"]) == ("installed", True, None)
    assert "lefthook's hook (post-merge) runs it, called from lefthook.yml" in status["words"]
    merge_fires(repo, "one")
    assert "lefthook" in ran(trace)

    lefthooks = (folder / "post-merge").read_bytes()
    removed = sdd("hooks", "uninstall")
    assert "lefthook.yml that call it do nothing now" in removed.stderr, removed.stderr
    assert not (folder / "post-merge.old").exists()
    assert (folder / "post-merge").read_bytes() == lefthooks
    merge_fires_nothing(repo, "gone")  # and lefthook's job with sdd's line in it still passes
    assert ran(trace).count("lefthook") == 3 - (order == "manager first")


def test_lefthook_job_passes_gits_stdin_to_sdds_post_rewrite(
    repo: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    """The lines for a hook that reads stdin ask lefthook for it (use_stdin): a rebase onto main
    seen through lefthook still fires pr-merged."""
    config = {"post-rewrite": {"jobs": [{"name": "mine", "run": "true"}]}}
    (repo.path / "lefthook.yml").write_text(yaml.safe_dump(config))
    run(repo.path, str(managers.lefthook()), "install")
    assert sdd("hooks", "install").code == 0
    assert "use_stdin: true" in hooks_json(sdd)["post-rewrite"]["lines"]
    add_lines(repo, sdd)
    assert hooks_json(sdd)["post-rewrite"]["fires"]
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


# --- husky -----------------------------------------------------------------------------------


def husky_install(root: Root, trace: Path) -> None:
    run(root.path, *managers.husky())
    husky = root.path / ".husky"
    (husky / "post-merge").write_text(f"echo husky >> {trace}\n")


@pytest.mark.parametrize("order", ORDERS)
def test_husky_runs_sdds_hook_from_its_own_file_in_either_order(
    repo: Root, sdd: SddRunner, tmp_path: Path, order: str
) -> None:
    trace = tmp_path / "trace"
    own = repo.path / ".git" / "hooks"
    stubs = repo.path / ".husky" / "_"
    if order == "sdd first":
        assert sdd("hooks", "install").code == 0
        husky_install(repo, trace)
        status = hooks_json(sdd)
        assert (status["post-merge"]["manager"], status["post-merge"]["fires"]) == ("husky", False)
        assert "sdd hooks install --path" in status["post-merge"]["words"]
        assert status["reference-transaction"]["state"] == "not installed"
        assert status["reference-transaction"]["stale"] == [str(own / "reference-transaction")]
        merge_fires_nothing(repo, "stranded")  # git runs .husky/_ now, as status says
    else:
        husky_install(repo, trace)
    refused = sdd("hooks", "install")
    assert refused.code == 1 and "sdd hooks install --path" in refused.stderr
    installed = sdd("hooks", "install", "--path")
    assert installed.code == 0, installed.stderr
    assert "add to " + str(repo.path / ".husky" / "post-merge") in installed.stderr
    status = hooks_json(sdd)
    assert status["post-merge"]["path"] == str(own / "post-merge")
    assert status["post-merge"]["lines"] in installed.stdout
    assert status["post-rewrite"]["called_from"] == str(repo.path / ".husky" / "post-rewrite")
    # husky writes no reference-transaction stub: sdd's own file goes where git runs it.
    assert status["reference-transaction"]["path"] == str(stubs / "reference-transaction")
    assert status["reference-transaction"]["fires"] is True

    (repo.path / ".husky" / "post-rewrite").write_text("true\n")
    add_lines(repo, sdd)
    status = hooks_json(sdd)
    assert all(h["fires"] for h in status.values()), status
    assert (
        "husky's hook (.husky/_/post-merge) runs it, called from .husky/post-merge"
        in (status["post-merge"]["words"])
    )
    merge_fires(repo, "one")
    assert ran(trace) == ["husky"] * (2 if order == "sdd first" else 1)

    run(repo.path, *managers.husky())  # `npm install` runs husky again: sdd's part stays
    assert all(h["fires"] for h in hooks_json(sdd).values())
    merge_fires(repo, "two")

    removed = sdd("hooks", "uninstall")
    assert removed.code == 0
    assert "the lines in " + str(repo.path / ".husky" / "post-merge") in removed.stderr
    assert not (stubs / "reference-transaction").exists()
    assert not (own / "post-merge").exists()
    assert {p.name for p in stubs.iterdir()} >= {"h", "post-merge", "post-rewrite"}
    merge_fires_nothing(repo, "gone")  # husky's script, with sdd's lines in it, still passes
    assert ran(trace) == ["husky"] * (4 - (order == "manager first"))


def test_a_hook_husky_left_dormant_in_git_hooks_is_never_woken_by_sdd(
    repo: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    """With husky, sdd's hook lives in .git/hooks, which git no longer runs. A hook already
    there (husky 4 wrote its runners there) would start running through husky's lines: sdd
    refuses, before any write, and names it."""
    husky_install(repo, tmp_path / "trace")
    old = repo.path / ".git" / "hooks" / "post-merge"
    old.write_text("#!/bin/sh\n# husky 4\nnode node_modules/husky/run.js\n")
    old.chmod(0o755)
    before = snapshot(repo.path / ".husky"), snapshot(repo.path / ".git" / "hooks")
    refused = sdd("hooks", "install", "--path")
    assert refused.code == 1
    assert f"{old} is a hook git does not run now" in refused.stderr
    assert (snapshot(repo.path / ".husky"), snapshot(repo.path / ".git" / "hooks")) == before
