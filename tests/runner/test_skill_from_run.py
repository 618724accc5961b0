"""A skill saved from work: a completed run read back into a draft Agent Skill, which the
reference validator accepts, and which joins the product's skills only once the person accepts
it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from skills_ref.validator import validate as reference_validate

from sdd_git.errors import InsideRunError, SddError, UsageError
from sdd_git.roles.skills import SkillFileError, check_file, discover
from sdd_git.root import Root
from sdd_git.runner import stops
from sdd_git.runner.run import RunRequest, answer, start
from sdd_git.runner.skill_from_run import (
    accept_draft,
    draft_file,
    save_draft,
    skill_file,
)
from tests.runner.scripted import accepted_change, add_role, script, write_call

SECTIONS = (
    "## When to use it",
    "## Inputs",
    "## Steps",
    "## How to check it",
    "## What to return",
    "## What needs approval",
)
TASK = "Add a hello file and check the tests still pass"


def _done_run(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A run that reads, runs the tests under a saved rule, writes a file after a stop the person
    allowed once, and ends done."""
    accepted_change(root)
    add_role(
        root,
        "builder",
        extra="boundary:\n  always_allow:\n    - {tool: run_command, inputs: {command: 'true'}}\n",
    )
    (root.path / "notes.md").write_text("Say hello.\n")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [{"tool": "read_file", "args": {"path": "notes.md"}}]},
            {
                "tool_calls": [
                    {"tool": "run_command", "args": {"command": "true", "purpose": "test"}}
                ]
            },
            {"tool_calls": [write_call("hello.txt", "hello, world\n", "the file she asked for")]},
            {"say": "Added hello.txt; the tests pass."},
        ],
    )
    outcome = start(root, RunRequest("builder", TASK))
    assert outcome.stop is not None and outcome.run_id is not None
    assert answer(root, outcome.stop.id, "allow_once").status == "done"
    return outcome.run_id


def _section(text: str, heading: str) -> str:
    return text.split(heading + "\n", 1)[1].split("\n## ", 1)[0].strip()


def test_a_completed_run_becomes_a_draft_the_reference_validator_accepts(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    draft = save_draft(root, run_id, "add-hello-file")
    assert draft.path == root.local / "skill-drafts" / "add-hello-file" / "SKILL.md"
    assert reference_validate(draft.path.parent) == []
    checked = check_file(draft.path)
    assert checked.ok and checked.problems == ()
    assert checked.data["name"] == "add-hello-file"
    assert TASK in checked.data["description"]
    assert checked.data["metadata"] == {
        "sdd-status": "draft",
        "sdd-from-run": run_id,
        "sdd-role": "builder",
        "sdd-saved": checked.data["metadata"]["sdd-saved"],
    }
    text = draft.path.read_text()
    positions = [text.index(heading + "\n") for heading in SECTIONS]
    assert positions == sorted(positions)
    assert "add-hello-file" not in discover(root.path).skills  # a draft reaches no run


def test_the_steps_are_the_run_s_tool_calls_in_order_in_plain_words(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    text = save_draft(root, run_id, "add-hello-file").path.read_text()
    assert _section(text, "## Steps").split("\n") == [
        '1. Use read_file with path="notes.md".',
        '2. Run the command "true" in the product folder, because "test".',
        '3. Write the file hello.txt (1 line, 13 bytes), because "the file she asked for".',
    ]
    assert "hello, world" not in _section(text, "## Steps")  # the run's output, not a step
    assert "`notes.md`" in _section(text, "## Inputs")
    assert "SPEC-0001#S1" in _section(text, "## Inputs")
    assert _section(text, "## How to check it").split("\n") == [
        "- The checks of the accepted section: SPEC-0001#S1/C1, SPEC-0001#S1/C2 "
        "(`sdd change show CH-0001`).",
        "- Run `true` (in this run: exit code 0).",
    ]
    assert "> Added hello.txt; the tests pass." in _section(text, "## What to return")


def test_what_needs_approval_names_the_stops_and_the_saved_rules(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    approvals = _section(save_draft(root, run_id, "add-hello-file").path.read_text(),
                         "## What needs approval")  # fmt: skip
    lines = approvals.split("\n")
    assert lines[0] == (
        '- Run the command "true" in the product folder, because "test". '
        "It ran under a rule the person saved (always allow)."
    )
    assert lines[1] == (
        '- Write the file hello.txt (1 line, 13 bytes), because "the file she asked for". '
        "It stopped for approval: the person allowed it once."
    )


def test_a_run_that_did_not_end_done_is_refused_and_nothing_is_written(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "builder")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Done."}])
    outcome = start(root, RunRequest("builder", "Write a"))
    assert outcome.run_id is not None
    with pytest.raises(SddError, match="ended stopped, not done") as caught:
        save_draft(root, outcome.run_id, "write-a")
    assert "sdd stops" in str(caught.value.hint)
    assert not draft_file(root, "write-a").exists()
    with pytest.raises(SddError, match="no run log"):
        save_draft(root, "run-20260101-000000-abcdef", "write-a")


def test_denied_and_rejected_calls_are_left_out_of_the_steps(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "builder")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [{"tool": "tweet", "args": {"text": "hi"}}]},
            {"tool_calls": [{"tool": "read_file", "args": {"path": "no-such-file.md"}}]},
            {"tool_calls": [write_call("a.txt", purpose="try")]},
            {"say": "I left it."},
        ],
    )
    outcome = start(root, RunRequest("builder", "Maybe write a"))
    assert outcome.stop is not None and outcome.run_id is not None
    assert answer(root, outcome.stop.id, "deny").status == "done"
    text = save_draft(root, outcome.run_id, "maybe-write").path.read_text()
    steps = _section(text, "## Steps")
    assert "tweet" not in steps and "a.txt" not in steps and "no-such-file" not in steps
    assert "Left out: 3 call(s) that were rejected, failed or denied in the run." in steps
    assert "It stopped for approval: the person denied it." in _section(
        text, "## What needs approval"
    )


def test_no_secret_reaches_the_draft_even_one_set_after_the_run(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-at-run-time-0123456789")
    accepted_change(root)
    add_role(root, "builder")
    later = "later-secret-value-0123456789"
    script(
        tmp_path,
        monkeypatch,
        [{"tool_calls": [{"tool": "read_file", "args": {"path": later}}]}, {"say": "Read."}],
    )
    task = "Use tok-at-run-time-0123456789 to read the file"
    outcome = start(root, RunRequest("builder", task))
    assert outcome.run_id is not None and outcome.status == "done"
    monkeypatch.setenv("LATER_API_KEY", later)  # not a secret when the run was logged
    text = save_draft(root, outcome.run_id, "read-it").path.read_text()
    assert "tok-at-run-time-0123456789" not in text
    assert later not in text
    assert "[secret]" in text


def test_a_routine_run_names_its_event_as_an_input(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_role(root, "builder", produces="other")
    script(tmp_path, monkeypatch, [{"say": "Nothing to do today."}])
    routine = {"name": "nightly", "event": "ev-1", "ask_first": [], "rehearsal": False}
    outcome = start(root, RunRequest("builder", "Look at today", origin="routine", routine=routine))
    assert outcome.run_id is not None and outcome.status == "done"
    text = save_draft(root, outcome.run_id, "look-at-today").path.read_text()
    assert "the routine nightly" in _section(text, "## Inputs")
    assert "this run answered the event ev-1" in _section(text, "## Inputs")
    assert "Nothing in this run needed approval" in _section(text, "## What needs approval")


# --- accepting --------------------------------------------------------------------------------


def test_accepting_moves_the_draft_into_the_product_s_skills(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    draft = save_draft(root, run_id, "add-hello-file")
    (draft.path.parent / "references").mkdir()
    (draft.path.parent / "references" / "notes.md").write_text("her notes\n")
    target = accept_draft(root, "add-hello-file")
    assert target == skill_file(root, "add-hello-file")
    assert not draft.path.parent.exists()
    assert (target.parent / "references" / "notes.md").read_text() == "her notes\n"
    found = discover(root.path).get("add-hello-file")
    assert found is not None and found.metadata["sdd-status"] == "accepted"
    assert reference_validate(target.parent) == []


def test_an_existing_skill_is_never_replaced_without_force(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    mine = skill_file(root, "add-hello-file")
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nname: add-hello-file\ndescription: Hers.\n---\nHer steps.\n")
    (mine.parent / "extra.md").write_text("hers\n")
    with pytest.raises(SddError, match="already has a skill 'add-hello-file'"):
        save_draft(root, run_id, "add-hello-file")
    draft = save_draft(root, run_id, "add-hello-file", force=True)
    assert draft.replaces == mine
    with pytest.raises(SddError, match="already has a skill") as caught:
        accept_draft(root, "add-hello-file")
    assert "--force" in str(caught.value.hint)
    assert mine.read_text().endswith("Her steps.\n")
    accept_draft(root, "add-hello-file", force=True)
    assert "## Steps" in mine.read_text() and not (mine.parent / "extra.md").exists()
    assert [p.name for p in mine.parent.parent.iterdir()] == ["add-hello-file"]


def test_a_draft_she_edited_is_not_overwritten_without_force(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    draft = save_draft(root, run_id, "add-hello-file")
    draft.path.write_text(draft.path.read_text() + "\nHer own note.\n")
    with pytest.raises(SddError, match="a draft 'add-hello-file' already exists"):
        save_draft(root, run_id, "add-hello-file")
    assert draft.path.read_text().endswith("Her own note.\n")
    save_draft(root, run_id, "add-hello-file", force=True)
    assert "Her own note." not in draft.path.read_text()


def test_a_draft_that_breaks_the_standard_is_not_accepted(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    draft = save_draft(root, run_id, "add-hello-file")
    draft.path.write_text(re.sub(r"(?m)^description: .*\n", "", draft.path.read_text()))
    with pytest.raises(SkillFileError, match="'description' is missing"):
        accept_draft(root, "add-hello-file")
    assert draft.path.exists() and not skill_file(root, "add-hello-file").exists()
    with pytest.raises(SddError, match="no draft skill 'other'"):
        accept_draft(root, "other")


def test_a_name_the_standard_refuses_is_refused(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    for bad in ("Add-Hello", "add--hello", "-add", "../up", "a" * 65):
        with pytest.raises(UsageError, match="not a skill name"):
            save_draft(root, run_id, bad)


def test_both_are_person_commands_refused_inside_a_role_run(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _done_run(root, tmp_path, monkeypatch)
    save_draft(root, run_id, "add-hello-file")
    monkeypatch.setenv("SDD_RUN_ID", "run-20260101-000000-abcdef")
    with pytest.raises(InsideRunError):
        save_draft(root, run_id, "other-name")
    with pytest.raises(InsideRunError):
        accept_draft(root, "add-hello-file")
    assert not draft_file(root, "other-name").exists()
    assert not skill_file(root, "add-hello-file").exists()
    assert stops.pending(root) == []
