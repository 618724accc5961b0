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
# What the call being checked brings to every rule below, set once before the check (one call
# is checked per process): the host's own settings (`HostCall.host_files`), and the sdd roots of
# the folder the agent is in and of the host's project, which a path above them would take along
# (`rm -rf ..`).
_HOST_FILES: list[str] = []
_NEAR_ROOTS: list[str] = []


def prepare(cwd: str, project: str | None, host_files: tuple[str, ...]) -> None:
    _HOST_FILES[:] = [os.path.realpath(f) for f in host_files]
    _HOST_FILES.extend(os.path.normpath(f) for f in host_files)
    _NEAR_ROOTS[:] = []
    for folder in (cwd, project):
        for root in roots_of(folder) if folder else ():
            if root not in _NEAR_ROOTS:
                _NEAR_ROOTS.append(root)


def roots_for(full: str) -> list[str]:
    """The roots a path's check reads: its own, and those of where the agent is."""
    return [*roots_of(full), *(r for r in _NEAR_ROOTS if r not in roots_of(full))]


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
    for written in (path, os.path.join(os.path.realpath(os.path.dirname(path)), _last(path))):
        # `/p//memory` is `/p/memory` to the system: its empty steps go, its `..` stay.
        candidate = "/" + "/".join(part for part in written.split("/") if part)
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
    if "\x00" in path:
        return "the path holds a NUL byte, which no path may"
    full = absolute(cwd, path)
    return None if plainly_free(full, whole_tree) else rules_problem(full, path, whole_tree)


def rules_problem(full: str, path: str, whole_tree: bool = False) -> str | None:
    """The rules themselves on `full` (absolute, as written; `path` as shown)."""
    from sdd_git.protected import write_path_problem

    for root in roots_for(full):
        problem = write_path_problem(Path(root), relative_to(root, full), whole_tree=whole_tree)
        if problem is not None and problem.code == "protected_path":
            return problem.message
    anywhere = anywhere_problem(full)
    return f"{path} {anywhere}" if anywhere is not None else None


def anywhere_problem(full: str) -> str | None:
    """What is refused in or out of an sdd root: git's folder, `$SDD_HOME`, the host's own
    settings, and the folders Python loads sdd's (and the guard's) code from."""
    real = os.path.realpath(full)
    for candidate in (os.path.normpath(full), real):
        if any(part.casefold() == ".git" for part in candidate.split("/")):
            return "is inside git's own folder (.git/), where no agent writes"
    for candidate in (os.path.normpath(full), real):
        if _within(candidate.casefold(), _sdd_home().casefold()):
            return "is in the person's sdd home, whose packs give roles their rules"
        if _within(candidate.casefold(), _sdd_config().casefold()):
            return "is the person's own sdd settings, which grant keys and models"
        if any(_within(candidate, mine) for mine in _HOST_FILES):
            return "is the host's own settings, where a hook or rule could turn sdd guard off"
    if any(_within(real, folder) for folder in _python_folders()):
        return (
            "is in the Python environment sdd runs from, sdd's own code or a folder Python "
            "loads code from at start: code written there would run inside sdd guard itself"
        )
    for candidate in (os.path.normpath(full), real):
        if any(_within(candidate, mine) for mine in _git_config()):
            return (
                "is git's own configuration, which can make git run any program (a hooks "
                "folder, a pager, a filter) as the person at her next commit"
            )
    linked = _hard_link_to_protected(real)
    if linked is not None:
        return (
            f"is a hard link to {linked}: writing it changes that file itself, which only the "
            "person changes"
        )
    return None


@functools.lru_cache(maxsize=1)
def _git_config() -> tuple[str, ...]:
    """Every configuration file git reads for the person, wherever the agent works."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git"), "/etc/gitconfig"]
    found += [os.path.join(home, ".config", "git")]
    found += [
        os.environ[n] for n in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM") if os.environ.get(n)
    ]
    return tuple({form for f in found for form in (os.path.normpath(f), os.path.realpath(f))})


def _hard_link_to_protected(real: str) -> str | None:
    """The protected file a file shares its inode with, when it has other hard links: written
    through any of its names, the record's file changes in place, and no path rule sees it. Only
    a file with more than one link costs the search, and those are rare in a product."""
    import stat

    try:
        info = os.lstat(real)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return None
    from sdd_git.sandbox.tables import PROTECTED_IN_PRODUCT

    same = (info.st_dev, info.st_ino)
    places = [os.path.join(root, name) for root in roots_for(real) for name in PROTECTED_IN_PRODUCT]
    places += [*_HOST_FILES, *_git_config()]
    for place in places:
        for current, _dirs, files in (
            os.walk(place) if os.path.isdir(place) else [("", [], [place])]
        ):
            for name in files:
                path = os.path.join(current, name)
                try:
                    other = os.lstat(path)
                except OSError:
                    continue
                if (other.st_dev, other.st_ino) == same and path != real:
                    return path
    return None


def guarded_places() -> list[str]:
    """What is refused outside any product: the person's sdd home, sdd's Python and code, the
    host's own settings and git's configuration for her."""
    return [_sdd_home(), _sdd_config(), *_python_folders(), *_HOST_FILES, *_git_config()]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@functools.lru_cache(maxsize=1)
def _sdd_config() -> str:
    """The folder of her user settings layer (`~/.config/sdd`)."""
    from sdd_git.settings import user_config_file

    return os.path.realpath(str(user_config_file().parent))


@functools.lru_cache(maxsize=1)
def _sdd_home() -> str:
    from sdd_git.sandbox.tables import sdd_home

    return os.path.realpath(os.path.expanduser(str(sdd_home())))


@functools.lru_cache(maxsize=1)
def _python_folders() -> tuple[str, ...]:
    """sdd's own interpreter prefix and every folder Python loads code from at start (site
    folders, `.pth` files, sitecustomize): the guard's own code, and what runs before it."""
    import sys

    from sdd_git.sandbox.tables import site_folders

    found = {os.path.realpath(sys.prefix)}
    found.update(str(folder) for folder in site_folders())
    # sdd's own package, also where an editable install keeps it outside the environment: the
    # guard runs that code, so an agent that rewrote it would decide its own next call.
    found.add(os.path.dirname(os.path.realpath(sys.modules["sdd_git"].__file__ or ".")))
    return tuple(sorted(found))


# --- what needs no rule at all -----------------------------------------------------------------
# Most paths an agent writes (`src/app.py`, `build/`, `/tmp/x`) are plainly no protected part:
# saying so costs a few stats, where loading the rules costs most of the guard's time. A path is
# plainly free only when none of the rules of sdd_git.protected (and `anywhere_problem`) could
# refuse it; anything else gets the rules themselves. tests/hostguard/test_plainly_free.py holds
# the two to agree.


@functools.lru_cache(maxsize=1)
def _named() -> frozenset[str]:
    """Every name that makes a path part of a protected one, case-folded: the record's and git's
    folders, the first part of each rule folder, the rule files by name, and `.git`."""
    from sdd_git.sandbox.tables import (
        AGENT_FILE_NAMES,
        RECORD_FOLDERS,
        RULE_FILE_NAMES,
        RULE_FOLDERS,
    )

    names = {*RECORD_FOLDERS, *RULE_FILE_NAMES, *AGENT_FILE_NAMES}
    names.update(folder.split("/", 1)[0] for folder in RULE_FOLDERS)
    return frozenset(name.casefold() for name in names)


def plainly_free(full: str, whole_tree: bool = False, copied: bool = False) -> bool:
    """True when no rule could refuse writing `full` (absolute, as written). `whole_tree`: all
    under it may go; `copied`: it is copied or moved from, so a folder is searched for rules."""
    lexical, real = os.path.normpath(full), os.path.realpath(full)
    named = _named()
    for candidate in (lexical, real):
        for part in candidate.split("/"):
            folded = part.casefold()
            if folded in named or folded.startswith(".env"):
                return False
    if copied and os.path.isdir(real):
        return False
    if anywhere_problem(full) is not None:
        return False
    guarded = [_sdd_home(), *_python_folders(), *_HOST_FILES, *_NEAR_ROOTS]
    for root in roots_of(full):
        if not _plain_product(root) or (whole_tree and _within(root, real)):
            return False
    return not (whole_tree and any(_within(folder, real) for folder in guarded))


@functools.lru_cache(maxsize=16)
def _plain_product(root: str) -> bool:
    """The product has no link in a rule folder (the file it leads to is protected, whatever its
    name) and no git configuration that could name a hooks folder inside it."""
    from sdd_git.sandbox.tables import RULE_FOLDERS

    for name in RULE_FOLDERS:
        folder = os.path.join(root, name)
        if os.path.islink(folder):
            return False
        for current, dirs, files in os.walk(folder):
            if any(os.path.islink(os.path.join(current, e)) for e in (*dirs, *files)):
                return False
    return not may_name_hooks(root)


def may_name_hooks(root: str) -> bool:
    """True unless every git configuration git reads here is plainly silent on `hooksPath`: no
    file of them mentions it, and none includes another (sdd_git.sandbox.policy asks git itself
    whenever this says True)."""
    git = os.path.join(root, ".git")
    if not os.path.isdir(git) or os.path.islink(git):
        return True  # a worktree's or a submodule's `.git` file: git knows where it leads
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [os.path.join(git, "config"), os.path.join(git, "config.worktree")]
    files += [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    files += ["/etc/gitconfig"]
    for name in files:
        try:
            with open(name, "rb") as handle:
                text = handle.read(1_000_000).lower()
        except FileNotFoundError:
            continue
        except OSError:
            return True
        if b"hookspath" in text or b"include" in text:
            return True
    return False


def shell_problem(cwd: str, finding: ShellFinding) -> Answer | None:
    """What a command line writes, copies or hands to programs, checked in every sdd root it
    reaches: a refusal, an ask (the person decides), or None."""
    if _all_plainly_free(cwd, finding):
        return None  # nothing written or handed on could be protected: no rule is even loaded
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
            roots.extend(r for r in roots_for(full) if r not in roots)
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


def _all_plainly_free(cwd: str, finding: ShellFinding) -> bool:
    places: list[tuple[str, str, bool, bool]] = []  # (cwd, path, whole tree, copied from)
    for write in finding.writes:
        places.append((write.cwd, write.path, write.whole_tree, False))
    places += [(touch.cwd, touch.path, False, False) for touch in finding.touches]
    for source in finding.sources:
        places.append((source.cwd, source.path, False, True))
        if source.destination is not None:
            places.append((source.cwd, source.destination, False, True))
        else:
            return False
    for where, path, whole_tree, copied in places:
        bases = {"."} if path.startswith("/") else {where} | finding.cwds
        for base in bases:
            full = absolute(cwd, os.path.join(base, path))
            if not plainly_free(full, whole_tree, copied):
                return False
    return True
