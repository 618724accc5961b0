"""`sdd hooks install | uninstall | status`: sdd's git hooks, with the manners of careful hook
managers, living beside pre-commit, lefthook and husky.

- A file sdd writes carries a marker line with the sha256 of the rest of the file
  (events/hookfile.py), so sdd knows its own files wherever another manager moved them, and
  knows when someone has changed one since: only an unchanged file of sdd's is ever replaced or
  removed.
- A hook that was there before is kept: renamed `HOOK.before-sdd`, run first by sdd's hook with
  the same arguments and stdin, its exit code kept. Uninstall renames it back, so the hooks
  folder ends byte for byte as it was. sdd never chains its own hook.
- Where git runs a manager's hook, sdd's goes where that manager runs or keeps the hook it
  found (events/hookmanagers.py); `status` says which, and whether it fires.
- `core.hooksPath` set elsewhere: plain `install` writes nothing and names `--path`, which
  installs into that folder, or prints the lines to add where the manager rewrites it (husky).
- Everything that could refuse is checked before the first write.

The hooks themselves are POSIX sh files in the top-level `hooks/` (package `sdd_git.hooks`); the
interpreter that starts the worker is written into the installed copy (`SDD_PYTHON=...`)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.errors import SddError
from sdd_git.events import hookwords
from sdd_git.events.hookfile import (
    CHAINED_SUFFIX,
    HOOK_NAMES,
    HUSKY,
    LEFTHOOK,
    MARKER,
    SDD,
    SDD_CHANGED,
    chained_path,
    kind,
    read,
    render,
    shipped_dir,
    signature,
)
from sdd_git.events.hookmanagers import Folders, Slot, slot
from sdd_git.root import Root

__all__ = ["HOOK_NAMES", "MARKER", "render", "shipped_dir", "signature"]

REFERENCE_TRANSACTION_SINCE = (2, 28)
_KEPT_SUFFIXES = ("", ".legacy", ".old")  # where sdd's file can be: its own name, or a manager's

# What sdd's hook file is, where it is or goes.
INSTALLED = "installed"  # sdd's, unchanged, as `install` would write it now
OUTDATED = "out of date"  # sdd's, unchanged, from another version or interpreter
MODIFIED = "modified by someone else"  # sdd's marker, but the text changed since
NOT_INSTALLED = "not installed"
OTHER = "another hook"  # not sdd's (install chains it)
UNSUPPORTED = "not supported by this git"
_SDDS = (INSTALLED, OUTDATED, MODIFIED)


@dataclass(frozen=True)
class HookStatus:
    name: str
    path: Path  # sdd's file: where it is, or where `install` puts it
    state: str  # INSTALLED, OUTDATED, MODIFIED, NOT_INSTALLED, OTHER, UNSUPPORTED
    legacy: Path | None  # the hook sdd's runs first (`HOOK.before-sdd`) when there is one
    slot: Slot
    stale: tuple[Path, ...] = ()  # sdd's files elsewhere, that git does not run
    hooks_path: bool = False  # core.hooksPath sends git elsewhere (`install --path`)

    @property
    def fires(self) -> bool:
        """A git move of this kind runs sdd's hook now."""
        return self.state in _SDDS and self.slot.calls

    @property
    def words(self) -> str:
        return hookwords.status(self)

    def as_json(self) -> dict[str, Any]:
        return {
            "hook": self.name,
            "path": str(self.path),
            "state": self.state,
            "legacy": None if self.legacy is None else str(self.legacy),
            "git_runs": str(self.slot.git_runs),
            "manager": self.slot.manager,
            "fires": self.fires,
            "called_from": None if self.slot.config is None else str(self.slot.config),
            "lines": self.slot.lines if self.state != UNSUPPORTED else None,
            "stale": [str(p) for p in self.stale],
            "words": self.words,
        }


@dataclass(frozen=True)
class Status:
    folder: Path
    hooks: tuple[HookStatus, ...]
    hooks_path: str | None  # core.hooksPath, when it sends git elsewhere
    main: str | None  # from the index
    listening: tuple[str, ...]  # from the index
    runs_from: Path | None = None  # the folder git runs hooks from

    def as_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "runs_from": str(self.runs_from or self.folder),
            "hooks": [h.as_json() for h in self.hooks],
            "core_hooks_path": self.hooks_path,
            "main": self.main,
            "listening": list(self.listening),
        }


@dataclass(frozen=True)
class Change:
    name: str
    path: Path
    words: str  # what was done, or why nothing was
    lines: str | None = None  # what to add to `config` so that the manager runs sdd's hook
    config: Path | None = None
    manager: str | None = None  # whose file `config` is


@dataclass(frozen=True)
class Place:
    """Where the hooks go, and what git this is."""

    folder: Path  # the repository's own hooks folder (the common dir's, shared by worktrees)
    git_version: tuple[int, ...]
    hooks_path: str | None  # core.hooksPath when it names another folder
    hooks_path_scope: str | None  # local, global, system, worktree, command
    runs_from: Path | None = None  # the folder git runs hooks from (default: `folder`)
    top: Path | None = None  # the top of the working tree

    def supports(self, name: str) -> bool:
        return name != "reference-transaction" or self.git_version >= REFERENCE_TRANSACTION_SINCE

    @property
    def folders(self) -> Folders:
        top = self.top or self.folder.parent.parent
        return Folders(self.runs_from or self.folder, self.folder, top, self.folder.parent)


def _git(root: Root, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args],
            cwd=root.path,
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise SddError("git is not installed or not on PATH", hint="install git") from None


def place(root: Root) -> Place:
    """The hooks folders of the repository whose working tree top is the sdd root."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise SddError(
            f"{root.path} is not inside a git working tree: git hooks need a repository",
            hint="run `git init` there first (sdd init does it too)",
        )
    if Path(top.stdout.strip()).resolve() != root.path.resolve():
        raise SddError(
            f"the sdd root {root.path} is not the top of its git working tree "
            f"({top.stdout.strip()}): git runs hooks at the top, where they look for .sdd/",
            hint="make the sdd root the repository's top folder to use sdd's git hooks",
        )
    common = _git(root, "rev-parse", "--git-common-dir").stdout.strip()
    folder = (root.path / common).resolve() / "hooks"
    hooks_path = scope = None
    runs_from = folder
    configured = _git(root, "config", "--show-scope", "--get", "core.hooksPath")
    if configured.returncode not in (0, 1):  # git before 2.26 has no --show-scope
        configured = _git(root, "config", "--get", "core.hooksPath")
        configured.stdout = f"config\t{configured.stdout}" if configured.stdout.strip() else ""
    if configured.returncode == 0 and configured.stdout.strip():
        scope, _, value = configured.stdout.strip().partition("\t")
        given = Path(os.path.expanduser(value))
        target = (given if given.is_absolute() else root.path / given).resolve()
        if target != folder:
            hooks_path, runs_from = value, target
    return Place(folder, _git_version(root), hooks_path, scope, runs_from, root.path.resolve())


def _git_version(root: Root) -> tuple[int, ...]:
    words = _git(root, "--version").stdout.split()  # "git version 2.39.5"
    numbers = []
    for part in (words[2] if len(words) > 2 else "0").split("."):
        digits = "".join(c for c in part if c.isdigit())
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)


def _refuse_hooks_path(where: Place) -> None:
    if where.hooks_path is None:
        return
    flag = {"global": " --global", "system": " --system", "worktree": " --worktree"}.get(
        where.hooks_path_scope or "", ""
    )
    raise SddError(
        f"core.hooksPath is set to {where.hooks_path} ({where.hooks_path_scope} config): git "
        f"runs the hooks there, not in {where.folder}, and sdd writes into a folder another "
        "tool may manage only when asked to; nothing was written",
        hint=f"run `sdd hooks install --path` to install into {where.hooks_path} (where a "
        "manager rewrites that folder, as husky does, it prints the lines to add to the "
        f"manager's own file instead); or unset it with `git config{flag} --unset "
        "core.hooksPath` and run `sdd hooks install` again",
    )


def hook_state(where: Place, name: str, python: str | None = None) -> HookStatus:
    found = slot(where.folders, name)
    path = found.path
    data = read(path)
    chained = chained_path(path, name, data)
    # What sdd's hook runs first; never sdd's own (an earlier version's copy is stale instead).
    own = kind(read(chained)) in (SDD, SDD_CHANGED)
    legacy = chained if os.path.lexists(chained) and not own else None
    stale = _stale(where, name, path)
    hooks_path = where.hooks_path is not None
    if not where.supports(name):
        return HookStatus(name, path, UNSUPPORTED, legacy, found, stale, hooks_path)
    if not os.path.lexists(path):
        state = NOT_INSTALLED
    else:
        state = {SDD: INSTALLED, SDD_CHANGED: MODIFIED}.get(kind(data), OTHER)
        if state == INSTALLED and data != render(name, python).encode("utf-8"):
            state = OUTDATED
    if state == OTHER:  # a hook to chain: sdd's will run it from HOOK.before-sdd
        kept = path.with_name(name + CHAINED_SUFFIX)
        legacy = kept if os.path.lexists(kept) else None
    return HookStatus(name, path, state, legacy, found, stale, hooks_path)


def _candidates(where: Place, name: str) -> list[Path]:
    folders = dict.fromkeys([where.folders.runs_from, where.folder])
    return [folder / (name + suffix) for folder in folders for suffix in _KEPT_SUFFIXES]


def _stale(where: Place, name: str, active: Path) -> tuple[Path, ...]:
    """sdd's files, in any place sdd or a manager puts them, that are not where it fires from."""
    found = []
    for path in _candidates(where, name):
        if path != active and kind(read(path)) in (SDD, SDD_CHANGED):
            found.append(path)
    return tuple(found)


def status(root: Root) -> Status:
    from sdd_git.routines.hookindex import read_index

    where = place(root)
    main, listening = read_index(root)
    hooks = tuple(hook_state(where, name) for name in HOOK_NAMES)
    return Status(where.folder, hooks, where.hooks_path, main, tuple(listening), where.runs_from)


def install(root: Root, python: str | None = None, into_hooks_path: bool = False) -> list[Change]:
    """Write sdd's hooks where git, or the hook manager git runs, will run them, chaining any
    hook already there. Run again, it rewrites only what changed; it never chains its own hook.
    `python` is the interpreter the hooks start the worker with (default: the one running sdd
    now). `into_hooks_path`: core.hooksPath names the folder to install into."""
    from sdd_git.routines.hookindex import write_index
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    where = place(root)
    if not into_hooks_path:
        _refuse_hooks_path(where)
    states = [hook_state(where, name, python) for name in HOOK_NAMES]
    for hook in states:  # every refusal before the first write
        _refuse_to_install(hook)
    changes = []
    for hook in states:
        changes.append(_install_one(where, hook, python))
    write_index(root)
    return changes


def _refuse_to_install(hook: HookStatus) -> None:
    if hook.state == UNSUPPORTED:
        return
    chained = hook.path.with_name(hook.name + CHAINED_SUFFIX)
    if hook.state == MODIFIED:
        raise SddError(
            f"{hook.path} was written by sdd and has been changed since: sdd will not overwrite "
            "it, and will not chain it (it would run sdd twice); nothing was written",
            hint=f"move your additions to a file of their own, {chained.name} (if there is "
            f"none) or elsewhere, delete {hook.path}, and run `sdd hooks install` again",
        )
    if hook.state == OTHER and hook.slot.manager in (LEFTHOOK, HUSKY):
        raise SddError(
            f"{hook.path} is a hook git does not run now ({hookwords.runner(hook.slot)}), and "
            "it is where sdd's hook would go: sdd will not start running it; nothing was written",
            hint=f"move {hook.path} away (or delete it), and run `sdd hooks install` again",
        )
    if hook.state == OTHER and os.path.lexists(chained) and not _same_file(hook.path, chained):
        raise SddError(
            f"{hook.path} and {chained} both exist and neither is sdd's: sdd keeps an existing "
            f"hook as {chained.name}, and will not overwrite it; nothing was written",
            hint=f"merge the two into {hook.path.name} (or remove one), then run `sdd hooks "
            "install` again",
        )
    if hook.state == NOT_INSTALLED and hook.legacy is not None:
        raise SddError(
            f"{hook.legacy} is there without sdd's hook ({hook.path}): git does not run it "
            "now, and sdd will not start running it; nothing was written",
            hint=f"rename it to {hook.path.name} (sdd then chains it) or delete it, and run "
            "`sdd hooks install` again",
        )
    old_chain = hook.legacy is not None and hook.legacy.name != chained.name
    if old_chain and os.path.lexists(chained):
        raise SddError(
            f"{hook.path} is sdd's hook from an earlier version, which runs {hook.legacy}; and "
            f"{chained} is there too: sdd will not overwrite either; nothing was written",
            hint=f"merge the two into {chained.name} (or remove one), then run `sdd hooks "
            "install` again",
        )


def _same_file(one: Path, other: Path) -> bool:
    """The two names of an install that stopped between its link and its write."""
    try:
        return os.path.samefile(one, other) if not one.is_symlink() else False
    except OSError:
        return False


def _install_one(where: Place, hook: HookStatus, python: str | None) -> Change:
    if hook.state == UNSUPPORTED:
        version = ".".join(str(n) for n in where.git_version)
        return Change(
            hook.name, hook.path, f"skipped: git {version} has no {hook.name} hook (2.28 and later)"
        )
    removed = _remove_stale(hook)
    if hook.state == INSTALLED:
        return _change(hook, "already installed" + hookwords.chain(hook.legacy) + removed)
    hook.path.parent.mkdir(parents=True, exist_ok=True)
    chained = hook.path.with_name(hook.name + CHAINED_SUFFIX)
    if hook.state == OTHER:
        # The old hook gets its second name before sdd's takes the first, so at no moment does
        # git find no hook there; a rename keeps its bytes and its mode.
        if not os.path.lexists(chained):
            try:
                os.link(hook.path, chained, follow_symlinks=False)
            except OSError:
                os.rename(hook.path, chained)
        _write_executable(hook.path, render(hook.name, python))
        return _change(
            hook,
            f"{hookwords.installed_at(hook)}; the hook that was there is kept as "
            f"{chained.name}, run first, its exit code kept{removed}",
        )
    if hook.legacy is not None and hook.legacy != chained:  # an earlier version's name for it
        os.rename(hook.legacy, chained)
    _write_executable(hook.path, render(hook.name, python))
    done = "updated" if hook.state == OUTDATED else hookwords.installed_at(hook)
    return _change(hook, done + hookwords.chain(chained if hook.legacy else None) + removed)


def _change(hook: HookStatus, words: str) -> Change:
    if hook.slot.calls or hook.slot.lines is None:
        return Change(hook.name, hook.path, words)
    config = hook.slot.config
    words += f"; {hookwords.runner(hook.slot)} runs it once {config} calls it: add the lines below"
    return Change(hook.name, hook.path, words, hook.slot.lines, config, hook.slot.manager)


def _remove_stale(hook: HookStatus) -> str:
    """sdd's own unchanged copies beside the one that fires, that nothing runs: gone."""
    gone = []
    for path in hook.stale:
        if path.parent == hook.path.parent and signature(read(path) or b"") == "intact":
            os.unlink(path)
            gone.append(path.name)
    return f"; removed sdd's unused copy {', '.join(gone)}" if gone else ""


def _write_executable(path: Path, text: str) -> None:
    """Atomically, and executable from the first moment git can see it."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".sdd-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), 0o755)
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def uninstall(root: Root) -> list[Change]:
    """Remove the hooks sdd wrote, unchanged, wherever a manager moved them, and put back the
    ones they chained where sdd's was. A hook that is not sdd's, or that someone changed since
    sdd wrote it, stays where it is."""
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    where = place(root)
    return [_uninstall_one(where, hook_state(where, name)) for name in HOOK_NAMES]


def _uninstall_one(where: Place, hook: HookStatus) -> Change:
    said: list[str] = []
    ordered = [hook.path, *(p for p in _candidates(where, hook.name) if p != hook.path)]
    for path in ordered:
        data = read(path)
        mark = None if data is None else signature(data)
        if mark == "changed":
            said.append(f"{hookwords.at(hook, path)}left: sdd wrote it, but it was changed since")
            if path == hook.path:
                said[-1] += " (remove it yourself)"
        if mark != "intact":
            continue
        chained = chained_path(path, hook.name, data)
        os.unlink(path)
        said.append(f"{hookwords.at(hook, path)}removed")
        if os.path.lexists(chained) and kind(read(chained)) not in (SDD, SDD_CHANGED):
            os.rename(chained, path)
            said[-1] += f"; {chained.name} is {path.name} again"
    kept = hook.path.with_name(hook.name + CHAINED_SUFFIX)
    if not said and hook.state == NOT_INSTALLED and os.path.lexists(kept):
        os.rename(kept, hook.path)  # sdd's hook is gone already: give the old one back
        said.append(f"{kept.name} is {hook.path.name} again")
    if not said:
        said.append("left: not sdd's" if hook.state == OTHER else "not installed")
    elif hook.slot.calls and hook.slot.config is not None and hook.state in _SDDS:
        said.append(f"the lines in {hook.slot.config} that call it do nothing now")
    return Change(hook.name, hook.path, "; ".join(said))
