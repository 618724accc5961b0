"""The protected parts of a product and of the machine, as plain tables: what no role writes
(the sandbox mounts them read-only, `sdd_git.protected` refuses them) and what no other agent
writes (`sdd guard`). Apart from `sdd_git.sandbox.policy` so that `sdd guard`, on the hot path of
every tool call, reads them without the Policy record and what it imports."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Inside the product folder: the person's record, sdd's own files and git's folder.
RECORD_FOLDERS = ("memory", "changes", ".sdd", ".git")
# Folders that define roles, skills and routines, carry rules for them or for the other agents
# working in the same repository (Claude Code, Codex, Cursor, Copilot, VS Code tasks), or hold
# code that git, CI or an editor runs by itself: rules come only from the person, so no role
# writes here either.
RULE_FOLDERS = (
    "templates",
    ".agents/skills",
    ".claude",
    ".codex",
    ".cursor",
    ".vscode",
    ".github/actions",  # local actions: code the protected workflows run
    ".github/agents",
    ".github/skills",
    ".github/workflows",
    ".gemini",  # Gemini CLI's settings (hooks, MCP servers) and commands
    ".windsurf",
    ".kilocode",
    ".roo",
    ".continue",
    ".githooks",
    ".husky",
    ".lefthook",  # lefthook's scripts folder
)
# A file with one of these names defines a role or a skill wherever it lives.
RULE_FILE_NAMES = ("ROLE.md", "SKILL.md")
# A file with one of these names gives another agent its rules, its tools or a filter git runs,
# wherever it lives (Claude Code and Codex read nested CLAUDE.md and AGENTS.md too).
AGENT_FILE_NAMES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "AGENTS.override.md",
    ".mcp.json",
    "copilot-instructions.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    ".clinerules",
    ".gitattributes",
    # The hook managers' own files: what they name runs at her next commit or merge, outside
    # any sandbox (pre-commit, lefthook; husky's are under .husky/).
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook.yaml",
    "lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    ".lefthook-local.yml",
    ".lefthook-local.yaml",
)
PROTECTED_FILE_NAMES = RULE_FILE_NAMES + AGENT_FILE_NAMES
PROTECTED_IN_PRODUCT = RECORD_FOLDERS + RULE_FOLDERS


def sdd_home() -> Path:
    return Path(os.environ.get("SDD_HOME") or Path.home() / ".sdd")


def site_folders() -> list[Path]:
    """Where Python looks for .pth files and sitecustomize at start: the environment's own site
    folders, the user's (also where it does not exist yet, as HOME says now), and every folder
    on sdd's own import path (sitecustomize is imported from any of them). Code planted there
    runs in every later Python, sdd's included."""
    import site

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    user = Path.home() / ".local" / "lib" / version / "site-packages"
    folders = [*site.getsitepackages(), site.getusersitepackages(), str(user)]
    folders += [entry for entry in sys.path if entry and os.path.isdir(entry)]
    return [Path(f).resolve() for f in dict.fromkeys(folders)]
