"""`sdd routine ...` end to end: create, list, show, edit, pause, resume, delete, fire, test,
history and export, in real git roots with the scripted provider."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from sdd_git.events.queue import done_folder, events_folder, pending
from sdd_git.root import Root
from sdd_git.routines.hookindex import read_index
from sdd_git.routines.routine import read_routine
from tests.conftest import SddRunner, commit_all, git
from tests.runner.scripted import (
    accepted_change,
    add_role,
    events,
    script,
    transcript,
    write_call,
)
from tests.trusthelp import confirm

CREATE = (
    "routine", "create", "watcher", "main-build-watch", "--on", "main-build-failed",
    "--input", "the failed job's log", "--expected", "a short diagnosis",
)  # fmt: skip


@pytest.fixture
def watcher(root: Root) -> Path:
    return add_role(root, "watcher", produces="other")


def routine_file(root: Root, name: str = "main-build-watch") -> Path:
    return root.sdd / "roles" / "watcher" / "routines" / f"{name}.yaml"


def build_result(root: Root, name: str = "junit.xml", text: str = "FAIL test_login\n") -> str:
    (root.path / "build").mkdir(exist_ok=True)
    (root.path / "build" / name).write_text(text)
    return f"build/{name}"


def make(sdd: SddRunner, *extra: str) -> None:
    result = sdd(*CREATE, *extra, "--yes")
    assert result.code == 0, result.stderr


# --- create -------------------------------------------------------------------------------------


def test_create_shows_every_field_and_with_no_terminal_and_no_yes_writes_nothing(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    result = sdd(*CREATE)
    assert result.code == 2
    for words in (
        "owner:", "the role watcher",
        "trigger:", "when the build of the main branch (main) fails",
        "input:", "the failed job's log",
        "expected result:", "a short diagnosis",
        "when the source is missing:", "it is reported, never replaced by stale or cached data",
        "paused:",
    ):  # fmt: skip
        assert words in result.stdout
    assert "--yes" in result.stderr and "nothing was written" in result.stderr
    assert not routine_file(root).exists()
    assert not (root.sdd / "roles" / "watcher" / "routines").exists()


def test_create_with_yes_writes_a_file_that_parses_with_the_contract_keys(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    make(sdd)
    data = yaml.safe_load(routine_file(root).read_text())
    assert {True if k is True else k for k in data} == {
        "name",
        True,
        "input",
        "expected",
        "when_source_missing",
        "paused",
    }  # fmt: skip  (a YAML 1.1 reader reads the bare key `on` as true)
    assert data["when_source_missing"] == "report" and data["paused"] is False
    found = read_routine(routine_file(root))
    assert (found.on, found.input, found.expected) == (
        "main-build-failed", "the failed job's log", "a short diagnosis",
    )  # fmt: skip
    assert "boundary" not in data


def test_create_keeps_ask_first_rules_as_the_routines_boundary(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    make(sdd, "--ask-first", "write_file", "--ask-first", "git_commit")
    assert read_routine(routine_file(root)).ask_first == (
        {"tool": "write_file"}, {"tool": "git_commit"},
    )  # fmt: skip


@pytest.mark.parametrize(("answer", "written"), [("y\n", True), ("n\n", False), ("", False)])
def test_in_a_terminal_create_asks_and_only_a_yes_writes(
    sdd: SddRunner,
    root: Root,
    watcher: Path,
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    written: bool,
) -> None:
    from sdd_git.cli import routine_cmds

    monkeypatch.setattr(routine_cmds, "_can_ask", lambda: True)
    result = sdd(*CREATE, input=answer)
    assert "Write this routine?" in result.stderr
    assert routine_file(root).exists() is written
    assert result.code == (0 if answer != "" else 130)  # end of input at a prompt: aborted


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (("--schedule", "61 * * * *"), "--schedule: '61 * * * *' is not a schedule"),
        (("--schedule", "every day"), "--schedule: 'every day' is not a schedule"),
        (("--on", "deployed"), "--on: 'deployed' is not a trigger"),
        (("--on", "push"), "--on: 'push' needs a branch"),
        (("--on", "file-changed ../x"), "--on: '../x' must be a glob inside the product"),
        (("--on", "pr-merged", "--schedule", "0 9 * * *"), "exactly one trigger"),
        ((), "exactly one trigger"),
        (("--on", "pr-merged", "--ask-first", "launch_rockets"), "--ask-first:"),
    ],
)
def test_a_bad_schedule_or_trigger_is_refused_with_a_clear_error_and_nothing_written(
    sdd: SddRunner, root: Root, watcher: Path, options: tuple[str, ...], says: str
) -> None:
    result = sdd("routine", "create", "watcher", "nightly", *options, "--input", "a",
                 "--expected", "b", "--yes")  # fmt: skip
    assert result.code == 2
    assert says in result.stderr
    assert ".yaml" not in result.stderr  # no file to point at: none was written
    assert "hint:" in result.stderr
    assert not (root.sdd / "roles" / "watcher" / "routines").exists()


def test_create_refuses_an_existing_name_a_bad_name_and_an_unknown_role(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    make(sdd)
    before = routine_file(root).read_text()
    again = sdd(*CREATE, "--yes")
    assert again.code == 2 and "already has a routine 'main-build-watch'" in again.stderr
    assert routine_file(root).read_text() == before
    bad = sdd("routine", "create", "watcher", "Bad_Name", "--on", "pr-merged", "--input", "a",
              "--expected", "b", "--yes")  # fmt: skip
    assert bad.code == 2 and "not a routine name" in bad.stderr
    nobody = sdd("routine", "create", "nobody", "x", "--on", "pr-merged", "--input", "a",
                 "--expected", "b", "--yes")  # fmt: skip
    assert nobody.code == 1 and "no role 'nobody'" in nobody.stderr


# --- list and show ------------------------------------------------------------------------------


def test_list_json_gives_name_role_trigger_paused_and_names_a_broken_file_with_its_line(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    make(sdd)
    sdd("routine", "create", "watcher", "nightly", "--schedule", "0 9 * * 1-5", "--input", "a",
        "--expected", "b", "--yes")  # fmt: skip
    broken = routine_file(root, "broken")
    broken.write_text("name: broken\non: pr-merged\ninput: a\nexpected: b\npaused: maybe\n")
    result = sdd("routine", "list", "--json")
    assert result.code == 0
    assert json.loads(result.stdout) == [
        {"name": "main-build-watch", "role": "watcher", "trigger": "on: main-build-failed",
         "paused": False},
        {"name": "nightly", "role": "watcher", "trigger": "schedule: 0 9 * * 1-5",
         "paused": False},
    ]  # fmt: skip
    assert "broken.yaml:5: key 'paused'" in result.stderr
    plain = sdd("routine", "list")
    assert "main-build-watch" in plain.stdout and "broken.yaml:5" in plain.stderr


def test_show_prints_every_field_in_plain_words(sdd: SddRunner, root: Root, watcher: Path) -> None:
    make(sdd)
    result = sdd("routine", "show", "main-build-watch")
    assert result.code == 0
    assert "the failed job's log" in result.stdout and "never replaced" in result.stdout
    shown = json.loads(sdd("routine", "show", "watcher/main-build-watch", "--json").stdout)
    assert shown["trigger"] == "on: main-build-failed" and shown["runs"] == 0


# --- edit, pause, resume, delete ----------------------------------------------------------------

COMMENTED = """\
# Watches the main build for the team (Mondays: reviewed).
name: main-build-watch
on: main-build-failed          # the CI's failed builds of main
input: "the failed job's log"  # whole, never a summary
expected: a short diagnosis
when_source_missing: report
paused: false                  # she pauses it during releases
"""


def test_edit_pause_and_resume_keep_the_persons_comments(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    path = routine_file(root)
    path.parent.mkdir(parents=True)
    path.write_text(COMMENTED)
    confirm(root, path.relative_to(root.path).as_posix())  # she wrote it in her editor
    edited = sdd("routine", "edit", "main-build-watch", "--expected", "a diagnosis: yes, short")
    assert edited.code == 0, edited.stderr
    assert sdd("routine", "pause", "main-build-watch").code == 0
    text = path.read_text()
    for comment in ("# Watches the main build", "# the CI's failed builds of main",
                    "# whole, never a summary", "# she pauses it during releases"):  # fmt: skip
        assert comment in text
    found = read_routine(path)
    assert found.expected == "a diagnosis: yes, short" and found.paused is True
    assert sdd("routine", "resume", "main-build-watch").code == 0
    assert read_routine(path).paused is False
    assert "# she pauses it during releases" in path.read_text()
    switched = sdd("routine", "edit", "main-build-watch", "--schedule", "0 9 * * 1-5")
    assert switched.code == 0, switched.stderr
    found = read_routine(path)
    assert (found.on, found.schedule, found.input) == (None, "0 9 * * 1-5", "the failed job's log")
    assert path.read_text().index("schedule:") < path.read_text().index("input:")  # in place
    assert "# Watches the main build" in path.read_text()


def test_edit_refuses_a_bad_schedule_and_no_option_and_changes_nothing(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    make(sdd)
    before = routine_file(root).read_text()
    bad = sdd("routine", "edit", "main-build-watch", "--schedule", "0 25 * * *")
    assert bad.code == 2 and "--schedule: '0 25 * * *' is not a schedule" in bad.stderr
    empty = sdd("routine", "edit", "main-build-watch")
    assert empty.code == 2 and "nothing to change" in empty.stderr
    assert routine_file(root).read_text() == before


def test_delete_asks_writes_nothing_without_a_terminal_and_deletes_with_yes(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    make(sdd)
    refused = sdd("routine", "delete", "main-build-watch")
    assert refused.code == 2 and "--yes" in refused.stderr and routine_file(root).exists()
    deleted = sdd("routine", "delete", "main-build-watch", "--yes")
    assert deleted.code == 0 and not routine_file(root).exists()
    assert sdd("routine", "show", "main-build-watch").code == 2


def test_every_change_rewrites_the_hooks_index(sdd: SddRunner, root: Root, watcher: Path) -> None:
    make(sdd)
    assert read_index(root)[1] == ["main-build-failed"]
    sdd("routine", "pause", "main-build-watch")
    assert read_index(root)[1] == []
    sdd("routine", "resume", "main-build-watch")
    assert read_index(root)[1] == ["main-build-failed"]
    sdd("routine", "edit", "main-build-watch", "--on", "push main")
    assert read_index(root)[1] == ["push main"]
    sdd("routine", "delete", "main-build-watch", "--yes")
    assert read_index(root)[1] == []


def test_copying_and_deleting_a_role_rewrites_the_hooks_index(
    sdd: SddRunner, root: Root, watcher: Path
) -> None:
    make(sdd)
    assert sdd("role", "duplicate", "watcher").code == 0
    (copied,) = (root.sdd / "roles" / "watcher-copy" / "routines").glob("*.yaml")
    sdd("routine", "pause", "watcher/main-build-watch")
    assert read_index(root)[1] == ["main-build-failed"]  # the copy still listens
    assert sdd("role", "delete", "watcher-copy", "--yes").code == 0
    assert not copied.exists() and read_index(root)[1] == []


def test_person_commands_refuse_inside_a_role_run(
    sdd: SddRunner, root: Root, watcher: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(sdd)
    before = routine_file(root).read_text()
    monkeypatch.setenv("SDD_RUN_ID", "run-20261130-000000-abcdef")
    for command in (
        (*CREATE[:3], "other", *CREATE[4:], "--yes"),
        ("routine", "edit", "main-build-watch", "--input", "x"),
        ("routine", "pause", "main-build-watch"),
        ("routine", "resume", "main-build-watch"),
        ("routine", "delete", "main-build-watch", "--yes"),
        ("routine", "fire", "main-build-watch", "--event", '{"ref": "build/junit.xml"}'),
        ("routine", "test", "main-build-watch", "--event", '{"ref": "build/junit.xml"}'),
    ):
        result = sdd(*command)
        assert result.code == 1, command
        assert "person commands cannot run inside a role run" in result.stderr
    assert routine_file(root).read_text() == before
    assert not routine_file(root, "other").exists() and pending(root) == []


# --- fire ---------------------------------------------------------------------------------------


def test_fire_writes_the_event_then_runs_and_moves_it_to_done(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(sdd)
    ref = build_result(root)
    script(tmp_path, monkeypatch, [{"say": "test_login fails."}])
    result = sdd("routine", "fire", "main-build-watch", "--event", json.dumps({"ref": ref}))
    assert result.code == 0, result.stderr
    assert "test_login fails." in result.stdout
    (done,) = done_folder(root).glob("*.json")
    event = json.loads(done.read_text())
    assert (event["kind"], event["ref"], event["source"], event["branch"]) == (
        "main-build-failed", ref, "ci", "main",
    )  # fmt: skip
    assert pending(root) == []
    (log,) = (root.sdd / "role-runs").glob("*.jsonl")
    started = events(root, log.stem)[0]
    assert (started["origin"], started["routine"], started["event_id"]) == (
        "routine", "main-build-watch", event["id"],
    )  # fmt: skip
    as_json = sdd("routine", "fire", "main-build-watch", "--event", json.dumps({"ref": ref}),
                  "--json")  # fmt: skip
    assert as_json.code == 0 and as_json.stderr == ""  # one JSON document, nothing else
    outcome = json.loads(as_json.stdout)
    assert (outcome["status"], outcome["reply"]) == ("done", "test_login fails.")
    assert outcome["event"] != event["id"]  # fired again without an id: another event


def test_fire_on_a_paused_routine_says_so_runs_nothing_and_exits_0(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(sdd)
    sdd("routine", "pause", "main-build-watch")
    script(tmp_path, monkeypatch, [])
    result = sdd("routine", "fire", "main-build-watch", "--event", '{"ref": "build/junit.xml"}')
    assert result.code == 0 and "paused" in result.stdout
    assert transcript(tmp_path) == [] and not (root.sdd / "role-runs").exists()
    assert len(list(done_folder(root).glob("*.json"))) == 1  # the event was still recorded


def test_fire_with_the_same_event_id_runs_once_and_different_refs_are_two_runs(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(sdd)
    first, second = build_result(root, "a.xml"), build_result(root, "b.xml")
    script(tmp_path, monkeypatch, [{"say": "one"}, {"say": "two"}])
    event = json.dumps({"id": "gh-run-7-1", "ref": first})
    assert sdd("routine", "fire", "main-build-watch", "--event", event).code == 0
    again = sdd("routine", "fire", "main-build-watch", "--event", event)
    assert again.code == 0 and "already ran for event gh-run-7-1" in again.stdout
    other = sdd("routine", "fire", "main-build-watch", "--event", json.dumps({"ref": second}))
    assert other.code == 0
    assert len(transcript(tmp_path)) == 2
    history = json.loads(sdd("routine", "history", "main-build-watch", "--json").stdout)
    assert len(history) == 2 and {h["status"] for h in history} == {"done"}
    assert all(h["run"].startswith("run-") for h in history)


def test_fire_reports_a_missing_source_and_exits_1(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(sdd)
    script(tmp_path, monkeypatch, [])
    summary = tmp_path / "summary.md"
    result = sdd("routine", "fire", "main-build-watch", "--event", '{"ref": "build/gone.xml"}',
                 "--summary", str(summary))  # fmt: skip
    assert result.code == 1
    assert result.stdout.startswith("missing: build/gone.xml")
    assert transcript(tmp_path) == []
    assert "`watcher/main-build-watch`: missing" in summary.read_text()
    assert "missing: build/gone.xml (no such file)" in summary.read_text()


@pytest.mark.parametrize(
    ("event", "says"),
    [
        ("{not json", "--event is not JSON"),
        ('["ref"]', "--event must be a JSON object"),
        ("{}", "needs a 'ref'"),
        ('{"kind": "pr-merged", "ref": "abc1"}', "fires on main-build-failed, not pr-merged"),
        ('{"ref": "a", "source": "moon"}', "'moon' is not an event source"),
        ('{"ref": "a", "id": "../../x"}', "is not an event id"),
        ('{"ref": "a", "at": "yesterday"}', "'at' must be a UTC time"),
    ],
)
def test_fire_refuses_a_bad_event_before_writing_it(
    sdd: SddRunner, root: Root, watcher: Path, event: str, says: str
) -> None:
    make(sdd)
    result = sdd("routine", "fire", "main-build-watch", "--event", event)
    assert result.code == 2 and says in result.stderr
    assert not events_folder(root).exists()


def test_in_ci_every_stop_goes_to_the_job_summary_in_plain_words(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    make(sdd)
    ref = build_result(root)
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("fix.txt", "patched\n")]}])
    summary = tmp_path / "step-summary.md"
    summary.write_text("# earlier steps\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = sdd("routine", "fire", "main-build-watch", "--event", json.dumps({"ref": ref}))
    assert result.code == 3  # nobody answers in CI: the run ends stopped
    assert not (root.path / "fix.txt").exists()  # nothing consequential ran
    (stop,) = json.loads(sdd("stops", "--json").stdout)
    text = summary.read_text()
    assert text.startswith("# earlier steps\n")  # appended, never replaced
    assert "sdd routine `watcher/main-build-watch`: stopped" in text
    assert f"Stop `{stop['id']}`, expires `{stop['expires_at']}`" in text
    assert "Create the file fix.txt (1 line, 8 bytes)" in text
    assert "Each stop waits for a reviewer's answer until it expires" in text
    # --summary names the file where GitHub's variable is not set (GitLab, Jenkins).
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    other = tmp_path / "other.md"
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("fix.txt", "patched\n")]}], "s2")
    sdd("deny", stop["id"])  # her answer frees the role for the next run
    result = sdd("routine", "fire", "main-build-watch", "--event", json.dumps({"ref": ref}),
                 "--summary", str(other))  # fmt: skip
    assert result.code == 3 and "Create the file fix.txt" in other.read_text()


# --- test ---------------------------------------------------------------------------------------


def test_routine_test_uses_the_newest_build_result_and_runs_nothing_even_always_allowed(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(
        root,
        "watcher",
        produces="other",
        extra="boundary:\n  always_allow:\n"
        '    - {tool: write_file, inputs: {path: fix.txt, content: "x\\n"}}\n',
    )
    make(sdd)
    missing = sdd("routine", "test", "main-build-watch")
    assert missing.code == 2 and "watch: {build_results:" in missing.stderr
    with root.config.open("a") as config:
        config.write('watch: {build_results: ["build/*.xml"]}\n')
    confirm(root, ".sdd/config.yaml")  # she wrote it herself
    build_result(root, "old.xml", "FAIL old\n")
    newest = root.path / build_result(root, "new.xml", "FAIL new_test\n")
    os.utime(newest, (newest.stat().st_mtime + 10, newest.stat().st_mtime + 10))
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("fix.txt")]}, {"say": "I'd fix."}])
    result = sdd("routine", "test", "main-build-watch")
    assert result.code == 0, result.stderr
    assert not (root.path / "fix.txt").exists()
    user = transcript(tmp_path)[0]["messages"][1]["content"]
    assert "FAIL new_test" in user and "FAIL old" not in user
    assert (
        "not run (this is a test); in a real run it would run under a saved rule: Write "
        "the file fix.txt" in result.stderr
    )
    assert pending(root) == [] and not done_folder(root).exists()  # a test is not an event
    history = json.loads(sdd("routine", "history", "main-build-watch", "--json").stdout)
    assert [h["rehearsal"] for h in history] == [True]


def test_routine_test_of_a_push_routine_uses_the_tip_of_the_branch(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_all(root.path, "first")
    head = git(root.path, "rev-parse", "main").strip()
    assert sdd("routine", "create", "watcher", "on-push", "--on", "push main", "--input",
               "the pushed commit", "--expected", "a review", "--yes").code == 0  # fmt: skip
    script(tmp_path, monkeypatch, [{"say": "Reviewed."}])
    result = sdd("routine", "test", "on-push")
    assert result.code == 0, result.stderr
    assert f"The commit is {head}" in transcript(tmp_path)[0]["messages"][1]["content"]


def test_routine_test_with_a_missing_source_reports_it(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(sdd)
    with root.config.open("a") as config:
        config.write('watch: {build_results: ["build/*.xml"]}\n')
    confirm(root, ".sdd/config.yaml")  # she wrote it herself
    script(tmp_path, monkeypatch, [])
    result = sdd("routine", "test", "main-build-watch")
    assert result.code == 1 and "missing: build/*.xml" in result.stdout


# --- history and export -------------------------------------------------------------------------


def test_history_lists_its_runs_with_ids_and_a_copied_roles_routine_has_none(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(sdd)
    ref = build_result(root)
    script(tmp_path, monkeypatch, [{"say": "one"}])
    sdd("routine", "fire", "main-build-watch", "--event", json.dumps({"id": "e-1", "ref": ref}))
    runs = json.loads(sdd("routine", "history", "main-build-watch", "--json").stdout)
    assert [(r["event"], r["status"]) for r in runs] == [("e-1", "done")]
    plain = sdd("routine", "history", "main-build-watch")
    assert runs[0]["run"] in plain.stdout and "e-1" in plain.stdout
    assert sdd("role", "duplicate", "watcher").code == 0
    ambiguous = sdd("routine", "history", "main-build-watch")
    assert ambiguous.code == 2 and "watcher-copy/main-build-watch" in ambiguous.stderr
    copied = sdd("routine", "history", "watcher-copy/main-build-watch", "--json")
    assert json.loads(copied.stdout) == []
    hidden = sdd("role", "hide", "watcher")
    assert hidden.code == 0
    listed = json.loads(sdd("routine", "list", "--json").stdout)
    assert {(r["role"], r["paused"]) for r in listed} == {("watcher", False),
                                                         ("watcher-copy", False)}  # fmt: skip


def test_export_prints_the_definition_or_writes_it_to_out(
    sdd: SddRunner, root: Root, watcher: Path, tmp_path: Path
) -> None:
    from tests.routines.test_export import pin

    make(sdd)
    pin(root)  # where CI installs sdd from (ci.install), as she pins and confirms it
    printed = sdd("routine", "export", "main-build-watch", "--github-actions")
    assert printed.code == 0, printed.stderr
    assert "sdd routine fire main-build-watch" in printed.stdout
    out = tmp_path / "workflow.yml"
    written = sdd("routine", "export", "main-build-watch", "--gitlab-ci", "--out", str(out))
    assert written.code == 0, written.stderr
    assert "sdd routine fire main-build-watch" in out.read_text()
    none = sdd("routine", "export", "main-build-watch")
    assert none.code == 2 and "--github-actions" in none.stderr
