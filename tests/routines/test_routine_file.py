"""The routine file: triggers, schedules, the boundary it may carry, where a mistake is."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.errors import RecordError, UsageError
from sdd_git.root import Root
from sdd_git.routines.routine import (
    Event,
    find_routine,
    glob_matches,
    listens,
    load_routines,
    main_branch,
    read_routine,
)


def _write(root: Root, role: str, name: str, text: str) -> Path:
    path = root.sdd / "roles" / role / "routines" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _event(kind: str, ref: str = "abc", **more: str) -> Event:
    return Event(id="ev-1", kind=kind, ref=ref, at="2026-11-30T00:00:00Z", source="hook", **more)


def test_a_routine_file_as_the_contract_shows_it_reads(root: Root) -> None:
    path = _write(
        root,
        "builder",
        "main-build-watch",
        'name: main-build-watch\non: main-build-failed\ninput: "the failed job\'s log"\n'
        "expected: a short diagnosis\nboundary: {ask_first: [{tool: write_file}]}\n"
        "when_source_missing: report\npaused: false\n",
    )
    routine = read_routine(path)
    assert (routine.name, routine.role, routine.on, routine.paused) == (
        "main-build-watch", "builder", "main-build-failed", False,
    )  # fmt: skip
    assert routine.ask_first == ({"tool": "write_file"},)
    assert routine.trigger == "on: main-build-failed"


def test_the_on_key_is_read_however_a_yaml_1_1_loader_reads_it(root: Root) -> None:
    # PyYAML reads a bare `on:` key as the boolean True; a quoted one as text. Both are `on`.
    for key in ("on", '"on"'):
        path = _write(root, "builder", "merged", f"{key}: pr-merged\ninput: a\nexpected: b\n")
        assert read_routine(path).on == "pr-merged"


def test_push_and_file_changed_take_their_argument_and_schedules_are_cron(root: Root) -> None:
    push = read_routine(_write(root, "builder", "p", "on: push main\ninput: a\nexpected: b\n"))
    assert (push.event_kind, push.argument) == ("push", "main")
    changed = read_routine(
        _write(root, "builder", "f", 'on: file-changed "src/**"\ninput: a\nexpected: b\n')
    )
    assert (changed.event_kind, changed.argument) == ("file-changed", "src/**")
    cron = read_routine(
        _write(root, "builder", "c", 'schedule: "0 9 * * 1-5"\ninput: a\nexpected: b\n')
    )
    assert (cron.event_kind, cron.schedule) == ("schedule", "0 9 * * 1-5")


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("input: a\nexpected: b\n", 1, "exactly one trigger"),
        ("on: pr-merged\nschedule: '* * * * *'\ninput: a\nexpected: b\n", 1, "exactly one"),
        ("input: a\non: deployed\nexpected: b\n", 2, "'deployed' is not a trigger"),
        ("on: push\ninput: a\nexpected: b\n", 1, "needs a branch"),
        ("on: pr-merged now\ninput: a\nexpected: b\n", 1, "takes nothing after it"),
        ("on: file-changed ../secrets\ninput: a\nexpected: b\n", 1, "inside the product"),
        ("input: a\nexpected: b\nschedule: '61 * * * *'\n", 3, "is not a schedule"),
        ("on: pr-merged\ninput: a\n", 1, "'expected' must be a sentence"),
        (
            "on: pr-merged\ninput: a\nexpected: b\nwhen_source_missing: cached\n",
            4,
            "never replaced",
        ),
        ("on: pr-merged\ninput: a\nexpected: b\npaused: maybe\n", 4, "true or false"),
        ("on: pr-merged\ninput: a\nexpected: b\ncolour: red\n", 4, "unknown key 'colour'"),
        (
            "on: pr-merged\ninput: a\nexpected: b\nboundary: {always_allow: [{tool: git_push}]}\n",
            4,
            "only ask_first",
        ),
        (
            "on: pr-merged\ninput: a\nexpected: b\nboundary: {ask_first: [{tool: fly}]}\n",
            4,
            "not a rule naming a tool",
        ),
        ("name: other\non: pr-merged\ninput: a\nexpected: b\n", 1, "differs from the file's"),
    ],
)
def test_a_mistake_names_the_file_the_line_and_the_key(
    root: Root, text: str, line: int, says: str
) -> None:
    path = _write(root, "builder", "nightly", text)
    with pytest.raises(RecordError) as caught:
        read_routine(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}:") or f"nightly.yaml:{line}:" in message, message
    assert says in message
    assert caught.value.hint


def test_a_routine_listens_only_to_its_own_trigger(root: Root) -> None:
    push = read_routine(_write(root, "builder", "p", "on: push main\ninput: a\nexpected: b\n"))
    assert listens(push, _event("push", branch="main"))
    assert not listens(push, _event("push", branch="feature"))
    assert not listens(push, _event("pr-merged", branch="main"))
    changed = read_routine(
        _write(root, "builder", "f", "on: file-changed src/**/*.py\ninput: a\nexpected: b\n")
    )
    assert listens(changed, _event("file-changed", "src/app.py"))
    assert listens(changed, _event("file-changed", "src/deep/er/app.py"))
    assert not listens(changed, _event("file-changed", "docs/app.py"))
    cron = read_routine(
        _write(root, "builder", "c", "schedule: '0 0 * * *'\ninput: a\nexpected: b\n")
    )
    assert listens(cron, _event("schedule", routine="builder/c"))
    assert not listens(cron, _event("schedule", routine="builder/p"))


def test_globs_keep_a_star_inside_one_folder() -> None:
    assert glob_matches("*.md", "README.md")
    assert not glob_matches("*.md", "docs/README.md")
    assert glob_matches("**/*.md", "docs/README.md")
    assert glob_matches("src/**", "src/a/b/c")
    assert not glob_matches("src/**", "srcx/a")


def test_a_copied_routine_name_must_be_named_with_its_role(root: Root) -> None:
    text = "on: pr-merged\ninput: a\nexpected: b\n"
    _write(root, "builder", "merged", text)
    assert find_routine(root, "merged").role == "builder"
    _write(root, "builder-copy", "merged", text)
    with pytest.raises(UsageError, match="more than one role"):
        find_routine(root, "merged")
    assert find_routine(root, "builder-copy/merged").role == "builder-copy"
    with pytest.raises(UsageError, match="no routine 'absent'"):
        find_routine(root, "absent")


def test_a_broken_file_is_reported_and_the_others_still_load(root: Root) -> None:
    _write(root, "builder", "good", "on: pr-merged\ninput: a\nexpected: b\n")
    _write(root, "builder", "bad", "on: [unclosed\n")
    routines, problems = load_routines(root)
    assert [r.name for r in routines] == ["good"]
    assert len(problems) == 1 and "bad.yaml:" in str(problems[0])
    with pytest.raises(RecordError, match=r"bad\.yaml"):
        find_routine(root, "bad")


def test_the_main_branch_is_main_unless_the_config_says(root: Root) -> None:
    assert main_branch(root) == "main"
    root.config.write_text(root.config.read_text() + "main_branch: trunk\n", encoding="utf-8")
    assert main_branch(root) == "trunk"
    root.config.write_text(root.config.read_text() + "main_branch: '$(id)'\n", encoding="utf-8")
    with pytest.raises(RecordError, match="main_branch"):
        main_branch(root)
