from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from sdd_git.roles.roleedit import edit_role_text
from sdd_git.roles.rolefile import RoleFileError
from tests.roles.test_rolefile import CANONICAL

PATH = Path(".sdd/roles/builder/ROLE.md")


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_pinning_changes_one_line_and_keeps_every_comment() -> None:
    after = edit_role_text(CANONICAL, PATH, {"pinned": True})
    assert changed_lines(CANONICAL, after) == ["-pinned: false", "+pinned: true"]


def test_a_new_job_keeps_comments_order_quoting_and_body() -> None:
    after = edit_role_text(CANONICAL, PATH, {"job": "Build the billing service"})
    assert changed_lines(CANONICAL, after) == [
        "-job: Implement accepted spec sections for the expenses service",
        "+job: Build the billing service",
    ]


def test_a_key_that_was_absent_is_added_and_nothing_else_moves() -> None:
    text = CANONICAL.replace("hidden: false\n", "")
    after = edit_role_text(text, PATH, {"hidden": True})
    assert changed_lines(text, after) == ["+hidden: true"]


def test_nested_tool_policy_is_edited_where_it_is() -> None:
    text = CANONICAL.replace(
        "toolPolicy.delegation: deny    # allow | deny", "toolPolicy:\n  delegation: deny  # x"
    )
    after = edit_role_text(text, PATH, {"toolPolicy.delegation": "allow"})
    assert changed_lines(text, after) == ["-  delegation: deny  # x", "+  delegation: allow # x"]


def test_a_new_description_keeps_the_front_matter_byte_for_byte() -> None:
    after = edit_role_text(CANONICAL, PATH, None, description="New standing rules.")
    assert (
        after
        == CANONICAL.split("---\n")[0]
        + "---\n"
        + CANONICAL.split("---\n")[1]
        + "---\nNew standing rules.\n"
    )


def test_an_edit_that_would_break_the_file_is_refused() -> None:
    with pytest.raises(RoleFileError):
        edit_role_text(CANONICAL, PATH, {"level": "high"})
