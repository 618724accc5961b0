"""`sdd guard --host codex`: Codex's PreToolUse input, answered as Codex reads it. Codex has no
"ask" (it would run the call), so what Claude Code's guard asks about is refused here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sdd_git.hostguard.codex import patch_paths
from tests.hostguard.guardrun import event

GUARD = [sys.executable, "-P", "-m", "sdd_git", "guard", "--host", "codex"]


def _codex(data: dict[str, Any] | str, cwd: Path) -> subprocess.CompletedProcess[str]:
    raw = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(
        GUARD, input=raw, cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def _patch(*heads: str) -> str:
    body = "".join(f"*** {head}\n+x\n" for head in heads)
    return f"*** Begin Patch\n{body}*** End Patch\n"


def test_a_plain_command_and_a_patch_of_a_product_file_go_on(product: Path) -> None:
    for tool, command in (
        ("Bash", "ls -la && git status"),
        ("apply_patch", _patch("Add File: src/a.py")),
    ):
        done = _codex(event(tool, {"command": command}, product), product)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), (tool, done.stderr)


@pytest.mark.parametrize(
    "command",
    [
        "sdd accept reading CH-0001",
        "cd . && sdd -C . --no-agent next",
        "bash -c 'python3 -m sdd_git complete'",
        "echo done > memory/decisions.yaml",
    ],
)
def test_person_commands_and_record_writes_are_refused_with_exit_2(
    product: Path, command: str
) -> None:
    done = _codex(event("Bash", {"command": command}, product), product)
    assert done.returncode == 2 and done.stderr.startswith("sdd guard: "), done
    assert done.stdout == ""


def test_what_claude_codes_guard_would_ask_about_is_refused_under_codex(product: Path) -> None:
    done = _codex(event("Bash", {"command": 'eval "$CMD"'}, product), product)
    assert done.returncode == 2
    assert "Codex cannot ask the person, so this call is refused" in done.stderr


@pytest.mark.parametrize(
    "heads",
    [
        ("Add File: memory/planted.txt",),
        ("Update File: src/a.py", "Move to: .sdd/config.yaml"),
        ("Delete File: changes/CH-0001/change.yaml",),
        ("Update File: ./MEMORY/../memory/decisions.yaml",),
        ("Add File: .codex/rules/mine.rules",),
    ],
)
def test_a_patch_that_touches_a_protected_path_anywhere_is_refused(
    product: Path, heads: tuple[str, ...]
) -> None:
    done = _codex(event("apply_patch", {"command": _patch(*heads)}, product), product)
    assert done.returncode == 2 and done.stderr.startswith("sdd guard: "), done


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "[]",
        event("apply_patch", {"command": "no patch here"}, "/"),
        event("Bash", {"command": ["ls"]}, "/"),
        event("Bash", "ls", "/"),
        event("SomethingNew", {"command": "ls"}, "/"),
    ],
    ids=["not-json", "a-list", "no-file", "command-list", "input-text", "unknown-tool"],
)
def test_input_it_cannot_check_is_refused_never_run(
    product: Path, data: dict[str, Any] | str
) -> None:
    done = _codex(data, product)
    assert done.returncode == 2 and done.stderr.startswith("sdd guard: "), done
    assert "Traceback" not in done.stderr


def test_patch_paths_reads_every_file_a_patch_names() -> None:
    patch = _patch("Add File: a.txt", "Update File: b/c.py", "Move to: d.py", "Delete File: e")
    assert patch_paths(patch) == ("a.txt", "b/c.py", "d.py", "e")
