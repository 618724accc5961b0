"""The hosts `sdd guard --host NAME` speaks to: each one module with a `HOST` (a `call.Host`),
imported only when named. Another host (Codex, Cursor) is one small module and one line here."""

from __future__ import annotations

import importlib

# `typing` is never imported at run time here: `sdd guard` runs this before each tool call of
# another agent (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.hostguard.call import Host

HOSTS: dict[str, str] = {
    "claude": "sdd_git.hostguard.claude",  # Claude Code's PreToolUse hook
    "codex": "sdd_git.hostguard.codex",  # Codex's PreToolUse hook (no "ask": refused)
}
DEFAULT_HOST = "claude"


def host(name: str) -> Host | None:
    module = HOSTS.get(name)
    if module is None:
        return None
    found: Host = importlib.import_module(module).HOST
    return found
