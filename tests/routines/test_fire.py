"""Firing a routine: a missing source, once per event, pause, rehearsal, history, expiry, and
what a routine can never do. Real git roots and the scripted provider."""

from __future__ import annotations

import dataclasses
import json
import socket
import time
from pathlib import Path

import pytest

from sdd_git.records import changes
from sdd_git.root import Root
from sdd_git.routines.fire import fire, lock_path, runs_for
from sdd_git.routines.routine import Event, Routine, read_routine
from sdd_git.runner import stops
from tests.conftest import SddRunner, commit_all, git
from tests.runner.scripted import (
    accepted_change,
    add_role,
    events,
    kinds,
    script,
    transcript,
    write_call,
)
from tests.trusthelp import confirm

BUILD_WATCH = (
    'name: main-build-watch\non: main-build-failed\ninput: "the failed job\'s log"\n'
    'expected: "a short diagnosis citing the failing test"\nwhen_source_missing: report\n'
    "paused: false\n"
)


def routine(root: Root, text: str = BUILD_WATCH, name: str = "main-build-watch",
            role: str = "watcher") -> Routine:  # fmt: skip
    path = root.sdd / "roles" / role / "routines" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    confirm(root, path.relative_to(root.path).as_posix())  # as `sdd routine create` records it
    return read_routine(path)


def watcher(root: Root, extra: str = "") -> None:
    add_role(root, "watcher", produces="other", extra=extra)


def event(kind: str = "main-build-failed", ref: str = "build/junit.xml", id: str = "ev-1",
          **more: str) -> Event:  # fmt: skip
    return Event(id=id, kind=kind, ref=ref, at="2026-11-30T09:00:00Z", source="hook", **more)


def files(root: Root) -> dict[str, bytes]:
    """Every file of the root but git's own and the run logs, with its bytes."""
    skip = (".git", ".sdd/role-runs")
    return {
        str(p.relative_to(root.path)): p.read_bytes()
        for p in sorted(root.path.rglob("*"))
        if p.is_file() and not str(p.relative_to(root.path)).startswith(skip)
    }


def run_logs(root: Root) -> list[Path]:
    folder = root.sdd / "role-runs"
    return sorted(folder.glob("run-*.jsonl")) if folder.is_dir() else []


# --- a missing source ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("build/junit.xml", "no such file"),
        ("../outside.log", "outside the sdd root"),
        (".sdd/config.yaml", "inside .git/ or .sdd/"),
        ("https://ci.example/acme/runs/42", "no connector reads CI runs yet"),
        ("github-run:42", "no connector reads CI runs yet"),
    ],
)
def test_a_missing_build_result_is_reported_by_name_and_nothing_else_is_written(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref: str, why: str
) -> None:
    watcher(root)
    found = routine(root)
    (root.path.parent / "outside.log").write_text("FAIL from another folder\n")
    script(tmp_path, monkeypatch, [])  # any provider call would fail the run: none is made
    before = files(root)
    fired = fire(root, found, event(ref=ref))
    assert (fired.status, fired.exit_code) == ("missing", 1)
    assert fired.message.startswith(f"missing: {ref} (") and why in fired.message
    assert transcript(tmp_path) == []
    assert files(root) == before  # the record, the product and .sdd/local are as they were
    (log,) = run_logs(root)
    logged = events(root, log.stem)
    assert [e["event"] for e in logged] == ["run_started", "missing", "run_ended"]
    started, missing, ended = logged
    assert (started["origin"], started["routine"], started["event_id"]) == (
        "routine", "main-build-watch", "ev-1",
    )  # fmt: skip
    assert missing["source"] == ref and ended["status"] == "missing"


def test_a_push_to_a_commit_not_in_the_repository_and_a_gone_file_are_missing(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher(root)
    commit_all(root.path, "first")
    script(tmp_path, monkeypatch, [])
    pushed = routine(root, "on: push main\ninput: the commit\nexpected: a review\n", "on-push")
    fired = fire(root, pushed, event("push", "deadbeef" * 5, branch="main"))
    assert fired.status == "missing" and fired.message.startswith("missing: commit deadbeef")
    not_hex = fire(root, pushed, event("push", "HEAD~1", id="ev-2", branch="main"))
    assert not_hex.status == "missing" and "not a commit id" in not_hex.message
    changed = routine(root, 'on: file-changed "src/**"\ninput: a\nexpected: b\n', "on-src")
    gone = fire(root, changed, event("file-changed", "src/gone.py", id="ev-3"))
    assert gone.status == "missing" and gone.message.startswith("missing: src/gone.py")
    assert transcript(tmp_path) == []


def test_the_build_result_is_attached_whole_and_the_task_names_input_expected_and_event(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text('<failure name="test_login">boom</failure>\n')
    script(tmp_path, monkeypatch, [{"role": "watcher", "say": "test_login fails: boom."}])
    fired = fire(root, routine(root), event(branch="main"))
    assert (fired.status, fired.exit_code, fired.reply) == ("done", 0, "test_login fails: boom.")
    (call,) = transcript(tmp_path)
    user = next(m["content"] for m in call["messages"] if m["role"] == "user")
    assert "the failed job's log" in user and "a short diagnosis citing the failing test" in user
    assert "the build of main failed" in user and "build/junit.xml" in user
    assert '<failure name="test_login">boom</failure>' in user  # the real result, read now
    started = events(root, fired.run_id or "")[0]
    assert (started["origin"], started["routine"], started["event_id"]) == (
        "routine", "main-build-watch", "ev-1",
    )  # fmt: skip


def test_a_push_routine_gets_the_commit_that_exists(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher(root)
    commit_all(root.path, "first")
    head = git(root.path, "rev-parse", "HEAD").strip()
    script(tmp_path, monkeypatch, [{"say": "Looks fine."}])
    pushed = routine(root, "on: push main\ninput: the commit\nexpected: a review\n", "on-push")
    fired = fire(root, pushed, event("push", head[:12], branch="main"))
    assert fired.status == "done"
    assert f"The commit is {head}" in transcript(tmp_path)[0]["messages"][1]["content"]


# --- what a routine can never do ----------------------------------------------------------------


def command(text: str) -> dict[str, object]:
    return {"tool": "run_command", "args": {"command": text, "purpose": "p"}}


def test_a_routine_cannot_write_a_qa_result_or_advance_a_stage(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = accepted_change(root)
    # Even a rule she saved for the very command does not open a person command to a role.
    watcher(
        root, "boundary:\n  always_allow:\n    - {tool: run_command, inputs: {command: sdd next}}\n"
    )
    calls = [
        command(f"sdd qa record {change}/SC-1 pass 'it works'"),
        command("sdd next"),
        command(f"sdd complete {change}"),
        command("bash -c 'sdd next'"),
        command("env sdd complete"),
        command(f"python -m sdd_git qa record {change}/SC-1 pass ok"),
        write_call(f"changes/{change}/qa.yaml", "- {scenario: SC-1, result: pass}\n"),
        write_call(f"changes/{change}/change.yaml", "stage: done\n"),
        {"tool": "record_qa_result", "args": {"scenario": f"{change}/SC-1", "result": "pass"}},
        {"tool": "next_stage", "args": {"change": change}},
        {"tool": "complete", "args": {"change": change}},
    ]
    script(tmp_path, monkeypatch, [{"tool_calls": calls}, {"say": "I could not; proposing."}])
    record = {p: b for p, b in files(root).items() if p.startswith(("memory/", "changes/"))}
    stage = changes.load(root, change).stage
    fired = fire(root, routine(root), event(kind="main-build-failed", ref="build/r.xml"))
    assert fired.status == "missing"  # no build result: nothing ran at all
    (root.path / "build").mkdir()
    (root.path / "build" / "r.xml").write_text("FAIL\n")
    fired = fire(root, routine(root), event(ref="build/r.xml", id="ev-2"))
    assert fired.status == "done", fired.message
    logged = events(root, fired.run_id or "")
    rejected = [e for e in logged if e["event"] == "rejected"]
    assert len(rejected) == len(calls)
    assert not [e for e in logged if e["event"] in ("stop", "action_done")]
    assert stops.pending(root) == []
    after = {p: b for p, b in files(root).items() if p.startswith(("memory/", "changes/"))}
    assert after == record and changes.load(root, change).stage == stage


# --- pause, hide, once per event ----------------------------------------------------------------


def test_hiding_the_role_does_not_pause_its_routine_and_pause_and_resume_work(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.roles.manage import set_flag
    from sdd_git.routines.manage import set_paused

    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"say": "one"}, {"say": "two"}])
    routine(root)
    set_flag(root, "watcher", "hidden", True)
    hidden = fire(root, read_routine(routine_path(root)), event(id="ev-1"))
    assert hidden.status == "done" and len(transcript(tmp_path)) == 1
    paused = set_paused(root, "main-build-watch", True)
    asleep = fire(root, paused, event(id="ev-2"))
    assert (asleep.status, asleep.exit_code, asleep.run_id) == ("paused", 0, None)
    assert "paused" in asleep.message and len(transcript(tmp_path)) == 1
    assert len(run_logs(root)) == 1  # nothing ran, nothing was logged
    awake = fire(root, set_paused(root, "main-build-watch", False), event(id="ev-3"))
    assert awake.status == "done" and len(transcript(tmp_path)) == 2


def routine_path(root: Root) -> Path:
    return root.sdd / "roles" / "watcher" / "routines" / "main-build-watch.yaml"


def test_one_event_runs_a_routine_once_and_other_refs_are_other_runs(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher(root)
    (root.path / "build").mkdir()
    for name in ("a.xml", "b.xml"):
        (root.path / "build" / name).write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"say": "one"}, {"say": "two"}])
    found = routine(root)
    first = fire(root, found, event(ref="build/a.xml", id="ev-a"))
    again = fire(root, found, event(ref="build/a.xml", id="ev-a"))
    assert first.status == "done"
    assert (again.status, again.exit_code, again.run_id) == ("already", 0, first.run_id)
    other = fire(root, found, event(ref="build/b.xml", id="ev-b"))
    assert other.status == "done" and other.run_id != first.run_id
    assert len(transcript(tmp_path)) == 2 and len(run_logs(root)) == 2


def test_a_lock_left_by_a_fire_that_died_is_taken_over(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    found = routine(root)
    lock = lock_path(root, found)
    lock.parent.mkdir(parents=True)
    # A fire that died before its run_started: nothing ran, so the event may fire again.
    lock.write_text(json.dumps({"pid": 2**22 + 12345, "host": socket.gethostname()}))
    script(tmp_path, monkeypatch, [{"say": "ran"}])
    assert fire(root, found, event()).status == "done"
    assert not lock.exists()


def test_the_lock_is_released_once_the_run_has_claimed_the_event(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    found = routine(root)
    script(tmp_path, monkeypatch, [{"say": "ran"}])
    held_during_call: list[bool] = []

    def seen(logged: dict[str, object]) -> None:
        if logged.get("event") == "provider_call":
            held_during_call.append(lock_path(root, found).exists())

    assert fire(root, found, event(), on_event=seen).status == "done"
    assert held_during_call == [False]  # another event of this routine need not wait


def test_an_event_the_routine_does_not_listen_to_is_refused(root: Root) -> None:
    from sdd_git.errors import UsageError

    watcher(root)
    pushed = routine(root, "on: push main\ninput: a\nexpected: b\n", "on-push")
    with pytest.raises(UsageError, match="does not listen"):
        fire(root, pushed, event("push", "a" * 40, branch="release"))
    assert run_logs(root) == []


# --- rehearsal ------------------------------------------------------------------------------------


def test_a_rehearsal_never_runs_a_consequential_action_even_when_always_allowed(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    watcher(
        root,
        "boundary:\n  always_allow:\n"
        '    - {tool: write_file, inputs: {path: fix.txt, content: "x\\n"}}\n',
    )
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    found = routine(root)
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [write_call("fix.txt")]},
            {"say": "I would write fix.txt."},
            {"tool_calls": [write_call("fix.txt")]},
            {"say": "Wrote fix.txt."},
        ],
    )
    tested = fire(root, found, event(id="test-1"), rehearsal=True)
    assert tested.status == "done"
    assert not (root.path / "fix.txt").exists()
    logged = events(root, tested.run_id or "")
    (rehearsed,) = [e for e in logged if e["event"] == "rehearsed"]
    assert rehearsed["tool"] == "write_file" and rehearsed["would"] == "run under a saved rule"
    assert "action_done" not in kinds(root, tested.run_id or "")
    assert logged[0]["routine_rules"]["rehearsal"] is True
    # The same call outside a rehearsal runs under the rule: the rule really matched it.
    real = fire(root, found, event(id="ev-real"))
    assert real.status == "done" and (root.path / "fix.txt").read_text() == "x\n"


def test_a_paused_routine_can_still_be_rehearsed(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"say": "tested"}])
    found = routine(root, BUILD_WATCH.replace("paused: false", "paused: true"))
    assert fire(root, found, event(id="test-2"), rehearsal=True).status == "done"


# --- history ------------------------------------------------------------------------------------


def test_history_lists_runs_newest_first_and_a_copied_roles_routine_has_none(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.roles.manage import duplicate
    from sdd_git.routines.routine import find_routine

    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"say": "one"}])
    found = routine(root)
    missing = fire(root, found, event(ref="build/none.xml", id="ev-1"))
    done = fire(root, found, event(id="ev-2"))
    history = runs_for(root, found)
    assert [(r["run"], r["event"], r["status"]) for r in history] == [
        (done.run_id, "ev-2", "done"),
        (missing.run_id, "ev-1", "missing"),
    ]
    assert runs_for(root, found, "ev-1")[0]["run"] == missing.run_id
    copy = duplicate(root, "watcher")
    copied = find_routine(root, f"{copy.name}/main-build-watch")
    assert copied.path.is_file() and copied.role == "watcher-copy"
    assert runs_for(root, copied) == []


# --- an unanswered stop -------------------------------------------------------------------------


def test_an_unanswered_routine_stop_expires_and_never_runs(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    root.config.write_text(root.config.read_text().replace("timeout: 10m", "timeout: 2s"))
    confirm(root, ".sdd/config.yaml")  # she edited her settings and confirmed them
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("late.txt")]}, {"say": "never"}])
    started = time.time() - 60  # the stop was raised a minute ago; nobody answered it
    fired = fire(root, routine(root), event(), clock=lambda: started)
    assert (fired.status, fired.exit_code) == ("stopped", 3)
    (waiting,) = json.loads(sdd("stops", "--json").stdout)
    assert waiting["origin"] == "routine" and waiting["expires_at"] is not None
    assert waiting["expired"] is True
    answered = sdd("allow", waiting["id"])
    assert answered.code == 1 and "expired" in answered.stderr
    decisions = [e for e in events(root, fired.run_id or "") if e["event"] == "decision"]
    assert [d["choice"] for d in decisions] == ["expired"]
    assert not (root.path / "late.txt").exists()
    assert len(transcript(tmp_path)) == 1  # the run did not go on


def test_the_timeout_of_a_routine_stop_comes_from_the_config(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    root.config.write_text(root.config.read_text().replace("timeout: 10m", "timeout: 90s"))
    confirm(root, ".sdd/config.yaml")  # she edited her settings and confirmed them
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}])
    fired = fire(root, routine(root), event(), clock=lambda: 1_000_000.0)
    (stop,) = stops.pending(root)
    assert stop.origin == "routine" and stop.expires_at == 1_000_090.0
    assert fired.message.startswith("watcher/main-build-watch stopped for the person")


def test_a_stop_raised_in_ci_waits_a_day_unless_ci_timeout_says_otherwise(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}] * 3)
    found = routine(root)
    in_ci = Event("ev-ci", "main-build-failed", "build/junit.xml", "2026-11-30T09:00:00Z", "ci")
    fire(root, found, in_ci, clock=lambda: 1_000_000.0)
    (stop,) = stops.pending(root)
    # approvals.timeout (10m here) is for stops someone may be near; CI's waits 24 h.
    assert stop.expires_at == 1_000_000.0 + 86_400
    assert stop.choices == ("allow once", "deny")  # no saved rule counts in CI
    stops.remove(root, stop.id)
    root.config.write_text(
        root.config.read_text().replace("timeout: 10m", "timeout: 10m, ci_timeout: 90m")
    )
    confirm(root, ".sdd/config.yaml")
    fire(root, found, dataclasses.replace(in_ci, id="ev-ci-2"), clock=lambda: 2_000_000.0)
    (stop,) = stops.pending(root)
    assert stop.expires_at == 2_000_000.0 + 5_400
    stops.remove(root, stop.id)
    # The same routine fired from a hook keeps approvals.timeout.
    fire(root, found, event(id="ev-hook"), clock=lambda: 3_000_000.0)
    (stop,) = stops.pending(root)
    assert stop.expires_at == 3_000_000.0 + 600
    assert "always allow" in stop.choices


def test_a_ci_stop_past_its_ci_timeout_is_expired_and_never_runs(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    root.config.write_text(
        root.config.read_text().replace("timeout: 10m", "timeout: 1h, ci_timeout: 90s")
    )
    confirm(root, ".sdd/config.yaml")
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("late.txt")]}, {"say": "never"}])
    in_ci = Event("ev-ci", "main-build-failed", "build/junit.xml", "2026-11-30T09:00:00Z", "ci")
    fired = fire(root, routine(root), in_ci, clock=lambda: time.time() - 120)
    (waiting,) = stops.pending(root)
    answered = sdd("allow", waiting.id)
    assert answered.code == 1 and "expired" in answered.stderr
    decisions = [e for e in events(root, fired.run_id or "") if e["event"] == "decision"]
    assert [d["choice"] for d in decisions] == ["expired"]
    assert not (root.path / "late.txt").exists()


def test_two_fires_of_one_event_at_once_run_it_once(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    found = routine(root)
    script(tmp_path, monkeypatch, [{"say": "ran"}])
    results: list[str] = []

    def one() -> None:
        results.append(fire(root, found, event(id="ev-same")).status)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) == ["already", "done"]
    assert len(transcript(tmp_path)) == 1 and len(run_logs(root)) == 1


# --- unattended, addressed, and which change ------------------------------------------------------


def test_in_ci_a_saved_always_allow_rule_does_not_run_the_action(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    watcher(
        root,
        "boundary:\n  always_allow:\n"
        '    - {tool: write_file, inputs: {path: fix.txt, content: "x\\n"}}\n',
    )
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    found = routine(root)
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("fix.txt")]}])
    in_ci = Event("ev-ci", "main-build-failed", "build/junit.xml", "2026-11-30T09:00:00Z", "ci")
    fired = fire(root, found, in_ci)
    assert (fired.status, fired.exit_code) == ("stopped", 3)
    assert not (root.path / "fix.txt").exists()
    assert events(root, fired.run_id or "")[0]["routine_rules"]["unattended"] is True


def test_an_event_addressed_to_one_routine_is_not_run_by_the_other_listeners(root: Root) -> None:
    first = routine(root, "on: pr-merged\ninput: a\nexpected: b\n", "first")
    second = routine(root, "on: pr-merged\ninput: a\nexpected: b\n", "second")
    addressed = event("pr-merged", "a" * 40, routine="watcher/first")
    assert [r.name for r in (first, second) if _listens(r, addressed)] == ["first"]
    everyone = event("pr-merged", "a" * 40)
    assert [r.name for r in (first, second) if _listens(r, everyone)] == ["first", "second"]


def _listens(found: Routine, evt: Event) -> bool:
    from sdd_git.routines.routine import listens

    return listens(found, evt)


def test_with_two_open_changes_the_event_names_the_change_the_run_is_about(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = accepted_change(root)
    changes.create(root, "A second change.")
    watcher(root)
    (root.path / "build").mkdir()
    (root.path / "build" / "junit.xml").write_text("FAIL\n")
    found = routine(root)
    script(tmp_path, monkeypatch, [{"say": "Diagnosed."}])
    with pytest.raises(Exception, match="more than one change is open"):
        fire(root, found, event())
    named = Event("ev-2", "main-build-failed", "build/junit.xml", "2026-11-30T09:00:00Z", "hook",
                  extra={"change": chosen})  # fmt: skip
    fired = fire(root, found, named)
    assert fired.status == "done"
    assert events(root, fired.run_id or "")[0]["change"] == chosen
