"""Input the guard does not expect, each kind answered in plain words and never allowed: no
traceback, no exit code Claude Code would read as "go on" (any code but 0 and 2 lets the call
run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hostguard.guardrun import ALLOW, ASK, DENY, event, run_guard


def _event(where: Path, changes: dict[str, Any]) -> dict[str, Any]:
    data = event("Bash", {"command": "ls"}, where)
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


CASES: list[tuple[str, Any, str, str]] = [
    # (id, the input, the answer, words the reason holds)
    ("empty input", b"", DENY, "not JSON"),
    ("not JSON", b"tool_name=Bash", DENY, "not JSON"),
    ("a JSON array", b'[{"tool_name": "Bash"}]', DENY, "not a JSON object"),
    ("JSON null", b"null", DENY, "not a JSON object"),
    ("not UTF-8", b'{"tool_name": "\xff\xfe"}', DENY, "not UTF-8"),
    ("nested too deep", b"[" * 100_000 + b"]" * 100_000, DENY, "could not check"),
    ("no tool_name", {"drop": "tool_name"}, DENY, "names no tool"),
    ("tool_name a number", {"tool_name": 7}, DENY, "names no tool"),
    ("tool_input a text", {"tool_input": "ls"}, DENY, "not a JSON object"),
    ("tool_input a list", {"tool_input": ["ls"]}, DENY, "not a JSON object"),
    ("command a number", {"tool_input": {"command": 1}}, DENY, "`command` is missing"),
    ("command missing", {"tool_input": {"description": "x"}}, DENY, "`command` is missing"),
    ("command empty", {"tool_input": {"command": "  "}}, DENY, "`command` is missing"),
    ("NUL in the command", {"tool_input": {"command": "ls\x00; sdd next"}}, DENY, "NUL"),
    ("Edit with no path", {"tool_name": "Edit", "tool_input": {}}, DENY, "`file_path`"),
    ("Write, path a list", {"tool_name": "Write", "tool_input": {"file_path": ["a"]}}, DENY,
     "`file_path`"),
    ("NotebookEdit, no path", {"tool_name": "NotebookEdit", "tool_input": {"x": 1}}, DENY,
     "`notebook_path`"),
    ("another event", {"hook_event_name": "PostToolUse"}, DENY, "PreToolUse hooks only"),
    ("cwd a number", {"cwd": 5}, DENY, "`cwd`"),
    ("an unknown tool", {"tool_name": "Frobnicate", "tool_input": {"x": 1}}, ASK,
     "does not know"),
    ("an MCP tool", {"tool_name": "mcp__fs__write_file", "tool_input": {"path": "memory/x"}},
     ASK, "MCP server"),
    ("control characters", {"tool_name": "Ev\x1b[31mil", "tool_input": {}}, ASK, "\\u001b"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "data", "expect", "words"), CASES, ids=[c[0] for c in CASES])
def test_input_it_does_not_expect_is_refused_or_asked_in_words(
    product: Path, case: str, data: Any, expect: str, words: str
) -> None:
    if isinstance(data, dict):
        changes = dict(data)
        drop = changes.pop("drop", None)
        data = _event(product, {**({drop: None} if drop else {}), **changes})
    answered = run_guard(data, product)
    assert answered.code in (0, 2)
    assert answered.decision == expect, answered
    assert words in answered.reason
    assert "Traceback" not in answered.stderr + answered.stdout


def test_read_only_tools_pass(product: Path) -> None:
    for tool, tool_input in (
        ("Read", {"file_path": str(product / "memory" / "decisions.yaml")}),
        ("Grep", {"pattern": "accept", "path": "memory"}),
        ("Glob", {"pattern": "**/*.md"}),
        ("WebFetch", {"url": "https://example.invalid", "prompt": "x"}),
        ("TodoWrite", {"todos": []}),
    ):
        assert run_guard(event(tool, tool_input, product), product).decision == ALLOW, tool


def test_claude_project_dir_is_not_needed_and_a_missing_cwd_is_the_hook_s_own(
    product: Path,
) -> None:
    data = event("Bash", {"command": "echo x > memory/decisions.yaml"}, product)
    del data["cwd"]
    assert run_guard(data, product).decision == DENY
    data = event("Bash", {"command": "echo x > memory/decisions.yaml"}, product)
    assert run_guard(data, product, env={"CLAUDE_PROJECT_DIR": "/nonexistent"}).decision == DENY


def test_a_large_write_is_read_whole(product: Path) -> None:
    content = "x" * 5_000_000
    data = event("Write", {"file_path": "memory/decisions.yaml", "content": content}, product)
    assert run_guard(data, product).decision == DENY
    data = event("Write", {"file_path": "src/big.txt", "content": content}, product)
    assert run_guard(json.dumps(data), product).decision == ALLOW
