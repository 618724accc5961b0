"""Edit, Write, MultiEdit and NotebookEdit, by the path they write: relative or absolute, through
`..`, a link into the record, another case, a subfolder, outside the product, and with no sdd
root at all. Each is fed to a real `sdd guard` as Claude Code's PreToolUse input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sdd_git.hostclaude import edit_rules
from tests.hostguard.guardrun import ALLOW, DENY, event, run_guard
from tests.hostguard.test_deny_layer import edit_rule_matches

TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path"}
TOOLS["NotebookEdit"] = "notebook_path"

# (path as the agent gives it, from the product folder; the guard's answer; do the Edit deny
# rules alone catch it). "@/" is the product folder's absolute path.
PATHS = (
    ("memory/decisions.yaml", DENY, True),
    ("@/memory/decisions.yaml", DENY, True),
    ("src/../memory/decisions.yaml", DENY, True),
    ("notes.md", DENY, False),  # a link to changes/CH-0001/qa.yaml
    ("records/decisions.yaml", DENY, False),  # records -> memory
    ("MEMORY/decisions.yaml", DENY, False),  # the same folder on a case-insensitive disk
    ("changes/CH-0001/qa.yaml", DENY, True),
    (".sdd/config.yaml", DENY, True),
    (".git/config", DENY, True),
    (".claude/settings.json", DENY, True),  # where the hook itself is registered
    ("CLAUDE.md", DENY, True),
    ("guide/AGENTS.md", DENY, True),
    (".env", DENY, True),
    ("src/app.py", ALLOW, False),
    ("docs/new.md", ALLOW, False),
)


def _edit(tool: str, path: str, cwd: Path) -> str:
    key = TOOLS[tool]
    tool_input = {key: path, "old_string": "a", "new_string": "b", "content": "x"}
    return run_guard(event(tool, tool_input, cwd), cwd).decision


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(("path", "expect", "rules"), PATHS, ids=[p for p, _, _ in PATHS])
def test_each_file_tool_is_answered_by_the_path_it_writes(
    product: Path, tool: str, path: str, expect: str, rules: bool
) -> None:
    written = path.replace("@/", f"{product}/")
    assert _edit(tool, written, product) == expect


@pytest.mark.parametrize(("path", "expect", "rules"), PATHS, ids=[p for p, _, _ in PATHS])
def test_the_edit_deny_rules_alone_catch_what_the_table_says(
    product: Path, path: str, expect: str, rules: bool
) -> None:
    relative = path.replace("@/", "")
    assert any(edit_rule_matches(rule, relative) for rule in edit_rules()) == rules


def test_a_link_made_now_to_a_record_file_that_does_not_exist_yet(product: Path) -> None:
    (product / "draft.md").symlink_to("memory/specs/SPEC-0009.md")
    assert _edit("Write", "draft.md", product) == DENY


def test_from_a_subfolder_and_from_outside_the_product(product: Path, tmp_path: Path) -> None:
    assert _edit("Edit", "../memory/decisions.yaml", product / "src") == DENY
    assert _edit("Edit", "app.py", product / "src") == ALLOW
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert _edit("Write", str(product / "memory" / "decisions.yaml"), elsewhere) == DENY
    assert _edit("Write", str(elsewhere / "free.txt"), elsewhere) == ALLOW


def test_claude_code_s_own_settings_are_refused_wherever_the_agent_is(
    product: Path, tmp_path: Path
) -> None:
    home = Path.home()
    for path in (home / ".claude" / "settings.json", home / ".claude.json"):
        assert _edit("Write", str(path), product) == DENY
        assert _edit("Edit", str(path), tmp_path) == DENY
    assert _edit("Write", str(product / ".claude" / "settings.local.json"), product) == DENY


def test_with_no_sdd_root_git_s_folder_is_still_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    subprocess.run(["git", "init", "-q", str(plain)], check=True)
    (plain / "memory").mkdir()
    assert _edit("Write", ".git/hooks/pre-commit", plain) == DENY
    assert _edit("Edit", str(plain / ".git" / "config"), plain) == DENY
    assert _edit("Write", "memory/notes.md", plain) == ALLOW  # no record here to protect
    assert _edit("Write", "src/x.py", plain) == ALLOW
