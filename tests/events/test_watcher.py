"""The watcher: real git repositories, real files, a real watchdog observer. Build results on and
off the main branch, refs moved by fetch, merge and update-ref, files checked on save, folders
deleted and made again, one watcher per repository, detach and stop, and no event lost."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sdd_git.events.queue import done_folder, pending, write_event
from sdd_git.events.watcher import Watcher
from sdd_git.events.watchprocess import lock_path, pid_path, status
from sdd_git.root import Root
from sdd_git.routines.hookindex import index_path
from tests.conftest import SddRunner, run_cli
from tests.events.hookhelp import (
    ROLE,
    event_files,
    git,
    merge_feature,
    product,
    routine,
    runs_of,
    script,
    wait_until,
)
from tests.trusthelp import confirm

FAILING_JUNIT = (
    '<?xml version="1.0"?>\n<testsuites><testsuite name="t" tests="2" failures="1">\n'
    '<testcase name="a"/>\n<testcase name="b"><failure message="1 != 2"/></testcase>\n'
    "</testsuite></testsuites>\n"
)
PASSING_JUNIT = '<testsuite name="t" tests="1" failures="0"><testcase name="a"/></testsuite>\n'
BUILD_RESULTS = 'watch: {build_results: ["build/*.xml", "build/exit-code"]}\n'


class Lines:
    """What the watcher prints, kept for the test to wait on."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)

    def having(self, words: str) -> list[str]:
        with self._lock:
            return [line for line in self.lines if words in line]

    def wait_for(self, words: str, what: str | None = None) -> list[str]:
        found: list[str] = wait_until(lambda: self.having(words), 10, what or repr(words))
        return found


class Work:
    """Stands in for the worker where running a routine is not the point: counts the calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = threading.Event()
        self.release.set()
        self.started = threading.Event()

    def __call__(self, root: Root, **_: Any) -> list[Any]:
        self.calls += 1
        self.started.set()
        self.release.wait()
        return []


@contextmanager
def watching(root: Root, work: Any = None, **options: Any) -> Iterator[tuple[Watcher, Lines]]:
    lines = Lines()
    watcher = Watcher(root, work=work if work is not None else Work(), say=lines, **options)
    watcher.start()
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield watcher, lines
    finally:
        stop.set()
        watcher.wake()
        thread.join(10)
        watcher.close(grace=2)


def kinds_written(root: Root, kind: str) -> list[dict[str, Any]]:
    return [e for e in event_files(root) if e["kind"] == kind]


def builds(root: Root, name: str = "build-watch") -> Root:
    product(root)
    routine(root, name, "main-build-failed")
    with root.config.open("a", encoding="utf-8") as handle:
        handle.write(BUILD_RESULTS)
    confirm(root, ".sdd/config.yaml")  # she edited her settings and confirmed them
    (root.path / "build").mkdir()
    return root


def test_a_failed_exit_code_file_on_main_fires_main_build_failed(root: Root) -> None:
    builds(root)
    work = Work()
    with watching(root, work) as (_watcher, lines):
        (root.path / "build" / "exit-code").write_text("1\n", encoding="utf-8")
        [event] = wait_until(lambda: kinds_written(root, "main-build-failed"), 10, "the event")
        assert (event["ref"], event["branch"]) == ("build/exit-code", "main")
        assert event["source"] == "watcher"
        assert event["detail"] == "exit code 1"
        wait_until(lambda: work.calls >= 2, 10, "the worker's run")  # one at start, one for it
        assert lines.having("build result build/exit-code: failed, exit code 1 (on main)")


def test_a_junit_report_with_a_failure_on_main_fires_main_build_failed(root: Root) -> None:
    builds(root)
    with watching(root):
        (root.path / "build" / "junit.xml").write_text(FAILING_JUNIT, encoding="utf-8")
        [event] = wait_until(lambda: kinds_written(root, "main-build-failed"), 10, "the event")
        assert (event["ref"], event["detail"]) == ("build/junit.xml", "1 test fails of 2")


def test_a_failed_build_on_another_branch_fires_nothing(root: Root) -> None:
    builds(root)
    git(root.path, "checkout", "-q", "-b", "feature")
    with watching(root) as (_watcher, lines):
        (root.path / "build" / "junit.xml").write_text(FAILING_JUNIT, encoding="utf-8")
        (root.path / "build" / "exit-code").write_text("1\n", encoding="utf-8")
        lines.wait_for("build result build/junit.xml: failed, 1 test fails of 2 (on feature)")
        lines.wait_for("build result build/exit-code: failed, exit code 1 (on feature)")
    assert kinds_written(root, "main-build-failed") == []


def test_a_passing_build_on_main_fires_nothing(root: Root) -> None:
    builds(root)
    with watching(root) as (_watcher, lines):
        (root.path / "build" / "junit.xml").write_text(PASSING_JUNIT, encoding="utf-8")
        (root.path / "build" / "exit-code").write_text("0\n", encoding="utf-8")
        lines.wait_for("build result build/junit.xml: passed, 1 tests pass (on main)")
        lines.wait_for("build result build/exit-code: passed, exit code 0 (on main)")
    assert kinds_written(root, "main-build-failed") == []


def test_a_malformed_report_is_reported_with_its_line_and_is_not_a_pass(root: Root) -> None:
    builds(root)
    with watching(root) as (_watcher, lines):
        (root.path / "build" / "junit.xml").write_text("<testsuite>\n<testcase>\n", "utf-8")
        [error] = lines.wait_for("error: ", "the report of the unreadable file")
        assert "build/junit.xml:3: not valid XML" in error
        wait_until(lambda: kinds_written(root, "main-build-failed"), 10, "the event")


def test_a_burst_of_writes_to_one_result_is_handled_once(root: Root) -> None:
    builds(root)
    # Windows wider than the watcher's own, so a loaded machine cannot split the burst.
    with watching(root, quiet=0.3, max_wait=2.0) as (watcher, lines):
        path = root.path / "build" / "exit-code"
        for code in ("3", "2", "1"):  # a build rewriting its result, as editors and tools do
            path.write_text(code + "\n", encoding="utf-8")
        lines.wait_for("event main-build-failed build/exit-code")
        assert len(lines.having("build result build/exit-code")) == 1
        assert watcher.events_written == 1


def test_the_build_folder_deleted_and_made_again_is_still_watched(root: Root) -> None:
    builds(root)
    with watching(root) as (_watcher, lines):
        shutil.rmtree(root.path / "build")
        wait_until(lambda: not (root.path / "build").exists(), 5)
        (root.path / "build").mkdir()
        (root.path / "build" / "exit-code").write_text("1\n", encoding="utf-8")
        [event] = wait_until(lambda: kinds_written(root, "main-build-failed"), 10, "the event")
        assert event["ref"] == "build/exit-code"
        # Again, and a result written into the folder well after it was made: the new folder's
        # own watch sees it (the look inside the new folder happened already).
        shutil.rmtree(root.path / "build")
        (root.path / "build").mkdir()
        (root.path / "build" / "exit-code").write_text("0\n", encoding="utf-8")
        lines.wait_for("build result build/exit-code: passed", "the new folder seen")
        (root.path / "build" / "junit.xml").write_text(FAILING_JUNIT, encoding="utf-8")
        wait_until(
            lambda: [e for e in kinds_written(root, "main-build-failed")
                     if e["ref"] == "build/junit.xml"], 10, "the second event",
        )  # fmt: skip


def test_a_fetch_that_moves_origin_main_writes_a_push_event(root: Root, tmp_path: Path) -> None:
    product(root)
    routine(root, "on-push", "push main")
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(root.path, "remote", "add", "origin", str(origin))
    git(root.path, "push", "-q", "origin", "main")  # refs/remotes/origin/main exists from here
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    (other / "news.txt").write_text("news\n", encoding="utf-8")
    git(other, "add", "news.txt")
    git(other, "commit", "-q", "-m", "news")
    git(other, "push", "-q", "origin", "main")
    new = git(other, "rev-parse", "HEAD").strip()
    with watching(root) as (_watcher, lines):
        git(root.path, "fetch", "-q", "origin")
        [event] = wait_until(lambda: kinds_written(root, "push"), 10, "the push event")
        assert (event["ref"], event["branch"], event["source"]) == (new, "main", "watcher")
        assert event["moved"] == "refs/remotes/origin/main"
        lines.wait_for("refs/remotes/origin/main moved to " + new[:12])
    assert kinds_written(root, "pr-merged") == []  # a remote's merge commit is a push here


def test_a_merge_into_main_writes_pr_merged_and_a_merge_elsewhere_does_not(root: Root) -> None:
    product(root)
    routine(root, "on-merge", "pr-merged")
    routine(root, "on-push", "push main")
    git(root.path, "branch", "develop")
    with watching(root):
        merge_feature(root, branch="topic", into="develop", name="t")
        merged = merge_feature(root, branch="feature", into="main", name="f")
        [event] = wait_until(lambda: kinds_written(root, "pr-merged"), 10, "the pr-merged event")
        assert (event["ref"], event["branch"]) == (merged, "main")
        wait_until(lambda: kinds_written(root, "push"), 10, "the push event")
    assert [e["ref"] for e in kinds_written(root, "pr-merged")] == [merged]
    assert [e["ref"] for e in kinds_written(root, "push")] == [merged]


def test_update_ref_moving_main_writes_a_push_event_once_even_beside_a_hook(root: Root) -> None:
    product(root)
    routine(root, "on-push", "push main")
    first = git(root.path, "rev-parse", "HEAD").strip()
    git(root.path, "commit", "-q", "--allow-empty", "-m", "second")
    second = git(root.path, "rev-parse", "HEAD").strip()
    git(root.path, "update-ref", "refs/heads/main", first)
    # A hook saw the move to `second` already and its event was taken: the watcher adds none.
    hooked = write_event(root, "push", second, "hook", branch="main")
    done_folder(root).mkdir(parents=True, exist_ok=True)
    os.replace(root.local / "events" / f"{hooked.id}.json", done_folder(root) / f"{hooked.id}.json")
    with watching(root) as (_watcher, lines):
        git(root.path, "update-ref", "refs/heads/main", second)
        lines.wait_for("refs/heads/main moved to " + second[:12])
        git(root.path, "update-ref", "refs/heads/main", first)
        lines.wait_for("refs/heads/main moved to " + first[:12])
        [event] = wait_until(lambda: [e for e in pending(root)], 10, "the push event")
        assert (event.ref, event.source) == (first, "watcher")
    assert [e["ref"] for e in kinds_written(root, "push")] == [second, first]


def test_a_role_file_saved_with_a_yaml_error_is_reported_with_its_line(root: Root) -> None:
    product(root)
    path = root.sdd / "roles" / ROLE / "ROLE.md"
    good = path.read_text(encoding="utf-8")
    with watching(root) as (_watcher, lines):
        broken = good.split("\n")
        broken.insert(3, "job: broken: here")
        path.write_text("\n".join(broken), encoding="utf-8")
        [error] = lines.wait_for("error: ", "the report of the broken role file")
        assert f"roles/{ROLE}/ROLE.md:4: " in error
        assert "not valid YAML" in error
        assert lines.having("hint: ")
        path.write_text(good, encoding="utf-8")
        lines.wait_for(f"ok: .sdd/roles/{ROLE}/ROLE.md", "the fixed file checked")


@pytest.mark.parametrize("gone", [f"roles/{ROLE}", "roles"])
def test_a_role_folder_deleted_and_made_again_is_still_checked(root: Root, gone: str) -> None:
    product(root)
    folder = root.sdd / "roles" / ROLE
    saved = (folder / "ROLE.md").read_text(encoding="utf-8")
    with watching(root) as (_watcher, lines):
        shutil.rmtree(root.sdd / gone)
        folder.mkdir(parents=True)
        (folder / "ROLE.md").write_text(saved.replace("level: 10", "level: lots"), "utf-8")
        [error] = lines.wait_for("error: ", "the report of the broken role file")
        assert f"roles/{ROLE}/ROLE.md:5:" in error and "level" in error


def test_a_routine_saved_with_a_mistake_is_reported_and_a_new_one_is_listened_to(
    root: Root,
) -> None:
    product(root)
    folder = root.sdd / "roles" / ROLE / "routines"
    folder.mkdir(parents=True)
    with watching(root) as (_watcher, lines):
        (folder / "docs.yaml").write_text(
            "name: docs\non: file-changes docs/**\ninput: x\nexpected: y\n", "utf-8"
        )
        [error] = lines.wait_for("error: ", "the report of the broken routine")
        assert "routines/docs.yaml:2: key 'on':" in error
        (folder / "docs.yaml").write_text(
            'name: docs\non: file-changed "docs/**"\ninput: x\nexpected: y\n', "utf-8"
        )
        lines.wait_for(f"ok: .sdd/roles/{ROLE}/routines/docs.yaml")
        wait_until(lambda: "listen file-changed docs/**" in index_path(root).read_text("utf-8"), 10)
        (root.path / "docs").mkdir()
        (root.path / "docs" / "guide.md").write_text("# Guide\n", encoding="utf-8")
        (root.path / "notes.md").write_text("not docs\n", encoding="utf-8")
        [event] = wait_until(lambda: kinds_written(root, "file-changed"), 10, "the event")
        assert event["ref"] == "docs/guide.md"


def test_a_skill_saved_with_a_mistake_is_reported_with_its_line(root: Root) -> None:
    product(root)
    folder = root.sdd / "skills" / "triage"
    folder.mkdir(parents=True)
    with watching(root) as (_watcher, lines):
        (folder / "SKILL.md").write_text(
            "---\nname: triage\ndescription: Sort failures.\ncolour: red\n---\nSteps.\n", "utf-8"
        )
        [error] = lines.wait_for("error: ", "the report of the broken skill")
        assert "skills/triage/SKILL.md:4:" in error and "colour" in error


def test_file_changed_events_name_matching_paths_and_never_sdds_own_files(root: Root) -> None:
    product(root)
    routine(root, "on-anything", '"file-changed **"')
    with watching(root):
        (root.path / "src").mkdir()
        (root.path / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
        wait_until(lambda: kinds_written(root, "file-changed"), 10, "the event")
        write_event(root, "pr-merged", "c" * 40, "person", branch="main")  # into .sdd/local
        (root.sdd / "role-runs").mkdir(exist_ok=True)
        (root.sdd / "role-runs" / "r.jsonl").write_text("{}\n", encoding="utf-8")
        (root.path / "last.txt").write_text("x\n", encoding="utf-8")
        wait_until(
            lambda: any(e["ref"] == "last.txt" for e in kinds_written(root, "file-changed")), 10
        )
    refs = sorted(e["ref"] for e in kinds_written(root, "file-changed"))
    assert refs == ["last.txt", "src/app.py"]


def test_a_due_schedule_writes_its_event(root: Root) -> None:
    product(root)
    path = root.sdd / "roles" / ROLE / "routines" / "hourly.yaml"
    path.parent.mkdir(parents=True)
    path.write_text('name: hourly\nschedule: "0 * * * *"\ninput: x\nexpected: y\n', "utf-8")
    now = [datetime(2026, 3, 2, 8, 59, 59, tzinfo=UTC)]
    with watching(root, clock=lambda: now[0]) as (watcher, _lines):
        assert kinds_written(root, "schedule") == []
        now[0] = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
        watcher.wake()
        [event] = wait_until(lambda: kinds_written(root, "schedule"), 10, "the schedule event")
        assert event["ref"] == f"{ROLE}/hourly@2026-03-02T09:00:00Z"
        assert event["routine"] == f"{ROLE}/hourly"


def test_a_failed_build_on_main_runs_the_routine_through_the_real_worker(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds(root)
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "The test b fails: 1 != 2."}]))
    from sdd_git.events.worker import work

    with watching(root, work) as (_watcher, lines):
        (root.path / "build" / "junit.xml").write_text(FAILING_JUNIT, encoding="utf-8")
        [event] = wait_until(lambda: kinds_written(root, "main-build-failed"), 10, "the event")
        [run] = wait_until(lambda: runs_of(root, "build-watch"), 20, "the routine's run")
        assert (run["origin"], run["event_id"]) == ("routine", event["id"])
        lines.wait_for(f"routine {ROLE}/build-watch:", "the routine's outcome")
        wait_until(lambda: not pending(root), 10, "the event done")


def test_stopping_with_a_routine_in_progress_leaves_its_event_pending(root: Root) -> None:
    builds(root)
    work = Work()
    work.release.clear()  # the routine in progress never finishes by itself
    with watching(root, work) as (watcher, lines):
        work.release.set()
        wait_until(lambda: work.calls == 1 and not watcher.worker_busy, 10)  # the start's pass
        work.started.clear()
        work.release.clear()
        (root.path / "build" / "exit-code").write_text("1\n", encoding="utf-8")
        wait_until(work.started.is_set, 10, "the worker taking the event")
        [event] = pending(root)
        assert watcher.close(grace=0.2) is False
        assert lines.having("a routine was still running: its event stays pending")
        work.release.set()
    assert [e.id for e in pending(root)] == [event.id]
    assert not (done_folder(root) / f"{event.id}.json").exists()


# --- the command: one watcher per repository, detach, stop, SIGTERM -----------------------------


def test_a_second_watcher_is_refused_naming_the_holder(root: Root, sdd: SddRunner) -> None:
    product(root)
    started = run_cli("watch", "--detach", "--grace", "1", cwd=root.path)
    assert started.returncode == 0, started.stderr
    try:
        pid = int(pid_path(root).read_text(encoding="utf-8"))
        second = sdd("watch")
        assert second.code == 1
        assert f"error: a watcher already watches this repository: pid {pid} on " in second.stderr
        assert " since " in second.stderr
        assert "hint: one watcher per repository; stop it with: sdd watch --stop" in second.stderr
        detached_again = sdd("watch", "--detach")
        assert detached_again.code == 1 and f"pid {pid}" in detached_again.stderr
    finally:
        assert run_cli("watch", "--stop", cwd=root.path).returncode == 0


def test_detach_watches_in_the_background_and_stop_ends_it(root: Root, sdd: SddRunner) -> None:
    builds(root)
    started = run_cli("watch", "--detach", cwd=root.path)
    assert started.returncode == 0, started.stderr
    assert "watching in the background (pid " in started.stderr
    pid = int(pid_path(root).read_text(encoding="utf-8"))
    assert status(root).pid == pid
    shown = sdd("watch", "--status", "--json")
    assert (shown.code, json.loads(shown.stdout)["running"]) == (0, True)
    (root.path / "build" / "exit-code").write_text("1\n", encoding="utf-8")
    wait_until(lambda: kinds_written(root, "main-build-failed"), 10, "the detached watcher's event")
    stopped = run_cli("watch", "--stop", cwd=root.path)
    assert stopped.returncode == 0
    assert f"stopped the watcher (pid {pid})" in stopped.stderr
    assert not pid_path(root).exists() and not lock_path(root).exists()
    log = (root.local / "watch.log").read_text(encoding="utf-8")
    assert "event main-build-failed build/exit-code" in log and "stopped" in log
    assert sdd("watch", "--status").code == 1
    assert "no watcher was running" in sdd("watch", "--stop").stderr


class SilentServer:
    """A model server that takes the request and never answers: a routine stays in progress."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(8)
        self.port = self.socket.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self) -> None:
        for connection in self.held:
            connection.close()
        self.socket.close()


def test_sigterm_with_a_routine_in_progress_exits_0_and_its_event_stays_pending(
    root: Root,
) -> None:
    builds(root)
    server = SilentServer()
    env = {
        "SDD_PROVIDER": "openai",
        "SDD_BASE_URL": f"http://127.0.0.1:{server.port}/v1",
        "SDD_API_KEY": "sk-test-0123456789abcdef0123456789",
        "SDD_MODEL": "silent",
    }
    try:
        started = run_cli("watch", "--detach", "--grace", "0.5", cwd=root.path, env=env)
        assert started.returncode == 0, started.stderr
        pid = int(pid_path(root).read_text(encoding="utf-8"))
        (root.path / "build" / "exit-code").write_text("1\n", encoding="utf-8")
        [run] = wait_until(lambda: runs_of(root, "build-watch"), 20, "the routine in progress")
        [event] = pending(root)
        assert run["event_id"] == event.id
        stopped = run_cli("watch", "--stop", cwd=root.path)
        assert stopped.returncode == 0, stopped.stderr
        assert f"stopped the watcher (pid {pid})" in stopped.stderr
    finally:
        server.close()
    assert [e.id for e in pending(root)] == [event.id]  # not lost: the next worker takes it
    log = (root.local / "watch.log").read_text(encoding="utf-8")
    assert "a routine was still running: its event stays pending" in log
    assert "stopped" in log.splitlines()[-1]


def test_watch_refuses_inside_a_role_run(
    root: Root, sdd: SddRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    product(root)
    monkeypatch.setenv("SDD_RUN_ID", "run-1")
    for args in (("watch",), ("watch", "--detach"), ("watch", "--stop")):
        result = sdd(*args)
        assert result.code == 1
        assert "person commands cannot run inside a role run" in result.stderr
    assert not lock_path(root).exists()


def test_watch_options_that_do_not_go_together_are_a_usage_error(
    root: Root, sdd: SddRunner
) -> None:
    assert sdd("watch", "--detach", "--stop").code == 2
    assert sdd("watch", "--json").code == 2


def test_a_foreground_watcher_stops_on_sigterm_with_exit_0(root: Root) -> None:
    product(root)
    child = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "watch"],
        cwd=root.path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: pid_path(root).exists(), 20, "the watcher watching")
        child.terminate()
        _out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert "stopped" in err and not pid_path(root).exists() and not lock_path(root).exists()
