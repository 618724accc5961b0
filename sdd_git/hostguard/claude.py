"""Claude Code's `PreToolUse` hook protocol (code.claude.com/docs/en/hooks).

In: one JSON object on stdin with `session_id`, `transcript_path`, `cwd`, `permission_mode`,
`hook_event_name` ("PreToolUse"), `tool_name`, `tool_input` and `tool_use_id`. `tool_input` is
the tool's own arguments: `command` for Bash, `file_path` for Edit, Write and MultiEdit,
`notebook_path` for NotebookEdit.

Out: exit 2 with the reason on stderr blocks the call, and Claude is shown the reason. Exit 0
with `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
"permissionDecisionReason": ...}}` on stdout makes Claude Code ask the person. Exit 0 with
nothing printed lets the call go on to Claude Code's own permission rules: the guard never
answers "allow", which would skip them. Any other exit code is a non-blocking error, and the call
would run: so `sdd guard` never exits with one, and the hook command `sdd agents install claude`
writes turns a guard that could not start into a refusal too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from sdd_git.hostguard.call import ASK, DENY, Answer, HostCall, ask, deny

# `typing` is never imported at run time here: `sdd guard` runs this before each tool call of
# another agent (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

# The tools that write files, and the argument that names the file.
WRITE_TOOLS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
SHELL_TOOLS = ("Bash",)
# Tools that only read, search, plan or talk: nothing of them writes a file or runs a command.
READ_TOOLS = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "NotebookRead",
        "WebFetch",
        "WebSearch",
        "TodoWrite",
        "TodoRead",
        "Task",
        "Agent",
        "ExitPlanMode",
        "BashOutput",
        "KillShell",
        "KillBash",
        "SlashCommand",
        "Skill",
        "AskUserQuestion",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "TaskOutput",
        "TaskStop",
    }
)
PROJECT_ENV = "CLAUDE_PROJECT_DIR"


def own_files(environ: Mapping[str, str]) -> tuple[str, ...]:
    """Claude Code's own settings, wherever its docs say it reads them: the user's `~/.claude/`
    (or `$CLAUDE_CONFIG_DIR`) and `~/.claude.json`, and the managed settings' folders. A hook
    or `disableAllHooks` written there would turn the guard off."""
    home = os.path.expanduser("~")
    found = [os.path.join(home, ".claude"), os.path.join(home, ".claude.json")]
    if environ.get("CLAUDE_CONFIG_DIR"):
        found.append(environ["CLAUDE_CONFIG_DIR"])
    found += ["/etc/claude-code", "/Library/Application Support/ClaudeCode"]
    return tuple(found)


# What Claude Code reads from the project and the folders above where it works: settings and
# hooks (`.claude/`), MCP servers, and memory files that instruct it.
PROJECT_FILES = (".claude", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md")


def project_files(cwd: str, project: str | None, names: tuple[str, ...]) -> tuple[str, ...]:
    """A host's own files (`names`) in its project folder and in every folder above where the
    agent works: the project may be a folder above the sdd root (a monorepo), where no rule of
    the product's reaches, and a hook or `disableAllHooks` written there turns the guard off."""
    found: list[str] = []
    for start in (cwd, project):
        folder = os.path.normpath(start) if start else ""
        while folder:
            found.extend(os.path.join(folder, name) for name in names)
            parent = os.path.dirname(folder)
            folder = "" if parent == folder else parent
    return tuple(dict.fromkeys(found))


class ClaudeCode:
    name = "claude"

    def read(self, data: str, environ: Mapping[str, str]) -> HostCall | Answer:
        try:
            event = json.loads(data)
        except ValueError as exc:
            return deny(f"the hook input is not JSON ({exc}); Claude Code sends one JSON object")
        if not isinstance(event, dict):
            return deny("the hook input is not a JSON object, as Claude Code's PreToolUse sends")
        return _call(event, environ)

    def write(self, answer: Answer, out: TextIO, err: TextIO) -> int:
        reason = visible(answer.reason)
        if answer.decision == DENY:
            err.write(f"sdd guard: {reason}\n")
            return 2
        if answer.decision == ASK:
            output = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "ask",
                    "permissionDecisionReason": f"sdd guard: {reason}",
                }
            }
            out.write(json.dumps(output) + "\n")
        return 0


HOST = ClaudeCode()


def envelope(event: dict[str, Any]) -> tuple[str, dict[str, Any], str] | Answer:
    """A PreToolUse input's tool, its arguments and the folder it runs in (absolute), or the
    refusal of an input that is not one: Claude Code's shape, which Codex shares."""
    name = event.get("hook_event_name", "PreToolUse")
    if name != "PreToolUse":
        return deny(f"sdd guard answers PreToolUse hooks only, not {_shown(name)}")
    tool = event.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return deny("the hook input names no tool (`tool_name` is missing or not a text)")
    arguments = event.get("tool_input", {})
    if not isinstance(arguments, dict):
        return deny(f"{tool}: `tool_input` is not a JSON object, so it cannot be checked")
    cwd = event.get("cwd", os.getcwd())
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        return deny("the hook input's `cwd` is not a folder's path")
    return tool, arguments, os.path.join(os.getcwd(), cwd)  # an absolute cwd stays as it is


def _call(event: dict[str, Any], environ: Mapping[str, str]) -> HostCall | Answer:
    read = envelope(event)
    if isinstance(read, Answer):
        return read
    tool, arguments, cwd = read
    project = environ.get(PROJECT_ENV) or None
    mine = own_files(environ) + project_files(cwd, project, PROJECT_FILES)
    if tool in SHELL_TOOLS:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return deny(f"{tool}: `command` is missing, empty or not a text")
        return HostCall(tool, cwd, command=command, project=project, host_files=mine)
    if tool in WRITE_TOOLS:
        key = WRITE_TOOLS[tool]
        path = arguments.get(key)
        if not isinstance(path, str) or not path:
            return deny(f"{tool}: `{key}` is missing, empty or not a text")
        return HostCall(tool, cwd, writes=(path,), project=project, host_files=mine)
    if tool in READ_TOOLS:
        return HostCall(tool, cwd, project=project)
    if tool.startswith("mcp__"):
        return ask(
            f"{tool} is an MCP server's tool: what it does is the server's, and sdd guard cannot "
            "tell whether it changes the person's record (memory/, changes/, .sdd/)"
        )
    return ask(f"{_shown(tool)} is a tool sdd guard does not know, so it cannot check it")


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return f"'{text[:80]}'"


_HIDDEN = {c: f"\\u{c:04x}" for c in (*range(0x20), *range(0x7F, 0xA0))}
_HIDDEN.update({c: f"\\u{c:04x}" for c in (0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF)})
_HIDDEN.update({c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def visible(text: str) -> str:
    """The text as it can be shown: a control, bidirectional or zero-width character (from a
    command line the agent wrote) is written out as its escape."""
    return text.translate(_HIDDEN)
