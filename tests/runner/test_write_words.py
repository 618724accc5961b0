"""A write's words, in the terminal stop and in the page's heading: a new file is created, an
existing one replaced, with its old size beside the new; the old file is read beneath the
product without following a link, and no further than a bound."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sdd_git.root import Root
from sdd_git.runner.words import describe, heading
from sdd_git.tools import actionwords as words
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, script, write_call

FOUR = "one\ntwo\nthree\nfour\n"


def test_a_stop_for_a_write_that_replaces_a_file_says_so_with_old_and_new_sizes(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    (root.path / "README.txt").write_text("a\nb\nc\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("README.txt", FOUR)]}])
    result = sdd("role", "run", "builder", "--task", "Rewrite the README")
    assert result.code == 3
    assert (
        "Replace the file README.txt: 3 lines become 4 (6 bytes become 19), starting:"
        in result.stdout
    )
    assert "Write the file" not in result.stdout and "line(s)" not in result.stdout
    (stop,) = json.loads(sdd("stops", "--json").stdout)
    assert stop["action"].startswith("Replace the file README.txt: 3 lines become 4")


def test_a_stop_for_a_new_file_says_create(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("src/search.py", "a = 1\n")]}])
    result = sdd("role", "run", "builder", "--task", "Write search")
    assert result.code == 3
    assert "Create the file src/search.py (1 line, 6 bytes), starting:" in result.stdout


def test_a_write_over_a_link_says_replace_and_never_reads_where_it_leads(
    root: Root, tmp_path: Path
) -> None:
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("x\n" * 77)
    (root.path / "notes.txt").symlink_to(secret)
    (root.path / "inside").mkdir()
    (root.path / "inside" / "a.txt").write_text("a\n")
    (root.path / "via").symlink_to(root.path / "inside")
    for path in ("notes.txt", "via/a.txt"):
        said = describe("write_file", {"path": path, "content": FOUR}, root=root.path)
        assert said.startswith(f"Replace the file {path} with 4 lines (19 bytes), starting:")
        assert "77" not in said and "154" not in said
        assert heading("write_file", {"path": path, "content": FOUR}, root.path) == (
            f"Replace {path} (4 lines)"
        )


def test_a_file_that_cannot_be_read_as_a_file_says_replace_without_sizes(root: Root) -> None:
    os.mkfifo(root.path / "pipe.txt")  # opened, it would hang a reader: it is never opened
    said = describe("write_file", {"path": "pipe.txt", "content": FOUR}, root=root.path)
    assert said.startswith("Replace the file pipe.txt with 4 lines (19 bytes)")


def test_a_huge_old_file_is_not_read_to_count_its_lines(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(words, "OLD_FILE_LIMIT", 10)
    (root.path / "big.log").write_text("line\n" * 100)
    said = describe("write_file", {"path": "big.log", "content": FOUR}, root=root.path)
    assert said.startswith("Replace the file big.log: 500 bytes become 19, starting:")


def test_the_pages_heading_is_the_action_in_one_short_line(root: Root) -> None:
    (root.path / "README.txt").write_text("a\nb\nc\n")
    code = 'def search():\n    return "found"\n'
    assert heading("write_file", {"path": "src/search.py", "content": code}, root.path) == (
        "Create src/search.py (2 lines)"
    )
    assert heading("write_file", {"path": "README.txt", "content": FOUR}, root.path) == (
        "Replace README.txt: 3 lines become 4"
    )
    # Where the lines do not tell old and new apart, the bytes do.
    assert heading("write_file", {"path": "README.txt", "content": "x\ny\nzzz\n"}, root.path) == (
        "Replace README.txt: 3 lines become 3 (6 bytes become 8)"
    )
    command = {"command": "pytest -q\necho done", "purpose": "to check"}
    assert heading("run_command", command, root.path) == (
        "Run this command (2 lines, 19 characters) in the product folder"
    )
    assert "\n" not in heading("git_commit", {"message": "m", "paths": ["a"]}, root.path)
