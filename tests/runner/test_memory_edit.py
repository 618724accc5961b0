"""Correcting a role's memory by hand: a broken edit keeps her text and breaks nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.errors import RecordError
from sdd_git.root import Root
from sdd_git.runner import conversation
from tests.conftest import SddRunner


def test_a_valid_edit_is_saved_and_read_back(root: Root) -> None:
    saved = conversation.edit_memory(
        root, "builder", lambda text: "- {note: Prefers small commits, at: today}\n"
    )
    assert saved == 1
    assert conversation.memory(root, "builder") == [
        {"note": "Prefers small commits", "at": "today"}
    ]
    assert not conversation.memory_draft_path(root, "builder").exists()


def test_a_broken_edit_keeps_her_text_leaves_memory_and_resumes_from_it(root: Root) -> None:
    conversation.edit_memory(root, "builder", lambda text: "- note: kept\n")
    broken = "- note: kept\n- note: [unclosed\n"
    with pytest.raises(RecordError) as caught:
        conversation.edit_memory(root, "builder", lambda text: broken)
    assert "the memory of builder was not changed" in caught.value.message
    assert "--edit" in (caught.value.hint or "")
    assert conversation.memory(root, "builder") == [{"note": "kept"}]  # later runs still work
    seen: list[str] = []

    def fix(text: str) -> str:
        seen.append(text)
        return "- note: kept\n- note: fixed\n"

    assert conversation.edit_memory(root, "builder", fix) == 2
    assert seen == [broken]  # the next edit started from her draft
    assert [m["note"] for m in conversation.memory(root, "builder")] == ["kept", "fixed"]


def test_an_item_that_is_not_a_note_is_refused(root: Root) -> None:
    with pytest.raises(RecordError) as caught:
        conversation.edit_memory(root, "builder", lambda text: "- just text\n")
    assert "item 1 is not a note" in caught.value.message
    assert conversation.memory(root, "builder") == []


def test_role_memory_edit_in_a_real_editor_keeps_a_broken_text_and_later_runs_still_work(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.cli.test_role_cmds import editor

    monkeypatch.setenv("EDITOR", editor(tmp_path, "- note: [unclosed\n"))
    broken = sdd("role", "memory", "builder", "--edit")
    assert broken.code == 1 and "the memory of builder was not changed" in broken.stderr
    assert sdd("role", "memory", "builder").code == 0  # nothing broken for later commands
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    monkeypatch.setenv("EDITOR", editor(fixed, "- note: small commits\n"))
    assert sdd("role", "memory", "builder", "--edit").code == 0
    assert conversation.memory(root, "builder") == [{"note": "small commits"}]


def test_correcting_one_item_keeps_its_time_and_the_others(root: Root) -> None:
    conversation.edit_memory(
        root, "builder", lambda text: "- {note: one, at: monday}\n- {note: two, at: tuesday}\n"
    )
    before = conversation.correct(root, "builder", 2, "  two, in her words ")
    assert before == {"note": "two", "at": "tuesday"}
    assert conversation.memory(root, "builder") == [
        {"note": "one", "at": "monday"},
        {"note": "two, in her words", "at": "tuesday"},
    ]


def test_a_correction_that_cannot_be_taken_changes_nothing(root: Root) -> None:
    from sdd_git.errors import UsageError

    conversation.edit_memory(root, "builder", lambda text: "- {note: one, at: monday}\n")
    path = conversation.memory_path(root, "builder")
    before = path.read_bytes()
    with pytest.raises(UsageError):
        conversation.correct(root, "builder", 1, " ")
    with pytest.raises(RecordError):
        conversation.correct(root, "builder", 2, "two")
    assert path.read_bytes() == before
