"""The guard: the first wall every tool call crosses, before the boundary and before it runs.

It rejects what no role may do by any route: an unknown or unoffered tool, a shell command that
reaches `sdd`, and a write to the person's record, the role files or git's own folder (paths
resolved through `..`, symlinks and case first). It also says when a shell command cannot be
classified with certainty; such a command always stops and is never allowed by a saved rule.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.tools.catalog import TOOL_CLASSES

PROTECTED_TOP = ("memory", "changes", ".sdd", ".git")
_WRITE_PATH_ARGS = {"write_file": ("path",), "delete_file": ("path",)}
_READ_PATH_ARGS = {"read_file": ("path",), "list_files": ("path",), "search_files": ("path",)}


@dataclass(frozen=True)
class Rejection:
    code: str
    message: str  # told to the model and written to the log


@dataclass(frozen=True)
class Clearance:
    certain: bool  # False: the call always stops and no saved rule may allow it


def check(
    tool: str, args: dict[str, Any], root: Path, offered: Iterable[str]
) -> Rejection | Clearance:
    if tool not in TOOL_CLASSES:
        return Rejection("unknown_tool", f"there is no tool '{tool}' for roles")
    if tool not in offered:
        return Rejection("not_offered", f"'{tool}' is not available in this run")
    if _holds_nul(args):
        return Rejection("bad_input", "an argument holds a NUL byte, which no path or command may")
    for key in _WRITE_PATH_ARGS.get(tool, ()):
        problem = write_path_problem(root, args.get(key))
        if problem:
            return problem
    if tool == "git_commit":
        paths = args.get("paths")
        for path in paths if isinstance(paths, list) else []:
            problem = write_path_problem(root, path, whole_tree=True)  # "." commits it all
            if problem:
                return problem
    for key in _READ_PATH_ARGS.get(tool, ()):
        if args.get(key) not in (None, ""):
            inside = _inside(root, args.get(key))
            if inside is None:
                return Rejection("outside_root", "that path is outside the product folder")
    if tool == "run_command":
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return Rejection("bad_input", "run_command needs a command")
        return _shell(root, command)
    return Clearance(certain=True)


def _shell(root: Path, command: str) -> Rejection | Clearance:
    from sdd_git.runner.shell import classify

    finding = classify(command)
    if finding.reaches_sdd:
        return Rejection(
            "person_command",
            f"sdd commands belong to the person; a role cannot run them by any route "
            f"({finding.reaches_sdd[0]})",
        )
    certain = finding.certain
    for cwd, path, whole_tree, soft in finding.writes:
        # A shell may write outside the product (a build folder in /tmp); only the record, sdd's
        # files and git's folder are walled off. A relative path is checked from every folder
        # a `cd` in the command reached, since loops and functions reorder them.
        for base in _bases(cwd, path, finding.cwds):
            target = str(Path(base) / path)
            problem = write_path_problem(root, target, whole_tree=whole_tree)
            if problem is None or problem.code != "protected_path":
                continue
            if soft and _holds_only(root, target):
                certain = False  # e.g. `find . -name '*.pyc' -delete`: the person decides
                continue
            return Rejection(problem.code, f"the command writes {path}: {problem.message}")
    if finding.git_writes:
        return Rejection(
            "git_write",
            f"`git {finding.git_writes[0]}` changes the repository; commits, pushes and tags go "
            "through git_commit, git_push and git_tag, each named on a stop",
        )
    for cwd, path in finding.touches:
        for base in _bases(cwd, path, finding.cwds):
            target = str(Path(base) / path)
            if _inside(root, target) is not None and write_path_problem(root, target) is not None:
                certain = False  # a program nobody vouches for is handed part of the record
    return Clearance(certain=certain)


def _bases(cwd: str, path: str, cwds: set[str]) -> set[str]:
    return {"."} if path.startswith("/") else {cwd} | cwds


def _holds_only(root: Path, value: str) -> bool:
    """The path is the product folder (or above it): it holds the record but is not part of it."""
    resolved = (root / value).resolve()
    base = root.resolve()
    return resolved == base or resolved in base.parents


def _inside(root: Path, value: Any) -> Path | None:
    if not isinstance(value, str) or not value:
        return None
    resolved = (root / value).resolve()
    base = root.resolve()
    if resolved != base and base not in resolved.parents:
        return None
    return resolved


def write_path_problem(root: Path, value: Any, whole_tree: bool = False) -> Rejection | None:
    """Why a write to `value` is forbidden, or None. `whole_tree`: the write may take everything
    under the path too (rm -r, find -delete), so the product folder itself is protected."""
    resolved = _inside(root, value)
    if resolved is None:
        if (
            whole_tree
            and isinstance(value, str)
            and (root / value).resolve() in root.resolve().parents
        ):
            return Rejection("protected_path", f"{value} holds the person's record")
        return Rejection("outside_root", "that path is outside the product folder")
    relative = resolved.relative_to(root.resolve())
    top = relative.parts[0] if relative.parts else ""
    # The entry itself, its last symlink not followed: a tool that deletes or commits a link
    # acts on the link, which must not sit in the record either.
    if isinstance(value, str) and not value.startswith("/"):
        lexical = Path(os.path.normpath(root.resolve() / value))
        if lexical != root.resolve() and root.resolve() in lexical.parents:
            first = lexical.relative_to(root.resolve()).parts[0]
            if first.casefold() in PROTECTED_TOP:
                top = first
    if whole_tree and not top:
        return Rejection("protected_path", f"{value} holds the person's record and sdd's files")
    if top.casefold() in PROTECTED_TOP or _case_alias(root, top):
        return Rejection(
            "protected_path",
            f"{value} is part of the person's record or sdd's own files; roles never write there",
        )
    return None


def _case_alias(root: Path, top: str) -> bool:
    # On a case-insensitive file system `Memory/` is `memory/`.
    if not top:
        return False
    candidate = root / top
    return any(
        os.path.exists(root / name) and os.path.samefile(candidate, root / name)
        for name in PROTECTED_TOP
        if candidate.exists()
    )


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(v) for v in value)
    return False
