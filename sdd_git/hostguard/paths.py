"""Which sdd root a path is in, and whether another agent may write it there.

A host's agent works wherever it likes, so the root is found from each path itself (as written,
and where its links lead), not only from the folder the agent is in: `Edit /other/product/memory/x`
from `/tmp` is refused all the same. Inside a root the runner's own rules hold
(`sdd_git.protected`). Outside any, only git's folder (`.git/`, any repository's) and the
person's sdd home (`$SDD_HOME`, her packs and templates) are refused."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from sdd_git.hostguard.call import Answer, ask, deny

# `typing` is never imported at run time here: `sdd guard` runs this before each tool call of
# another agent (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.shellpolicy.findings import ShellFinding

CONFIG = os.path.join(".sdd", "config.yaml")
# The host's own settings (`call.HostCall.host_files`): one call is checked per process, and
# every path rule below reads them, so they are set once, before the check.
_HOST_FILES: list[str] = []


def host_writes_none_of(files: tuple[str, ...]) -> None:
    _HOST_FILES[:] = [os.path.realpath(f) for f in files] + [os.path.normpath(f) for f in files]


@functools.lru_cache(maxsize=256)
def root_above(path: str) -> str | None:
    """The first folder at or above `path` that holds `.sdd/config.yaml`, resolved."""
    folder = path
    while True:
        if os.path.isfile(os.path.join(folder, CONFIG)):
            return os.path.realpath(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def roots_of(path: str) -> list[str]:
    """The sdd roots an absolute path lies in: above it as written, and above where it leads."""
    found: list[str] = []
    for candidate in (os.path.normpath(path), os.path.realpath(path)):
        root = root_above(candidate)
        if root is not None and root not in found:
            found.append(root)
    return found


def relative_to(root: str, path: str) -> str:
    """`path` (absolute, as written) relative to `root` when it lies there, its `..` and links
    kept for the rules to resolve; else as it is."""
    for candidate in (path, os.path.join(os.path.realpath(os.path.dirname(path)), _last(path))):
        if candidate == root:
            return "."
        if candidate.startswith(root.rstrip("/") + "/"):
            return candidate[len(root.rstrip("/")) + 1 :]
    return path


def _last(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or "."


def start_in(root: str, cwd: str) -> str:
    """The folder a command starts in, as the rules read it: relative to the root, or absolute."""
    real = os.path.realpath(cwd)
    if real == root:
        return "."
    if real.startswith(root.rstrip("/") + "/"):
        return real[len(root.rstrip("/")) + 1 :]
    return real


def absolute(cwd: str, path: str) -> str:
    return path if path.startswith("/") else os.path.join(os.path.realpath(cwd), path)


def write_problem(cwd: str, path: str, whole_tree: bool = False) -> str | None:
    """Why another agent may not write `path` (as given, from `cwd`), or None."""
    from sdd_git.protected import write_path_problem

    if "\x00" in path:
        return "the path holds a NUL byte, which no path may"
    full = absolute(cwd, path)
    for root in roots_of(full):
        problem = write_path_problem(Path(root), relative_to(root, full), whole_tree=whole_tree)
        if problem is not None and problem.code == "protected_path":
            return problem.message
    anywhere = anywhere_problem(full)
    return f"{path} {anywhere}" if anywhere is not None else None


def anywhere_problem(full: str) -> str | None:
    """What is refused in or out of an sdd root: git's folder and `$SDD_HOME`."""
    from sdd_git.protected import in_sdd_home

    for candidate in (os.path.normpath(full), os.path.realpath(full)):
        if any(part.casefold() == ".git" for part in candidate.split("/")):
            return "is inside git's own folder (.git/), where no agent writes"
    if in_sdd_home(full):
        return "is in the person's sdd home, whose packs give roles their rules"
    real = os.path.realpath(full)
    for candidate in (os.path.normpath(full), real):
        for mine in _HOST_FILES:
            if candidate == mine or candidate.startswith(mine.rstrip("/") + "/"):
                return "is the host's own settings, where a hook or rule could turn sdd guard off"
    for folder in _python_folders():
        if real == folder or real.startswith(folder.rstrip("/") + "/"):
            return (
                "is in the Python environment sdd runs from (or a folder Python loads code from "
                "at start): code written there would run inside sdd guard itself"
            )
    return None


@functools.lru_cache(maxsize=1)
def _python_folders() -> tuple[str, ...]:
    """sdd's own interpreter prefix and every folder Python loads code from at start (site
    folders, `.pth` files, sitecustomize): the guard's own code, and what runs before it."""
    import sys

    from sdd_git.sandbox.policy import site_folders

    found = {os.path.realpath(sys.prefix)}
    found.update(str(folder) for folder in site_folders())
    return tuple(sorted(found))


def shell_problem(cwd: str, finding: ShellFinding) -> Answer | None:
    """What a command line writes, copies or hands to programs, checked in every sdd root it
    reaches: a refusal, an ask (the person decides), or None."""
    from sdd_git.protected import bases, copies_allowed, touches_allowed, writes_allowed

    roots: list[str] = []
    written: list[tuple[str, str]] = []  # (absolute as written, as shown)
    places = [(w.cwd, w.path) for w in finding.writes]
    count = len(places)
    places += [(t.cwd, t.path) for t in finding.touches]
    for source in finding.sources:
        places.append((source.cwd, source.path))
        if source.destination is not None:
            places.append((source.cwd, source.destination))
    for index, (where, path) in enumerate(places):
        for base in bases(where, path, finding.cwds):
            full = absolute(cwd, os.path.join(base, path))
            if index < count:
                written.append((full, path))
            roots.extend(r for r in roots_of(full) if r not in roots)
    unsure = False
    for root in roots:
        start = start_in(root, cwd)
        for verdict in (
            writes_allowed(Path(root), finding, start),
            copies_allowed(Path(root), finding, start),
        ):
            if not isinstance(verdict, bool):
                return deny(verdict.message)
            unsure = unsure or not verdict
        unsure = unsure or not touches_allowed(Path(root), finding, start)
    for full, shown in written:
        problem = anywhere_problem(full)
        if problem is not None:
            return deny(f"the command writes {shown}, which {problem}")
    if unsure:
        return ask(
            "the command may change part of the person's record or sdd's files (it hands them to "
            "a program sdd cannot vouch for, or deletes a folder that holds them)"
        )
    return None
