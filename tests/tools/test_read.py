from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.records import acceptance, changes
from sdd_git.root import Root
from sdd_git.tools.base import ToolContext
from sdd_git.tools.toolbox import TOOLS
from tests.conftest import commit_all
from tests.tools import SECRET, fails, make_context, run


@pytest.fixture
def ctx(root: Root) -> ToolContext:
    return make_context(root)


# --- read_file --------------------------------------------------------------------------------


def test_read_file_returns_the_text(ctx: ToolContext, root: Root) -> None:
    (root.path / "src").mkdir()
    (root.path / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    assert run(ctx, "read_file", path="src/app.py").text == "print('hi')\n"
    assert run(ctx, "read_file", path="src/../src/app.py").text == "print('hi')\n"


def test_read_file_outside_the_root_fails(ctx: ToolContext, root: Root, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("private\n", encoding="utf-8")
    assert fails(ctx, "read_file", path="../outside.txt") == "path is outside the product folder"
    message = fails(ctx, "read_file", path=str(tmp_path / "outside.txt"))
    assert message == "path is outside the product folder"
    assert fails(ctx, "read_file", path="/etc/passwd") == "path is outside the product folder"


def test_read_file_through_a_symlink_pointing_outside_fails(
    ctx: ToolContext, root: Root, tmp_path: Path
) -> None:
    (tmp_path / "outside.txt").write_text("private\n", encoding="utf-8")
    (root.path / "link.txt").symlink_to(tmp_path / "outside.txt")
    (root.path / "linkdir").symlink_to(tmp_path)
    assert fails(ctx, "read_file", path="link.txt") == (
        "link.txt is a symlink that leads outside the product folder; "
        "file tools never follow a symlink out of it"
    )
    assert fails(ctx, "read_file", path="linkdir/outside.txt") == (
        "linkdir/outside.txt goes through the symlink linkdir, which leads outside the product "
        "folder; file tools never follow a symlink out of it"
    )


def test_read_file_follows_a_symlink_that_stays_inside(ctx: ToolContext, root: Root) -> None:
    (root.path / "real.txt").write_text("inside\n", encoding="utf-8")
    (root.path / "alias.txt").symlink_to(root.path / "real.txt")
    assert run(ctx, "read_file", path="alias.txt").text == "inside\n"


def test_read_file_says_binary_missing_folder_and_cut(ctx: ToolContext, root: Root) -> None:
    (root.path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    assert "binary file" in run(ctx, "read_file", path="image.png").text
    assert fails(ctx, "read_file", path="nope.txt") == "no file nope.txt"
    assert "is a folder" in fails(ctx, "read_file", path="memory")
    big = ("é" + "x" * 99 + "\n") * 3000  # about 300 KB
    (root.path / "big.txt").write_text(big, encoding="utf-8")
    outcome = run(ctx, "read_file", path="big.txt")
    assert len(outcome.text.encode("utf-8")) < 200 * 1024 + 200
    assert "[cut: big.txt has" in outcome.text
    assert outcome.data is not None and outcome.data["truncated"] is True


def test_read_file_masks_secrets(ctx: ToolContext, root: Root) -> None:
    (root.path / ".env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    assert run(ctx, "read_file", path=".env").text == "TOKEN=[secret]\n"


def test_failures_are_masked_too(ctx: ToolContext) -> None:
    assert fails(ctx, "read_file", path=f"{SECRET}.txt") == "no file [secret].txt"


def test_arguments_are_checked(ctx: ToolContext) -> None:
    assert fails(ctx, "read_file") == "read_file: missing argument path"
    assert fails(ctx, "read_file", path=3) == "read_file: 'path' must be text, not a number"
    assert "unknown argument lines" in fails(ctx, "read_file", path="x", lines=3)
    assert "must be a whole number" in fails(ctx, "git_log", max="ten")


# --- list_files and search_files ----------------------------------------------------------------


def test_list_files_lists_tracked_and_untracked_but_not_ignored(
    ctx: ToolContext, root: Root
) -> None:
    (root.path / "src").mkdir()
    (root.path / "src" / "app.py").write_text("x\n", encoding="utf-8")
    commit_all(root.path)
    (root.path / "src" / "new.py").write_text("y\n", encoding="utf-8")
    (root.path / "notes.md").write_text("z\n", encoding="utf-8")
    (root.local / "secret.txt").parent.mkdir(parents=True, exist_ok=True)
    (root.local / "secret.txt").write_text("local\n", encoding="utf-8")
    lines = run(ctx, "list_files").text.splitlines()
    assert "src/app.py" in lines
    assert "src/new.py" in lines
    assert "notes.md" in lines
    assert ".sdd/config.yaml" in lines
    assert not any(line.startswith(".sdd/local/") for line in lines)
    assert not any(line.startswith(".git/") for line in lines)
    assert run(ctx, "list_files", path="src").text.splitlines() == ["src/app.py", "src/new.py"]
    assert run(ctx, "list_files", glob="*.py").text.splitlines() == ["src/app.py", "src/new.py"]
    assert run(ctx, "list_files", glob="src/**/*.py").text.splitlines() == [
        "src/app.py",
        "src/new.py",
    ]
    assert fails(ctx, "list_files", path="..") == "path is outside the product folder"


def test_list_files_walks_outside_git_and_caps(ctx: ToolContext, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / ".sdd").mkdir(parents=True)
    (plain / ".git").mkdir()  # not a repository: an empty, broken .git folder
    (plain / ".git" / "HEAD").write_text("junk", encoding="utf-8")
    for n in range(2100):
        (plain / f"f{n:04d}.txt").write_text("", encoding="utf-8")
    context = make_context(Root(plain))
    lines = TOOLS["list_files"].run({}, context).text.splitlines()
    assert len(lines) == 2001
    assert lines[0] == "f0000.txt"
    assert "100 more files not shown" in lines[-1]
    assert not any(".git" in line for line in lines)


def test_search_files_finds_lines_and_skips_binaries(ctx: ToolContext, root: Root) -> None:
    (root.path / "src").mkdir()
    (root.path / "src" / "app.py").write_text("a = 1\ndef hotel():\n    pass\n", encoding="utf-8")
    (root.path / "data.bin").write_bytes(b"hotel\0\0\0")
    outcome = run(ctx, "search_files", pattern=r"def \w+\(")
    assert outcome.text == "src/app.py:2: def hotel():"
    assert "data.bin" not in run(ctx, "search_files", pattern="hotel").text
    assert run(ctx, "search_files", pattern="nothing-like-this").text.startswith("no matches")
    assert "not a valid regular expression" in fails(ctx, "search_files", pattern="(")
    (root.path / "many.txt").write_text("hit\n" * 300, encoding="utf-8")
    capped = run(ctx, "search_files", pattern="^hit$", path="many.txt")
    assert len(capped.text.splitlines()) == 201
    assert "stopped at 200 matches" in capped.text


# --- git ----------------------------------------------------------------------------------------


def test_git_status_log_and_diff(ctx: ToolContext, root: Root) -> None:
    assert run(ctx, "git_log").text == "no commits yet"
    (root.path / "a.txt").write_text("one\n", encoding="utf-8")
    commit_all(root.path, "first commit")
    (root.path / "a.txt").write_text(f"two {SECRET}\n", encoding="utf-8")
    (root.path / "b.txt").write_text("new\n", encoding="utf-8")
    status = run(ctx, "git_status").text
    assert status.startswith("## main")
    assert " M a.txt" in status and "?? b.txt" in status
    assert run(ctx, "git_log").text.endswith("first commit")
    assert "first commit" in run(ctx, "git_log", max=1).text
    diff = run(ctx, "git_diff").text
    assert "+two [secret]" in diff and "-one" in diff and SECRET not in diff
    assert "a.txt" in run(ctx, "git_diff", path="a.txt").text
    assert run(ctx, "git_diff", path="b.txt").text.startswith("no differences")


# --- read_record --------------------------------------------------------------------------------


def test_read_record_each_kind(ctx: ToolContext, root: Root) -> None:
    pack = changes.create(root, "I can never find last month's hotel charge.")
    acceptance.correct_reading(root, pack.id, "Search by month.\n\n- C1: hotel lists it.")
    described = json.loads(run(ctx, "read_record", id="CH-0001").text)
    assert described["id"] == "CH-0001"
    assert described["words"] == "I can never find last month's hotel charge."
    spec_text = run(ctx, "read_record", id="SPEC-0001").text
    assert spec_text == root.spec_file("SPEC-0001").read_text(encoding="utf-8")
    section = run(ctx, "read_record", id="SPEC-0001#S1")
    assert section.text.startswith("## S1 Reading\nSearch by month.")
    assert "not accepted" in section.text
    decision = acceptance.accept_reading(root, pack.id).decision
    section = run(ctx, "read_record", id="SPEC-0001#S1")
    assert f"accepted by {decision.id}" in section.text
    assert section.data is not None and section.data["accepted_by"] == "D-0001"
    decision_text = run(ctx, "read_record", id="D-0001").text
    assert "kind: accept-section" in decision_text and "section: SPEC-0001#S1" in decision_text
    (root.releases / "R-0001.md").write_text("# Release R-0001\n", encoding="utf-8")
    assert run(ctx, "read_record", id="R-0001").text == "# Release R-0001\n"


def test_read_record_missing_and_unknown(ctx: ToolContext, root: Root) -> None:
    changes.create(root, "words")
    assert fails(ctx, "read_record", id="CH-0009") == "no change CH-0009"
    assert fails(ctx, "read_record", id="SPEC-0009") == "no spec SPEC-0009"
    assert fails(ctx, "read_record", id="SPEC-0009#S1") == "no spec SPEC-0009"
    assert fails(ctx, "read_record", id="SPEC-0001#S7") == "no section S7 in SPEC-0001"
    assert fails(ctx, "read_record", id="D-0009") == "no decision D-0009"
    assert fails(ctx, "read_record", id="R-0009") == "no release R-0009"
    message = fails(ctx, "read_record", id="X-1")
    for shape in ("CH-0001", "SPEC-0001", "SPEC-0001#S1", "D-0001", "R-0001"):
        assert shape in message
