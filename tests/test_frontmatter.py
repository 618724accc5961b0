"""One front-matter splitter: a leading UTF-8 BOM is dropped, then the text is split, for each
of the three kinds of file that have front matter."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git import frontmatter
from sdd_git.errors import RecordError
from sdd_git.records.spec import parse_spec
from sdd_git.roles.rolefile import RoleFileError, parse_role
from sdd_git.roles.skills import check_text
from tests.records.test_spec import SPEC
from tests.roles.test_rolefile import CANONICAL, PATH

BOM = "\ufeff"


def test_the_split_drops_a_bom_and_keeps_the_body_byte_for_byte() -> None:
    parts = frontmatter.split(BOM + "---\r\nkey: 1\n--- \r\nbody\r\n")
    assert parts.front == "key: 1\n"
    assert parts.body == "body\r\n"
    assert parts.body_line == 4
    assert parts.text.startswith("---")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no front matter\n", frontmatter.NotOpened),
        ("---", frontmatter.NotOpened),
        (BOM + BOM + "---\nkey: 1\n---\n", frontmatter.NotOpened),
        ("---\nkey: 1\n", frontmatter.NotClosed),
    ],
)
def test_text_without_front_matter_says_which_line_is_missing(
    text: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        frontmatter.split(text)


def test_a_role_file_with_a_bom_reads_as_without() -> None:
    plain = parse_role(CANONICAL, PATH, folder_name="builder").profile
    assert parse_role(BOM + CANONICAL, PATH, folder_name="builder").profile == plain


def test_a_role_file_with_a_bom_keeps_its_line_numbers_in_errors() -> None:
    broken = CANONICAL.replace("level: 0 ", "level: x ")
    messages = []
    for text in (broken, BOM + broken):
        with pytest.raises(RoleFileError) as caught:
            parse_role(text, PATH, folder_name="builder")
        messages.append([p.render() for p in caught.value.problems])
    assert messages[0] == messages[1]


def test_a_skill_with_a_bom_reads_as_without() -> None:
    text = "---\nname: small-commits\ndescription: Commit in small steps\n---\nDo it.\n"
    plain = check_text(text, "SKILL.md", "small-commits")
    with_bom = check_text(BOM + text, "SKILL.md", "small-commits")
    assert with_bom.problems == plain.problems == ()
    assert with_bom.data == plain.data


def test_a_spec_with_a_bom_reads_as_without() -> None:
    plain = parse_spec(Path("SPEC-0001.md"), SPEC)
    spec = parse_spec(Path("SPEC-0001.md"), BOM + SPEC)
    assert spec.meta == plain.meta
    assert [(s.full_id, s.line, s.hash) for s in spec.sections] == [
        (s.full_id, s.line, s.hash) for s in plain.sections
    ]


def test_a_spec_without_front_matter_keeps_its_error() -> None:
    with pytest.raises(RecordError, match="a spec must start with a '---' line"):
        parse_spec(Path("SPEC-0001.md"), BOM + "# no front matter\n")
    with pytest.raises(RecordError, match="the front matter is never closed"):
        parse_spec(Path("SPEC-0001.md"), "---\nid: SPEC-0001\n")
