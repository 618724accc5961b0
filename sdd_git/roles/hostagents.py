"""Other hosts' agent files, read where they are: Claude Code's and GitHub Copilot's.

`.claude/agents/NAME.md` (Claude Code subagents) and `.github/agents/NAME.agent.md` (Copilot
custom agents) are the product's own files, which the person keeps for those hosts. sdd lists
them as roles of source `claude` and `copilot` without copying them, and keeps their meaning:

- The identity is the file name when `name` is missing or is a display name ("Code Reviewer"),
  as both hosts do; such a `name` becomes the label.
- Their `tools:` allowlist maps onto sdd's tools (`map_tools`); no `tools:` is every tool, as
  both hosts read it. A name that maps to nothing is named in a warning.

The mapping, decided here once:

- Reading (Claude `Read`, `NotebookRead`; Copilot `read`) gives every read tool of the record and
  the repo: read_file, list_files, read_record, git_status/log/diff and use_skill (a skill's
  text is read like a file). Searching (`Grep`,
  `Glob`, `LS`; `search`) gives search_files and list_files. A read-only reviewer
  (`Read, Grep, Glob` or `[read, search]`) is thus offered read tools only.
- Editing (`Edit`, `Write`, `MultiEdit`, `NotebookEdit`; `edit`) gives write_file and
  delete_file, and sdd's draft tools (draft_reading, draft_scenarios, propose_qa_result,
  remember): they write drafts, which only a role allowed to write should produce.
- A shell (`Bash`; `execute`, `shell`, `terminal`) gives run_command and the git tools that
  change history (git_commit, git_tag, git_push): with a shell the host could run those too.
  All of them are consequential and still stop for the person.
- Delegation (`Task`, `Agent`; `agent`) gives handoff, and only to a role whose delegation is
  allow (written beside the host's keys): a host file's delegation defaults to deny.
- The web (`WebFetch`, `WebSearch`; `web`, `fetch`), todo lists and MCP servers have no sdd
  tool: they are named in a warning.
- Neither host names deploy, open_pull_request, merge_pull_request or the accuracy loop's
  tools, so an allowlist never grants them; the runner offers the loop's tools inside the loop.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

HOST_SOURCES = ("claude", "copilot")

# Where each host keeps its agent files in a product, and how their names end.
HOST_FOLDERS: tuple[tuple[str, str, str], ...] = (
    (".claude/agents", ".md", "claude"),
    (".github/agents", ".agent.md", "copilot"),
)

_READ = (
    "read_file",
    "list_files",
    "read_record",
    "git_status",
    "git_log",
    "git_diff",
    "use_skill",
    "connector_read",  # reading a tracker's record is reading; offered only with @NAME attached
)
_SEARCH = ("search_files", "list_files")
_EDIT = (
    "write_file",
    "delete_file",
    "draft_reading",
    "draft_scenarios",
    "propose_qa_result",
    "remember",
)
_SHELL = ("run_command", "git_commit", "git_tag", "git_push")
_DELEGATE = ("handoff",)

# Host tool names, lowercased (Copilot reads them case-insensitively, and accepts Claude Code's
# names as aliases), to sdd tools; an empty tuple is a known tool that sdd has no match for.
_ALIASES: dict[str, tuple[str, ...]] = {
    # Claude Code
    "read": _READ,
    "notebookread": _READ,
    "grep": _SEARCH,
    "glob": ("list_files",),
    "ls": ("list_files",),
    "edit": _EDIT,
    "write": _EDIT,
    "multiedit": _EDIT,
    "notebookedit": _EDIT,
    "bash": _SHELL,
    "task": _DELEGATE,
    "agent": _DELEGATE,
    "webfetch": (),
    "websearch": (),
    "skill": ("use_skill",),
    "todowrite": (),
    "todoread": (),
    # GitHub Copilot (and VS Code's names for the same built-ins)
    "search": _SEARCH,
    "codebase": _SEARCH,
    "usages": _SEARCH,
    "findtestfiles": ("list_files",),
    "problems": ("read_file",),
    "changes": ("git_status", "git_diff"),
    "editfiles": _EDIT,
    "new": _EDIT,
    "execute": _SHELL,
    "shell": _SHELL,
    "terminal": _SHELL,
    "powershell": _SHELL,
    "runcommands": _SHELL,
    "runinterminal": _SHELL,
    "custom-agent": _DELEGATE,
    "web": (),
    "fetch": (),
    "githubrepo": (),
    "todo": (),
    "todos": (),
}
# VS Code's namespaced names (`read/problems`, `edit/editFiles`): the namespace says enough.
_NAMESPACES = {
    "read": _READ,
    "search": _SEARCH,
    "edit": _EDIT,
    "execute": _SHELL,
    "agent": _DELEGATE,
}
_ORDER: tuple[str, ...] = (*_READ, "search_files", *_EDIT, *_SHELL, *_DELEGATE)


@dataclass(frozen=True)
class ToolMapping:
    """What an allowlist grants (None: every tool) and the names that map to nothing."""

    tools: tuple[str, ...] | None
    unmapped: tuple[tuple[int, str], ...]  # (index in the list, the host's name)


def _names(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value]
    return None


def tool_names(value: object) -> list[str] | None:
    """The host's tool names: a comma-separated string (Claude Code) or a list (Copilot)."""
    return _names(value)


def _one(name: str) -> tuple[str, ...] | None:
    key = name.casefold()
    if key in _ALIASES:
        return _ALIASES[key]
    namespace, slash, _ = key.partition("/")
    if slash and namespace in _NAMESPACES:
        return _NAMESPACES[namespace]
    return None  # an MCP server's tool, a `github/*`, a typo: nothing in sdd


def map_tools(allowed: list[str] | None, denied: list[str] | None = None) -> ToolMapping:
    """The sdd tools an allowlist grants, less those of a denylist (Claude's disallowedTools).

    No allowlist, or `*` in it, grants every tool; what the denylist names is then taken away
    from the whole catalog."""
    from sdd_git.toolnames import TOOL_CLASSES

    unmapped: list[tuple[int, str]] = []
    granted: set[str] | None
    if allowed is None or "*" in allowed:
        granted = None
    else:
        granted = set()
        for index, name in enumerate(allowed):
            mapped = _one(name)
            if not mapped:
                unmapped.append((index, name))
                continue
            granted.update(mapped)
    if denied:
        taken: set[str] = set()
        for name in denied:
            taken.update(_one(name) or ())
        if taken:
            granted = (set(TOOL_CLASSES) if granted is None else granted) - taken
    if granted is None:
        return ToolMapping(None, tuple(unmapped))
    granted &= set(TOOL_CLASSES)  # a tool this build of sdd does not have is not offered
    ordered = [t for t in _ORDER if t in granted]
    ordered += sorted(t for t in granted if t not in _ORDER)
    return ToolMapping(tuple(ordered), tuple(unmapped))


_NOT_NAME = re.compile(r"[^a-z0-9-]+")


def identity(stem: str) -> str:
    """A role name from a file name: `CSharpExpert` -> `csharpexpert`, `My Agent` -> `my-agent`."""
    slug = _NOT_NAME.sub("-", stem.casefold()).strip("-")
    return re.sub("-{2,}", "-", slug)[:40].strip("-") or "agent"


def file_stem(path: Path) -> str:
    """The agent's name as its host reads it from the file: without `.agent.md` or `.md`."""
    name = path.name
    for suffix in (".agent.md", ".md"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def host_of(path: Path) -> str | None:
    """`claude` or `copilot` for a file in one of their agent folders, else None."""
    parts = path.parts
    if len(parts) >= 3 and parts[-3] == ".claude" and parts[-2] == "agents":
        return "claude" if path.name.endswith(".md") else None
    if len(parts) >= 3 and parts[-3] == ".github" and parts[-2] == "agents":
        return "copilot" if path.name.endswith(".md") else None
    return None


def agent_files(product: Path) -> list[tuple[Path, str]]:
    """The product's agent files of other hosts with their source, sorted by name per folder.

    Only the folder's own files: both hosts read `NAME.md` at the top of it. A README or a
    file whose name does not end as the host's does is not an agent. os-level listing: this
    is on the path of `sdd role list`."""
    found: list[tuple[Path, str]] = []
    for folder, suffix, source in HOST_FOLDERS:
        base = os.path.join(product, folder)
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            if name.startswith(".") or not name.endswith(suffix):
                continue
            if name.casefold() in ("readme.md", "agents.md"):
                continue
            path = os.path.join(base, name)
            if os.path.isfile(path):
                found.append((Path(path), source))
    return found
