"""Attack routes through sdd's git hooks and the worker they start.

The attacker here controls what arrives from outside (a merged branch's files, branch and remote
names, the interpreter's folder name) or is a role whose own git command fires the hooks. What
must hold: code from the product never runs in sdd's own processes; a role's git command inside
a run starts no routine; names from outside never become shell or JSON; a hook never fails git
and never reads the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sdd_git.events import hooks as core
from sdd_git.root import Root
from sdd_git.routines.hookindex import index_path, write_index
from tests.events.hookhelp import (
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

OLD, NEW = "1" * 40, "2" * 40


@pytest.fixture
def repo(root: Root) -> Iterator[Root]:
    """The product, committed, with sdd's hooks installed; every worker done by the end."""
    product(root)
    core.install(root)
    yield root
    worker_idle(root)


def tracer(tmp_path: Path) -> Path:
    """An interpreter that only records how it was started, and with which SDD_RUN_ID."""
    path = tmp_path / "python"
    path.write_text(
        f'#!/bin/sh\necho "run=${{SDD_RUN_ID:-}} args=$*" >> "{tmp_path / "started"}"\n'
    )
    path.chmod(0o755)
    return path


# --- code from the product never runs in the worker a hook starts --------------------------------


PLANTED = "import pathlib\npathlib.Path({marker!r}).joinpath({name!r}).touch()\n"


def test_route_a_merged_branchs_python_files_never_run_in_the_worker_the_merge_starts(
    repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request from outside carries `yaml.py`, `pygit2.py` and an `sdd_git/` package at
    the top of the product. Merging it (only merging: nobody runs it) starts the worker in the
    product folder; `python -m` would put that folder first on the import path, and the worker
    would import the branch's code with all the person's rights, outside any sandbox."""
    routine(repo, "on-merge", "pr-merged")
    write_index(repo)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}]))
    marker = tmp_path / "planted-ran"
    marker.mkdir()
    git(repo.path, "checkout", "-q", "-b", "outside")
    for name in ("yaml.py", "pygit2.py", "cronsim.py", "sdd_git/__init__.py", "secrets.py"):
        path = repo.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLANTED.format(marker=str(marker), name=name.replace("/", "+")))
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a contribution")
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "merge", "-q", "--no-ff", "outside", "-m", "merge outside")
    [event] = [e for e in event_files(repo) if e["kind"] == "pr-merged"]

    def settled() -> bool:
        runs = runs_of(repo, "on-merge", event["id"])
        return any(marker.iterdir()) or bool(runs and ended(runs[0]))

    wait_until(settled, what="the routine's run (or the planted code) to finish")
    assert sorted(p.name for p in marker.iterdir()) == []
    [run] = runs_of(repo, "on-merge", event["id"])
    assert ended(run)


# --- a role's own git command inside a run ------------------------------------------------------


def test_route_a_git_merge_inside_a_role_run_writes_no_event_and_starts_no_worker(
    root: Root, tmp_path: Path
) -> None:
    """Every child of a run carries SDD_RUN_ID. A merge a role runs (allowed by the person, with
    SDD_SANDBOX=none, or any sandbox that lets .sdd/ be written) must not start other runs of
    roles behind her back: sdd's part of the hook does nothing inside a run. The chained hook
    still runs: it is the person's, not sdd's."""
    product(root)
    trace = tmp_path / "legacy.trace"
    legacy = root.path / ".git" / "hooks" / "post-merge"
    legacy.write_text(f'#!/bin/sh\necho "legacy $*" >> "{trace}"\n')
    legacy.chmod(0o755)
    core.install(root, python=str(tracer(tmp_path)))
    routine(root, "on-merge", "pr-merged")
    routine(root, "on-push", "push main")
    write_index(root)
    merge_feature_env = {"SDD_RUN_ID": "run-20260101-000000-abcdef"}
    git(root.path, "checkout", "-q", "-b", "feature")
    (root.path / "f.txt").write_text("f\n")
    git(root.path, "add", "f.txt")
    git(root.path, "commit", "-q", "-m", "f", env=merge_feature_env)
    git(root.path, "checkout", "-q", "main")
    git(root.path, "merge", "-q", "--no-ff", "feature", "-m", "m", env=merge_feature_env)
    assert trace.read_text() == "legacy 0\n"
    assert event_files(root) == []
    assert not (tmp_path / "started").exists()
    # The same merge by the person fires as ever.
    merge_feature(root, name="g")
    assert {e["kind"] for e in event_files(root)} == {"pr-merged", "push"}


def test_route_the_worker_refuses_to_start_inside_a_role_run(root: Root) -> None:
    """`python -m sdd_git.events.worker ROOT`, from a role's command however wrapped, is a person
    command: it exits 1 and fires nothing; the event stays queued for the person's worker."""
    from sdd_git.events.queue import pending, write_event

    product(root)
    routine(root, "on-merge", "pr-merged")
    write_event(
        root, "pr-merged", git(root.path, "rev-parse", "HEAD").strip(), "hook", branch="main"
    )
    ran = subprocess.run(
        [sys.executable, "-m", "sdd_git", "event-worker", str(root.path)],
        cwd=root.path,
        env={**os.environ, "SDD_RUN_ID": "run-20260101-000000-abcdef"},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert ran.returncode == 1
    assert "inside a role run" in ran.stderr or "SDD_RUN_ID" in ran.stderr
    assert len(pending(root)) == 1
    assert not (root.sdd / "role-runs").exists() or not list((root.sdd / "role-runs").iterdir())


def test_route_a_product_module_never_runs_in_the_run_a_handoff_wakes(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same shadowing through another door: a role writes `yaml.py` into the product (a
    file edit she allows), then hands off; the receiver's run is started by sdd itself in the
    product folder, outside the sandbox, and must not import it."""
    from sdd_git.runner.run import RunRequest, answer, start
    from tests.runner.scripted import accepted_change, add_role
    from tests.runner.scripted import script as scripted

    accepted_change(root)
    add_role(root, "sender")
    add_role(root, "receiver")
    marker = tmp_path / "planted-ran"
    marker.mkdir()
    (root.path / "yaml.py").write_text(PLANTED.format(marker=str(marker), name="yaml.py"))
    (root.path / "ruamel").mkdir()
    (root.path / "ruamel" / "__init__.py").write_text(
        PLANTED.format(marker=str(marker), name="ruamel")
    )
    handoff = {"tool": "handoff", "args": {"to": "receiver", "task": "Check the search"}}
    scripted(
        tmp_path,
        monkeypatch,
        [
            {"role": "sender", "tool_calls": [handoff]},
            {"role": "sender", "say": "Handed over."},
            {"role": "receiver", "say": "Checked."},
        ],
    )
    first = start(root, RunRequest(author="sender", task="Hand it over"))
    assert first.stop is not None
    assert answer(root, first.stop.id, "allow_once").status == "done"

    def receiver_ended() -> bool:
        for path in (root.sdd / "role-runs").glob("*.jsonl"):
            lines = [json.loads(x) for x in path.read_text().splitlines()]
            if lines[0].get("roles") == ["receiver"] and lines[-1]["event"] == "run_ended":
                return True
        return any(marker.iterdir())

    wait_until(receiver_ended, 60, "the receiver's run (or the planted code) to finish")
    assert sorted(p.name for p in marker.iterdir()) == []
    [woken] = [
        [json.loads(x) for x in path.read_text().splitlines()]
        for path in (root.sdd / "role-runs").glob("*.jsonl")
        if json.loads(path.read_text().splitlines()[0]).get("roles") == ["receiver"]
    ]
    assert woken[-1]["status"] == "done"  # it ran, with sdd's own modules


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_route_a_roles_own_git_merge_in_a_run_fires_no_routine(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    """A role merges into main with run_command, and the careless person allows it. Under the
    sandbox .git/ and .sdd/ are read-only (the merge fails); with no sandbox the merge runs, its
    hooks run, and sdd's part of them does nothing: the run's SDD_RUN_ID is in their
    environment. Nothing is started behind her back either way."""
    from sdd_git.runner.run import RunRequest, answer, start
    from sdd_git.sandbox.choose import current
    from tests.runner.scripted import accepted_change, add_role
    from tests.runner.scripted import script as scripted

    product(root, role=None)
    accepted_change(root)
    add_role(root, "builder", "code")
    core.install(root, python=str(tracer(tmp_path)))
    routine(root, "on-merge", "pr-merged", role="builder")
    routine(root, "on-push", "push main", role="builder")
    write_index(root)
    git(root.path, "add", "-A")
    git(root.path, "commit", "-q", "-m", "roles")
    git(root.path, "checkout", "-q", "-b", "feature")
    (root.path / "f.txt").write_text("f\n")
    git(root.path, "add", "f.txt")
    git(root.path, "commit", "-q", "-m", "f")
    git(root.path, "checkout", "-q", "main")
    wait_until((tmp_path / "started").exists)  # the person's own commit on main above
    (tmp_path / "started").unlink()
    for made in (root.local / "events").glob("*.json"):
        made.unlink()
    monkeypatch.setenv("SDD_SANDBOX", sandbox)
    current.cache_clear()
    # `git merge` itself the guard refuses; in a script, only the kernel (or the hook) is left.
    text = "git merge --no-ff feature -m merged"
    calls = [
        {"tool": "run_command", "args": {"command": text, "purpose": "merge"}},
        {
            "tool": "write_file",
            "args": {"path": "merge.sh", "content": text + "\n", "purpose": "merge"},
        },
        {"tool": "run_command", "args": {"command": "sh merge.sh", "purpose": "merge"}},
    ]
    scripted(tmp_path, monkeypatch, [{"tool_calls": calls}, {"say": "merged"}])
    answered = start(root, RunRequest(author="builder", task="Merge the feature"))
    run_id = answered.run_id
    while answered.stop is not None:
        answered = answer(root, answered.stop.id, "allow_once")
    logged = [
        json.loads(x) for x in (root.sdd / "role-runs" / f"{run_id}.jsonl").read_text().splitlines()
    ]
    done = [e["tool"] for e in logged if e["event"] == "action_done"]
    assert done == ["write_file", "run_command"]  # the person's allows were honoured
    assert answered.status == "done"
    assert not (tmp_path / "started").exists()
    assert event_files(root) == []
    for rejected in (e for e in logged if e["event"] == "rejected"):
        assert ".sdd/local/events" not in rejected.get("message", "")


def test_route_a_product_module_never_runs_in_a_detached_watcher(
    root: Root, tmp_path: Path
) -> None:
    """`sdd watch --detach` starts the watcher as `python -m sdd_git` in the product folder: the
    same shadowing as the worker's, with the watcher's imports (watchdog, pygit2, yaml)."""
    product(root)
    marker = tmp_path / "planted-ran"
    marker.mkdir()
    for name in ("yaml.py", "watchdog.py", "pygit2.py", "cronsim.py"):
        (root.path / name).write_text(PLANTED.format(marker=str(marker), name=name))
    sdd = str(Path(sys.executable).parent / "sdd")  # her command: its import path is sdd's own

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sdd, *args],
            cwd=root.path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )

    started = run("watch", "--detach")
    try:
        assert started.returncode == 0, started.stderr
    finally:
        stopped = run("watch", "--stop")
    assert stopped.returncode == 0, stopped.stderr
    assert sorted(p.name for p in marker.iterdir()) == []


# --- names from outside never become shell or JSON ----------------------------------------------


def test_route_an_interpreter_folder_named_with_quotes_and_substitutions_stays_a_path(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The installed hook names the interpreter it starts (SDD_PYTHON=...): a venv in a folder
    called `it's $(touch PWNED) "q"` is still that one path, and starts the worker."""
    product(root)
    folder = tmp_path / 'it\'s $(touch PWNED) `touch PWNED2` "q"; touch PWNED3'
    folder.mkdir()
    python = folder / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    core.install(root, python=str(python))
    assert core.hook_state(core.place(root), "post-merge", str(python)).state == core.INSTALLED
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}]))
    merge_feature(root)
    [event] = [e for e in event_files(root) if e["kind"] == "pr-merged"]
    [run] = wait_until(lambda: runs_of(root, "on-merge", event["id"]), what="the routine's run")
    wait_until(lambda: ended(run), what="the run ending")
    worker_idle(root)
    for where in (root.path, tmp_path, folder, Path.cwd()):
        assert not list(where.glob("PWNED*")), where


@pytest.mark.parametrize(
    "index",
    [
        "main $(touch PWNED)\nlisten pr-merged\n",
        "main main\nlisten push `touch PWNED`\n",
        "main main\nlisten push main;touch${IFS}PWNED\n",
        "main main\nlisten push main\nmain $(touch PWNED)\n",
        "main " + "m" * 100_000 + "\nlisten pr-merged\n",
        "main main\nlisten push main\x00\n",
    ],
)
def test_route_a_hostile_index_line_runs_nothing_and_fails_nothing(
    root: Root, tmp_path: Path, index: str
) -> None:
    product(root, role=None)
    core.install(root, python=str(tracer(tmp_path)))
    index_path(root).parent.mkdir(parents=True, exist_ok=True)
    index_path(root).write_text(index)
    hook = root.path / ".git" / "hooks" / "reference-transaction"
    done = subprocess.run(
        [str(hook), "committed"],
        cwd=root.path,
        input=f"{OLD} {NEW} refs/heads/main\n",
        text=True,
        capture_output=True,
        timeout=60,
    )
    merged = subprocess.run(
        [str(root.path / ".git" / "hooks" / "post-merge"), "0"],
        cwd=root.path,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and merged.returncode == 0
    assert not list(root.path.glob("PWNED*"))
    assert all(json.loads(e["_path"].read_text())["branch"] == "main" for e in event_files(root))


def test_route_branch_and_remote_names_from_outside_never_become_shell_or_json(
    repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Branches and remotes named with quotes, substitutions and a `..`-free path of their own,
    fetched and pushed: every event the hooks write is JSON naming the listened branch."""
    routine(repo, "on-push", "push main")
    routine(repo, "on-merge", "pr-merged")
    write_index(repo)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read it."}] * 20))
    hostile = [
        "$(touch PWNED)",
        'a"b',
        "q'uote",
        "`touch PWNED2`",
        "x;touch PWNED3",
        "main\\",
        "team/$(id)/main",
        "{main}",
        "main-",
        "a" * 200,
    ]
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(origin))
    for name in hostile:
        if git(repo.path, "check-ref-format", "--branch", name, check=False).strip() != name:
            continue  # a name git refuses never reaches a hook
        git(repo.path, "branch", name)
        git(repo.path, "push", "-q", str(origin), f"refs/heads/{name}:refs/heads/{name}")
    # git refuses such a remote's name, not a ref under refs/remotes/ named that way.
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    (other / "o.txt").write_text("o\n")
    git(other, "add", "o.txt")
    git(other, "commit", "-q", "-m", "o")
    git(other, "push", "-q", "origin", "main")
    weird = 'refs/remotes/o"r$(touch${IFS}PWNED4)`touch${IFS}PWNED5`;x/main'
    git(repo.path, "fetch", "-q", str(origin), f"refs/heads/main:{weird}")
    wait_until(lambda: [e for e in event_files(repo) if e["kind"] == "push"], what="the push")
    merge_feature(repo, name="g")
    worker_idle(repo)
    for event in event_files(repo):
        data = json.loads(event["_path"].read_text())
        assert data["branch"] == "main", data
    for where in (repo.path, tmp_path, Path.cwd()):
        assert not list(where.glob("PWNED*")), where


def test_route_a_main_branch_setting_that_is_not_a_branch_name_is_refused(
    root: Root, tmp_path: Path
) -> None:
    from tests.conftest import run_cli

    product(root)
    routine(root, "on-merge", "pr-merged")
    root.config.write_text(root.config.read_text() + 'main_branch: "$(touch PWNED)"\n')
    installed = run_cli("hooks", "install", cwd=root.path)
    assert installed.returncode == 1
    assert "main_branch" in installed.stderr and "Traceback" not in installed.stderr
    assert not list(root.path.glob("PWNED*"))


def test_route_a_hook_never_reads_the_terminal(
    repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's stdin is a terminal nobody types into: the merge, its hooks and the worker they
    start all finish without reading it (a read would wait for ever)."""
    import pty

    routine(repo, "on-merge", "pr-merged")
    write_index(repo)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}]))
    git(repo.path, "checkout", "-q", "-b", "feature")
    (repo.path / "t.txt").write_text("t\n")
    git(repo.path, "add", "t.txt")
    git(repo.path, "commit", "-q", "-m", "t")
    git(repo.path, "checkout", "-q", "main")
    leader, follower = pty.openpty()
    try:
        merged = subprocess.run(
            ["git", "merge", "-q", "--no-ff", "feature", "-m", "m"],
            cwd=repo.path,
            stdin=follower,
            capture_output=True,
            timeout=60,
        )
    finally:
        os.close(follower)
    assert merged.returncode == 0
    [event] = [e for e in event_files(repo) if e["kind"] == "pr-merged"]
    [run] = wait_until(lambda: runs_of(repo, "on-merge", event["id"]), what="the routine's run")
    wait_until(lambda: ended(run), what="the run ending without any input")
    os.close(leader)
