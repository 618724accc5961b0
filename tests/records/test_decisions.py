from __future__ import annotations

import pytest

from sdd_git.errors import RecordError
from sdd_git.records import acceptance, changes, decisions
from sdd_git.records.spec import read_spec
from sdd_git.root import Root

READING = "Search by month.\n\n- C1: Searching hotel lists the charge."


def _accepted_change(root: Root) -> changes.ChangePack:
    pack = changes.create(root, "I can never find last month's hotel charge.")
    acceptance.correct_reading(root, pack.id, READING)
    acceptance.accept_reading(root, pack.id)
    return pack


def test_appending_keeps_every_earlier_byte(root: Root) -> None:
    pack = _accepted_change(root)
    before = root.decisions.read_text()
    with root.decisions.open("a") as handle:
        handle.write("# a note the person added\n")
    noted = root.decisions.read_text()
    acceptance.replace_decision(root, "D-0001", "I mean the hotel in March.")
    after = root.decisions.read_text()
    assert after.startswith(noted)
    assert noted.startswith(before)
    ids = [e.id for e in decisions.load(root).entries]
    assert ids == ["D-0001", "D-0002"]
    assert pack.id


def test_a_flow_style_list_is_rewritten_rather_than_broken(root: Root) -> None:
    root.decisions.write_text("[]\n")
    _accepted_change(root)
    assert [e.id for e in decisions.load(root).entries] == ["D-0001"]


def test_an_edited_accepted_section_is_no_longer_accepted(root: Root) -> None:
    pack = _accepted_change(root)
    spec_path = root.spec_file(pack.spec)
    spec = read_spec(spec_path)
    log = decisions.load(root)
    assert log.section_acceptance("SPEC-0001#S1", spec.section("S1").hash) is not None

    spec_path.write_text(spec.text.replace("Search by month.", "Search by year."))
    edited = read_spec(spec_path).section("S1")
    assert decisions.load(root).section_acceptance(edited.full_id, edited.hash) is None

    spec_path.write_text(spec.text)  # put back word for word: accepted again
    assert decisions.load(root).section_acceptance("SPEC-0001#S1", spec.section("S1").hash)


def test_a_replaced_decision_stays_marked_replaced_and_the_new_one_counts(root: Root) -> None:
    pack = _accepted_change(root)
    new = acceptance.replace_decision(root, "D-0001", "I mean the March hotel charge.")
    log = decisions.load(root)
    assert log.by_id("D-0001").words == "I can never find last month's hotel charge."
    assert log.replaced_by("D-0001") == new.id
    assert new.get("replaces") == "D-0001"
    section = read_spec(root.spec_file(pack.spec)).section("S1")
    current = log.section_acceptance(section.full_id, section.hash)
    assert current is not None and current.id == new.id
    assert log.effective_kind(current) == "accept-section"
    with pytest.raises(RecordError, match="already replaced by D-0002"):
        acceptance.replace_decision(root, "D-0001", "again")


def test_malformed_decisions_name_the_file_and_line_and_change_nothing(root: Root) -> None:
    pack = _accepted_change(root)
    broken = root.decisions.read_text() + "- id: D-0002\n  kind: accept-section\n  words: [oops\n"
    root.decisions.write_text(broken)
    with pytest.raises(RecordError) as caught:
        acceptance.accept_reading(root, pack.id, words="again")
    assert "memory/decisions.yaml:" in caught.value.message
    assert root.decisions.read_text() == broken


def test_an_entry_without_words_names_its_line(root: Root) -> None:
    _accepted_change(root)
    root.decisions.write_text(root.decisions.read_text() + "- id: D-0002\n  kind: replace\n")
    with pytest.raises(RecordError) as caught:
        decisions.load(root)
    line_of_entry = root.decisions.read_text().splitlines().index("- id: D-0002") + 1
    assert f"decisions.yaml:{line_of_entry}: decision #2 has no text for key 'words'" in (
        caught.value.message
    )


def test_an_unknown_kind_is_an_error(root: Root) -> None:
    root.decisions.write_text("- {id: D-0001, kind: approve, words: ok, at: x}\n")
    with pytest.raises(RecordError, match="key 'kind' is 'approve'"):
        decisions.load(root)
