"""Running the real `sdd guard` as Claude Code's PreToolUse hook runs it, and a product to run it
in.

Claude Code's hook input (code.claude.com/docs/en/hooks, "PreToolUse input"): one JSON object on
stdin with `session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`,
`tool_name`, `tool_input` and `tool_use_id`. Its answer: exit 2 and the reason on stderr blocks
the call; exit 0 with `hookSpecificOutput.permissionDecision` on stdout decides it; exit 0 and
nothing printed lets it go on. The guard is started the way `sdd agents install claude` writes
the hook: this interpreter, `-P -m sdd_git guard --host claude`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.root import Root

GUARD = [sys.executable, "-P", "-m", "sdd_git", "guard", "--host", "claude"]
DENY, ASK, ALLOW = "deny", "ask", "allow"


@dataclass(frozen=True)
class Answered:
    code: int
    stdout: str
    stderr: str

    @property
    def decision(self) -> str:
        """deny, ask or allow, read as Claude Code reads the answer; "broken" otherwise."""
        if self.code == 2 and self.stderr.startswith("sdd guard: ") and not self.stdout:
            return DENY
        if self.code == 0 and not self.stdout and not self.stderr:
            return ALLOW
        if self.code == 0 and self.stdout:
            output = json.loads(self.stdout)["hookSpecificOutput"]
            if output["hookEventName"] == "PreToolUse" and output["permissionDecision"] == "ask":
                assert output["permissionDecisionReason"].startswith("sdd guard: ")
                return ASK
        return "broken"

    @property
    def reason(self) -> str:
        if self.stdout:
            text: str = json.loads(self.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
            return text
        return self.stderr


def event(tool: str, tool_input: Any, cwd: Path | str, **more: Any) -> dict[str, Any]:
    return {
        "session_id": "3f6c2a52-test",
        "transcript_path": str(Path(cwd) / ".transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01TEST",
        **more,
    }


def run_guard(
    data: dict[str, Any] | bytes | str, cwd: Path, env: dict[str, str] | None = None
) -> Answered:
    raw = data if isinstance(data, bytes) else (
        data.encode() if isinstance(data, str) else json.dumps(data).encode()
    )  # fmt: skip
    environment = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    done = subprocess.run(
        GUARD, input=raw, cwd=cwd, capture_output=True, env={**environment, **(env or {})},
        timeout=60, check=False,
    )  # fmt: skip
    return Answered(done.returncode, done.stdout.decode(), done.stderr.decode())


def bash(command: str, cwd: Path) -> Answered:
    return run_guard(event("Bash", {"command": command, "description": "x"}, cwd), cwd)


def furnish(root: Root) -> Path:
    """The product the spellings assume: a change with its QA file, links into the record
    (`notes.md -> changes/CH-0001/qa.yaml`, `records -> memory`), source, a script that runs a
    person command, patches that touch the record or not, and another agent's rule file."""
    product = root.path
    (product / "changes" / "CH-0001").mkdir(parents=True, exist_ok=True)
    (product / "changes" / "CH-0001" / "qa.yaml").write_text("results: []\n")
    (product / "notes.md").symlink_to("changes/CH-0001/qa.yaml")
    (product / "records").symlink_to("memory")
    (product / "src").mkdir()
    (product / "src" / "app.py").write_text("print('hi')\n")
    (product / "ids.txt").write_text("next\n")
    (product / "scripts").mkdir()
    script = product / "scripts" / "accept.sh"
    script.write_text("#!/bin/sh\nsdd accept reading CH-0001\n")
    script.chmod(0o755)
    (product / "scripts" / "build.sh").write_text("#!/bin/sh\necho building\n")
    (product / "scripts" / "build.sh").chmod(0o755)
    copy = product / "scripts" / "s"  # sdd's console script, copied under another name
    copy.write_text("#!/usr/bin/python3\nimport sys\nfrom sdd_git.cli.entry import main\nmain()\n")
    copy.chmod(0o755)
    (product / "patches").mkdir()
    (product / "patches" / "record.patch").write_text(
        "diff --git a/memory/decisions.yaml b/memory/decisions.yaml\n"
        "--- a/memory/decisions.yaml\n+++ b/memory/decisions.yaml\n@@ -1 +1,2 @@\n x\n+y\n"
    )
    (product / "patches" / "src.patch").write_text(
        "diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n"
        "@@ -1 +1 @@\n-print('hi')\n+print('hello')\n"
    )
    (product / "guide").mkdir()
    (product / "guide" / "AGENTS.md").write_text("# Guide\n")
    return product


def shown(answer: Answered) -> str:
    return f"exit {answer.code}, stdout {answer.stdout!r}, stderr {answer.stderr!r}"


def not_allowed(answer: Answered, what: str) -> None:
    """Refused or asked: where the guard cannot know what a call does, asking is enough."""
    assert answer.decision in (DENY, ASK), f"{what} got through: {shown(answer)}"


def denied(answer: Answered, what: str) -> None:
    assert answer.decision == DENY, f"{what} was not refused: {shown(answer)}"
