from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.errors import RecordError
from sdd_git.records.spec import parse_spec, section_hash, with_section_body

SPEC = """---
id: SPEC-0001
title: Find past hotel charges
kind: feature
change: CH-0001
words: "I can never find last month's hotel charge."
scope: product
---
## S1 Reading
Search expenses by month and merchant, from the expense list.

- C1: Searching "hotel" for last month lists the charge.
- C2: A month with no match says that no charge was found.

## S2 Export
Export the month as CSV.
- C1: The file has one row per charge.
"""


def test_sections_checks_and_ids_follow_the_contract() -> None:
    spec = parse_spec(Path("SPEC-0001.md"), SPEC)
    assert [s.full_id for s in spec.sections] == ["SPEC-0001#S1", "SPEC-0001#S2"]
    first = spec.section("S1")
    assert first.title == "Reading"
    assert first.line == 9
    assert [(c.id, c.text) for c in first.checks] == [
        ("C1", 'Searching "hotel" for last month lists the charge.'),
        ("C2", "A month with no match says that no charge was found."),
    ]
    assert [c.id for c in spec.section("S2").checks] == ["C1"]


def test_the_hash_covers_the_heading_and_text_stripped_at_both_ends() -> None:
    spec = parse_spec(Path("SPEC-0001.md"), SPEC)
    expected_text = SPEC[SPEC.index("## S1") : SPEC.index("## S2")].strip()
    assert spec.section("S1").hash == section_hash(expected_text)
    renamed = parse_spec(Path("x.md"), SPEC.replace("## S1 Reading", "## S1 Reading!"))
    assert renamed.section("S1").hash != spec.section("S1").hash


def test_replacing_one_section_keeps_every_other_byte() -> None:
    spec = parse_spec(Path("SPEC-0001.md"), SPEC)
    text = with_section_body(spec, "S1", "New reading.\n\n- C1: new check")
    assert text.startswith(SPEC[: SPEC.index("## S1")])
    assert text.endswith(SPEC[SPEC.index("## S2") :])
    again = parse_spec(Path("SPEC-0001.md"), text)
    assert again.section("S1").body == "New reading.\n\n- C1: new check"
    assert again.section("S2").text == spec.section("S2").text


def test_a_missing_front_matter_is_an_error_at_line_1() -> None:
    with pytest.raises(RecordError) as caught:
        parse_spec(Path("SPEC-0009.md"), "## S1 Reading\n")
    assert caught.value.message.startswith("SPEC-0009.md:1:")


def test_malformed_front_matter_names_the_file_and_line() -> None:
    broken = SPEC.replace("kind: feature", "kind: [feature")
    with pytest.raises(RecordError) as caught:
        parse_spec(Path("SPEC-0001.md"), broken)
    assert caught.value.message.startswith("SPEC-0001.md:")
    line = int(caught.value.message.split(":")[1])
    assert 4 <= line <= 6  # PyYAML reports the flow list's end: the broken line or the next


def test_a_section_numbered_twice_names_both_lines() -> None:
    with pytest.raises(RecordError) as caught:
        parse_spec(Path("SPEC-0001.md"), SPEC.replace("## S2 Export", "## S1 Export"))
    assert "SPEC-0001.md:15: section S1 appears twice (first at line 9)" in caught.value.message


def test_an_unknown_section_lists_the_known_ones() -> None:
    spec = parse_spec(Path("SPEC-0001.md"), SPEC)
    with pytest.raises(RecordError) as caught:
        spec.section("S7")
    assert "sections: S1, S2" in caught.value.message
