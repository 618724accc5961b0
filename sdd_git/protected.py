"""The protected paths: where no agent writes, whoever runs it (a role, through the runner's
guard; another agent on her machine, through `sdd guard`).

The person's record (`memory/`, `changes/`), sdd's own files (`.sdd/`), git's folder, the files
that define roles, skills and routines or grant another agent its rules (any `ROLE.md`,
`SKILL.md`, `CLAUDE.md`, `AGENTS.md`, the rule folders, `$SDD_HOME`), the product's `.env` files
and the Python environment sdd runs from. Paths are resolved through `..`, symlinks and case
first. The tables are `sdd_git.sandbox.policy`'s, which the sandbox turns into its read-only
mounts: one list, the same wall for both.

`write_path_problem` checks one path; `writes_allowed`, `copies_allowed` and `touches_allowed`
check what the classifier found in a shell command (`sdd_git.shellpolicy`), which started in
`start` (a folder relative to the product, or an absolute one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sdd_git.sandbox.policy import (
    AGENT_FILE_NAMES,
    RECORD_FOLDERS,
    RULE_FILE_NAMES,
    RULE_FOLDERS,
    hooks_folder,
    python_environments,
    rule_link_targets,
    sdd_home,
)
from sdd_git.shellpolicy.decision import Decision, Verdict

# `typing` is never imported at run time here: `sdd guard` runs this before each tool call of
# another agent (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from sdd_git.shellpolicy.findings import ShellFinding, Source

_RULE_NAMES = frozenset(name.casefold() for name in RULE_FILE_NAMES)
_AGENT_NAMES = frozenset(name.casefold() for name in AGENT_FILE_NAMES)
_RULE_FOLDER_PARTS = tuple(tuple(p.casefold() for p in f.split("/")) for f in RULE_FOLDERS)
# A folder copied, moved or linked whole is searched for role and skill files up to this many
# entries; a bigger one makes the command uncertain instead.
SOURCE_SCAN_LIMIT = 5000


@dataclass(frozen=True)
class Rejection(Decision):
    """What no agent may do by any route: `code` and `message` are told to it and logged."""

    verdict: Verdict = Verdict.FORBID


def writes_allowed(root: Path, finding: ShellFinding, start: str = ".") -> Rejection | bool:
    """A shell may write outside the product (a build folder in /tmp); only the record, sdd's
    files and git's folder are walled off. A relative path is checked from every folder a `cd`
    in the command reached, since loops and functions reorder them. False: the person decides."""
    certain = True
    for write in finding.writes:
        for base in bases(write.cwd, write.path, finding.cwds):
            target = str(Path(start) / base / write.path)
            problem = write_path_problem(root, target, whole_tree=write.whole_tree)
            if problem is None or problem.code != "protected_path":
                continue
            if write.soft and _holds_only(root, target):
                certain = False  # e.g. `find . -name '*.pyc' -delete`: the person decides
                continue
            return Rejection(problem.code, f"the command writes {write.path}: {problem.message}")
    return certain


def copies_allowed(
    root: Path, finding: ShellFinding, start: str = ".", scan_limit: int = SOURCE_SCAN_LIMIT
) -> Rejection | bool:
    """A copy of a role or skill file is a new one wherever it lands, and a move takes the
    person's away: both count as writing it. A folder is searched for them when it is moved out
    of the product or lands in it (or in $SDD_HOME): `cp -r . /tmp/build` of a product that holds
    roles is fine, `cp -r /tmp/pack src/pack` of a pack is not. False: the person decides."""
    certain = True
    for source in finding.sources:
        for base in bases(source.cwd, source.path, finding.cwds):
            target = str(Path(start) / base / source.path)
            problem = _rule_problem(root, target)
            if problem is None and _lands_or_leaves(root, source, target, finding.cwds, start):
                found = _rule_file_within(root / target, scan_limit)
                if found == "":
                    certain = False  # too big to search: the person decides
                elif found is not None:
                    problem = _rule_problem(root, found)
            if problem is not None:
                return Rejection(
                    problem.code, f"the command copies {source.path}: {problem.message}"
                )
    return certain


def _lands_or_leaves(root: Path, source: Source, target: str, cwds: set[str], start: str) -> bool:
    destination = source.destination
    lands = destination is None or any(
        _where_rules_count(root, str(Path(start) / b / destination))
        for b in bases(source.cwd, destination, cwds)
    )
    return lands or (source.moved and _where_rules_count(root, target))


def touches_allowed(root: Path, finding: ShellFinding, start: str = ".") -> bool:
    """False when a program nobody vouches for is handed part of the record."""
    for touch in finding.touches:
        for base in bases(touch.cwd, touch.path, finding.cwds):
            problem = write_path_problem(root, str(Path(start) / base / touch.path))
            if problem is not None and problem.code == "protected_path":
                return False
    return True


def bases(cwd: str, path: str, cwds: set[str]) -> set[str]:
    """The folders a path written in a command may be read from: every folder a `cd` reached."""
    return {"."} if path.startswith("/") else {cwd} | cwds


def _holds_only(root: Path, value: str) -> bool:
    """The path is the product folder (or above it), a folder above a rule folder or above
    `$SDD_HOME`: it holds protected files but is not one of them."""
    resolved = (root / value).resolve()
    base = root.resolve()
    if resolved == base or resolved in base.parents:
        return True
    if resolved in _resolved_sdd_home().parents:
        return True
    return any(resolved in (base / folder).parents for folder in RULE_FOLDERS)


def inside(root: Path, value: Any) -> Path | None:
    if not isinstance(value, str) or not value:
        return None
    resolved = (root / value).resolve()
    base = root.resolve()
    if resolved != base and base not in resolved.parents:
        return None
    return resolved


def write_path_problem(root: Path, value: Any, whole_tree: bool = False) -> Rejection | None:
    """Why a write to `value` is forbidden, or None. `whole_tree`: the write may take everything
    under the path too (rm -r, find -delete), so the product folder itself is protected.
    Role and skill files and `$SDD_HOME` are protected wherever they are, so a shell write
    outside the product is refused there too."""
    resolved = inside(root, value)
    if resolved is None:
        rule = _rule_problem(root, value, whole_tree)
        if rule is not None:
            return rule
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
            if first.casefold() in RECORD_FOLDERS:
                top = first
    if whole_tree and not top:
        return Rejection("protected_path", f"{value} holds the person's record and sdd's files")
    if top.casefold() in RECORD_FOLDERS or _case_alias(root, top):
        return Rejection(
            "protected_path",
            f"{value} is part of the person's record or sdd's own files; no agent writes there",
        )
    if len(relative.parts) == 1 and _is_dotenv(relative.parts[0]):
        return Rejection(
            "protected_path",
            f"{value} holds the product's secrets; no agent writes, moves or deletes it",
        )
    for target in rule_link_targets(root.resolve()):
        if resolved == target or _within(resolved, target):
            return Rejection(
                "protected_path",
                f"{value} defines a role or a skill (a rule folder links to it); {_RULES_MESSAGE}",
            )
    for prefix in python_environments(root.resolve()):
        if (
            resolved == prefix
            or prefix in resolved.parents
            or (whole_tree and _within(prefix, resolved))
        ):
            return Rejection(
                "protected_path",
                f"{value} is inside the Python environment sdd runs from; code written there "
                "would run in the person's next sdd command",
            )
    return _rule_problem(root, value, whole_tree)


_RULES_MESSAGE = "rules come only from the person, so no agent writes there"


def _is_dotenv(name: str) -> bool:
    folded = name.casefold()
    return folded == ".env" or folded.startswith(".env.")


def _rule_problem(root: Path, value: Any, whole_tree: bool = False) -> Rejection | None:
    """Why `value` is a file that defines roles, skills or their rules, or None: any `ROLE.md`
    or `SKILL.md` (in any case, wherever it is), anything in a rule folder of the product, and
    anything in `$SDD_HOME`. With `whole_tree`, a folder that holds a rule folder or `$SDD_HOME`
    is one too (`rm -rf .github` takes `.github/skills`)."""
    if not isinstance(value, str) or not value:
        return None
    base = root.resolve()
    lexical = Path(os.path.normpath(base / value))
    resolved = (base / value).resolve()  # where every symlink on the way leads
    for path in (lexical, resolved):
        if path.name.casefold() in _RULE_NAMES:
            return Rejection(
                "protected_path", f"{value} defines a role or a skill; {_RULES_MESSAGE}"
            )
        if path.name.casefold() in _AGENT_NAMES:
            return Rejection(
                "protected_path",
                f"{value} gives another agent or git its rules; {_RULES_MESSAGE}",
            )
    home = _resolved_sdd_home()
    for path in (lexical, resolved):
        if _within(path, home) or (whole_tree and _within(home, path)):
            return Rejection(
                "protected_path", f"{value} is part of the person's sdd home; {_RULES_MESSAGE}"
            )
    for path in (lexical, resolved):
        if path != base and base not in path.parents:
            continue
        parts = tuple(p.casefold() for p in path.relative_to(base).parts)
        hooks = hooks_folder(base)
        folders = [*zip(RULE_FOLDERS, _RULE_FOLDER_PARTS, strict=True)]
        if hooks:
            folders.append((hooks, tuple(p.casefold() for p in hooks.split("/"))))
        for folder, rule in folders:
            inside = parts[: len(rule)] == rule
            above = whole_tree and rule[: len(parts)] == parts and os.path.lexists(base / folder)
            if inside or above:
                return Rejection(
                    "protected_path",
                    f"{value} is in {folder}/, which holds rules for roles or other agents, "
                    f"or code that git or CI runs; {_RULES_MESSAGE}",
                )
    return None


def _where_rules_count(root: Path, value: str) -> bool:
    """The path is in the product or in `$SDD_HOME`, where a role or skill file is picked up."""
    return inside(root, value) is not None or _within(
        (root / value).resolve(), _resolved_sdd_home()
    )


def in_sdd_home(value: str) -> bool:
    """The path (as written, or where its links lead) is in `$SDD_HOME`, the person's own packs
    and templates: rules for every product."""
    home = _resolved_sdd_home()
    return _within(Path(os.path.normpath(value)), home) or _within(Path(value).resolve(), home)


def _resolved_sdd_home() -> Path:
    return sdd_home().expanduser().resolve()


def _within(path: Path, folder: Path) -> bool:
    """`path` is `folder` or inside it, compared case-folded: on a case-insensitive file system
    `~/.SDD` is `~/.sdd`."""
    inner, outer = str(path).casefold(), str(folder).casefold().rstrip("/")
    return inner == outer or inner.startswith(outer + "/")


def _rule_file_within(folder: Path, scan_limit: int) -> str | None:
    """The first role, skill or agent rule file under `folder` (a folder copied, moved or linked
    whole), as an absolute path; None when it holds none or is no folder; "" when it is too big
    to search."""
    if not folder.is_dir():
        return None
    seen = 0
    for top, dirs, files in os.walk(folder, followlinks=False):
        seen += len(dirs) + len(files)
        if seen > scan_limit:
            return ""
        for name in files + dirs:
            if name.casefold() in _RULE_NAMES or name.casefold() in _AGENT_NAMES:
                return str(Path(top) / name)
    return None


def _case_alias(root: Path, top: str) -> bool:
    # On a case-insensitive file system `Memory/` is `memory/`.
    if not top:
        return False
    candidate = root / top
    return any(
        os.path.exists(root / name) and os.path.samefile(candidate, root / name)
        for name in RECORD_FOLDERS
        if candidate.exists()
    )
