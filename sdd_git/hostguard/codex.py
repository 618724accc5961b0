"""Codex's `PreToolUse` hook protocol (developers.openai.com/codex/hooks).

In: one JSON object on stdin, shaped as Claude Code's (`cwd`, `hook_event_name`, `tool_name`,
`tool_input`, ...). Every shell tool is `Bash`, with the command line in `tool_input.command`;
a file edit is `apply_patch`, with the whole patch in `tool_input.command` (`*** Add File:
PATH`, `*** Update File: PATH`, `*** Delete File: PATH`, `*** Move to: PATH`).

Out: exit 2 with the reason on stderr refuses the call. Codex has no "ask": it reads that
decision as a failed hook and runs the call, as it does any exit but 0 and 2. So what the guard
would ask the person about is refused here, saying that she can run it herself."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from sdd_git.hostguard.call import ASK, DENY, Answer, HostCall, deny
from sdd_git.hostguard.claude import envelope, own_files, project_files, visible

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

# What Codex reads from the folders from the project's top down to where it works: its project
# config, rules and hooks, and the instructions it follows.
_PROJECT_FILES = (".codex", "AGENTS.md", "AGENTS.override.md")
_PATCH_HEADS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")


class Codex:
    name = "codex"

    def read(self, data: str, environ: Mapping[str, str]) -> HostCall | Answer:
        try:
            event = json.loads(data)
        except ValueError as exc:
            return deny(f"the hook input is not JSON ({exc}); Codex sends one JSON object")
        if not isinstance(event, dict):
            return deny("the hook input is not a JSON object, as Codex's PreToolUse sends")
        return _call(event, environ)

    def write(self, answer: Answer, out: TextIO, err: TextIO) -> int:
        reason = visible(answer.reason)
        if answer.decision == ASK:
            err.write(
                f"sdd guard: {reason}. Codex cannot ask the person, so this call is refused: "
                "tell her the exact command, and she runs it herself if she wants it\n"
            )
            return 2
        if answer.decision == DENY:
            err.write(f"sdd guard: {reason}\n")
            return 2
        return 0


HOST = Codex()


def _call(event: dict[str, Any], environ: Mapping[str, str]) -> HostCall | Answer:
    read = envelope(event)
    if isinstance(read, Answer):
        return read
    tool, arguments, cwd = read
    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        return deny(f"{tool}: `command` is missing, empty or not a text")
    mine = own_files(environ) + _codex_files(environ) + project_files(cwd, None, _PROJECT_FILES)
    if tool == "Bash":
        return HostCall(tool, cwd, command=command, host_files=mine)
    if tool == "apply_patch":
        paths = patch_paths(command)
        if not paths:
            return deny("apply_patch: the patch names no file sdd guard can read")
        return HostCall(tool, cwd, writes=paths, host_files=mine)
    return deny(f"'{tool[:80]}' is a tool sdd guard does not know, so it cannot check it")


def patch_paths(patch: str) -> tuple[str, ...]:
    """Every file a Codex patch adds, changes, deletes or moves to, as written."""
    found = []
    for line in patch.splitlines():
        for head in _PATCH_HEADS:
            if line.startswith(head):
                found.append(line[len(head) :].strip())
    return tuple(found)


def _codex_files(environ: Mapping[str, str]) -> tuple[str, ...]:
    """Codex's own config, rules and hooks (`~/.codex`, or `$CODEX_HOME`): written there, a hook
    or a rule could turn the guard off."""
    found = [os.path.join(os.path.expanduser("~"), ".codex")]
    if environ.get("CODEX_HOME"):
        found.append(environ["CODEX_HOME"])
    return tuple(found)
