from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.tools.base import ToolContext
from sdd_git.tools.command import RunCommand
from sdd_git.tools.toolbox import TOOLS
from tests.conftest import commit_all, git
from tests.tools import SECRET, fails, make_context, run


@pytest.fixture
def ctx(root: Root) -> ToolContext:
    return make_context(root)


# --- files ---------------------------------------------------------------------------------------


def test_write_file_creates_parents_and_reports_bytes(ctx: ToolContext, root: Root) -> None:
    outcome = run(ctx, "write_file", path="src/pkg/app.py", content="héllo\n", purpose="start")
    assert (root.path / "src" / "pkg" / "app.py").read_text(encoding="utf-8") == "héllo\n"
    assert outcome.data == {"path": "src/pkg/app.py", "bytes": 7}
    assert "7 bytes" in outcome.text
    assert "Replaced" in run(ctx, "write_file", path="src/pkg/app.py", content="", purpose="p").text
    assert (root.path / "src" / "pkg" / "app.py").read_text(encoding="utf-8") == ""


def test_write_file_stays_inside(ctx: ToolContext, root: Root, tmp_path: Path) -> None:
    message = fails(ctx, "write_file", path="../evil.txt", content="x", purpose="p")
    assert message == "path is outside the product folder"
    assert not (tmp_path / "evil.txt").exists()
    (root.path / "out").symlink_to(tmp_path)
    message = fails(ctx, "write_file", path="out/evil.txt", content="x", purpose="p")
    assert message == "out/evil.txt goes through the symlink out; file tools never follow symlinks"
    assert not (tmp_path / "evil.txt").exists()
    assert "missing argument purpose" in fails(ctx, "write_file", path="a.txt", content="x")


def test_delete_file(ctx: ToolContext, root: Root, tmp_path: Path) -> None:
    (root.path / "old.txt").write_text("x", encoding="utf-8")
    assert run(ctx, "delete_file", path="old.txt", purpose="unused").text == "Deleted old.txt."
    assert not (root.path / "old.txt").exists()
    assert "no file old.txt" in fails(ctx, "delete_file", path="old.txt", purpose="p")
    assert "is a folder" in fails(ctx, "delete_file", path="memory", purpose="p")
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    message = fails(ctx, "delete_file", path="../keep.txt", purpose="p")
    assert message == "path is outside the product folder"
    assert (tmp_path / "keep.txt").exists()
    # A symlink inside that points inside is removed itself, never its target.
    (root.path / "real.txt").write_text("keep", encoding="utf-8")
    (root.path / "alias.txt").symlink_to(root.path / "real.txt")
    run(ctx, "delete_file", path="alias.txt", purpose="p")
    assert not (root.path / "alias.txt").is_symlink()
    assert (root.path / "real.txt").read_text(encoding="utf-8") == "keep"


# --- run_command ----------------------------------------------------------------------------------


def test_run_command_sees_the_run_id_and_masks_output(ctx: ToolContext, root: Root) -> None:
    outcome = run(
        ctx,
        "run_command",
        command=f"echo run=$SDD_RUN_ID; pwd; echo {SECRET}; echo oops >&2; cat; exit 3",
        purpose="check the environment",
    )
    assert outcome.text.startswith("exit code 3\n")
    assert "run=run-test" in outcome.text
    assert str(root.path.resolve()) in outcome.text
    assert "[secret]" in outcome.text and SECRET not in outcome.text
    assert "oops" in outcome.text
    assert outcome.data is not None and outcome.data["exit_code"] == 3
    assert SECRET not in str(outcome.data)


def test_run_command_caps_output(ctx: ToolContext) -> None:
    outcome = run(ctx, "run_command", command="seq 1 100000; echo the-end", purpose="p")
    assert outcome.text.startswith("exit code 0\n")
    assert len(outcome.text.encode()) < 52 * 1024
    assert "bytes of output cut" in outcome.text
    assert "\n1\n2\n" in outcome.text and outcome.text.rstrip().endswith("the-end")


def test_run_command_reports_a_timeout(ctx: ToolContext) -> None:
    started = time.monotonic()
    outcome = RunCommand(timeout_seconds=1).run(
        {"command": "echo started; sleep 30 & sleep 30", "purpose": "p"}, ctx
    )
    assert time.monotonic() - started < 10
    assert outcome.text.startswith("timed out after 1 s")
    assert "started" in outcome.text
    assert outcome.data is not None and outcome.data["timed_out"] is True


# --- git ------------------------------------------------------------------------------------------


def test_git_commit_commits_exactly_the_named_paths(ctx: ToolContext, root: Root) -> None:
    (root.path / "a.txt").write_text("a\n", encoding="utf-8")
    (root.path / "b.txt").write_text("b\n", encoding="utf-8")
    commit_all(root.path, "start")
    (root.path / "a.txt").write_text("a2\n", encoding="utf-8")
    (root.path / "b.txt").write_text("b2\n", encoding="utf-8")
    (root.path / "new.txt").write_text("n\n", encoding="utf-8")
    (root.sdd / "role-runs").mkdir(parents=True, exist_ok=True)
    (root.sdd / "role-runs" / "run-test.jsonl").write_text("{}\n", encoding="utf-8")
    outcome = run(ctx, "git_commit", message="Change a", paths=["a.txt", "new.txt"])
    assert outcome.data is not None
    assert outcome.data["commit"] == git(root.path, "rev-parse", "HEAD").strip()
    assert sorted(outcome.data["files"]) == ["a.txt", "new.txt"]
    changed = git(root.path, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["a.txt", "new.txt"]
    assert git(root.path, "log", "-1", "--format=%s").strip() == "Change a"
    assert " M b.txt" in git(root.path, "status", "--porcelain").splitlines()
    tree = git(root.path, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert not any(name.startswith(".sdd/role-runs/") for name in tree)


def test_git_commit_never_takes_run_logs(ctx: ToolContext, root: Root) -> None:
    commit_all(root.path, "start")
    (root.path / ".gitignore").write_text("", encoding="utf-8")  # even with no ignore rules
    (root.sdd / "role-runs").mkdir(parents=True, exist_ok=True)
    (root.sdd / "role-runs" / "run-test.jsonl").write_text("{}\n", encoding="utf-8")
    (root.local / "record.txt").parent.mkdir(parents=True, exist_ok=True)
    (root.local / "record.txt").write_text("x\n", encoding="utf-8")
    (root.path / "c.txt").write_text("c\n", encoding="utf-8")
    run(ctx, "git_commit", message="Everything", paths=["."])
    tree = git(root.path, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "c.txt" in tree
    assert not any(n.startswith((".sdd/role-runs/", ".sdd/local/")) for n in tree)
    message = fails(ctx, "git_commit", message="m", paths=[".sdd/role-runs/run-test.jsonl"])
    assert "never committed" in message
    assert "never committed" in fails(ctx, "git_commit", message="m", paths=[".git/config"])


def test_git_commit_takes_deletions_and_leaves_other_staged_work(
    ctx: ToolContext, root: Root
) -> None:
    (root.path / "gone.txt").write_text("g\n", encoding="utf-8")
    (root.path / "staged.txt").write_text("s\n", encoding="utf-8")
    (root.path / "src").mkdir()
    (root.path / "src" / "a[1].py").write_text("x\n", encoding="utf-8")
    (root.path / "src" / "a1.py").write_text("y\n", encoding="utf-8")
    run(ctx, "git_commit", message="first", paths=["gone.txt", "src/a[1].py"])  # no HEAD yet
    assert sorted(git(root.path, "ls-tree", "-r", "--name-only", "HEAD").split()) == [
        "gone.txt",
        "src/a[1].py",
    ]
    git(root.path, "add", "staged.txt")
    (root.path / "gone.txt").unlink()
    outcome = run(ctx, "git_commit", message="Remove gone", paths=["gone.txt"])
    assert outcome.data is not None and outcome.data["files"] == ["gone.txt"]
    assert "gone.txt" not in git(root.path, "ls-tree", "-r", "--name-only", "HEAD").split()
    status = git(root.path, "status", "--porcelain").splitlines()
    assert "A  staged.txt" in status and "?? src/a1.py" in status


def test_git_commit_checks_its_input(ctx: ToolContext, root: Root) -> None:
    assert "'paths' is an empty list" in fails(ctx, "git_commit", message="m", paths=[])
    assert fails(ctx, "git_commit", message="m", paths=["../x"]) == (
        "path is outside the product folder"
    )
    message = fails(ctx, "git_commit", message="m", paths=["missing.txt"])
    assert message.startswith("missing.txt matches no file that can be committed")
    assert git(root.path, "status", "--porcelain", "--untracked-files=no") == ""


def test_git_tag(ctx: ToolContext, root: Root) -> None:
    commit_all(root.path, "start")
    head = git(root.path, "rev-parse", "HEAD").strip()
    outcome = run(ctx, "git_tag", name="v1.0", message="First release")
    assert outcome.data == {"tag": "v1.0", "commit": head, "annotated": True}
    assert git(root.path, "cat-file", "-t", "v1.0").strip() == "tag"
    run(ctx, "git_tag", name="light")
    assert git(root.path, "cat-file", "-t", "light").strip() == "commit"
    assert "no tag was written" in fails(ctx, "git_tag", name="v1.0")
    assert "not a valid tag name" in fails(ctx, "git_tag", name="-d")
    assert "not a valid tag name" in fails(ctx, "git_tag", name="a..b")


def test_git_push(ctx: ToolContext, root: Root, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-q", str(remote))
    git(root.path, "remote", "add", "origin", str(remote))
    commit_all(root.path, "start")
    run(ctx, "git_push", remote="origin", branch="main")
    pushed = git(remote, "rev-parse", "main").strip()
    assert pushed == git(root.path, "rev-parse", "HEAD").strip()
    assert "not a valid branch name" in fails(ctx, "git_push", branch="+main")
    assert "not a valid branch name" in fails(ctx, "git_push", branch=":main")
    assert "not a remote name" in fails(ctx, "git_push", remote="--mirror")
    assert "not a remote name" in fails(ctx, "git_push", remote="https://example.invalid/x")


# --- no connector ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        ("open_pull_request", {"title": "Add search"}, "no pull request was opened"),
        ("merge_pull_request", {"number": 7}, "pull request #7 was not merged"),
        ("deploy", {"target": "production"}, "nothing was deployed"),
    ],
)
def test_connector_tools_do_nothing_and_say_so(
    ctx: ToolContext, root: Root, tool: str, args: dict[str, Any], said: str
) -> None:
    outcome = TOOLS[tool].run(args, ctx)
    assert outcome.text.startswith("Nothing was done")
    assert said in outcome.text
    assert outcome.data is not None and outcome.data["done"] is False
    assert "merged" not in outcome.text.replace("not merged", "")


def test_merge_pull_request_checks_the_number(ctx: ToolContext) -> None:
    assert "whole number" in fails(ctx, "merge_pull_request", number="seven")
    assert "at least 1" in fails(ctx, "merge_pull_request", number=0)
