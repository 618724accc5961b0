"""`sdd hooks install | uninstall | status`: sdd's git hooks, with the manners of careful hook
managers.

- A file sdd writes carries a marker line with the sha256 of the rest of the file, so sdd knows
  its own files, and knows when someone has changed one since: only an unchanged file of sdd's
  is ever replaced or removed.
- A hook that was there before is kept: renamed `HOOK.legacy`, run first by sdd's hook with the
  same arguments and stdin, its exit code kept. Uninstall renames it back, so the hooks folder
  ends byte for byte as it was. sdd never chains its own hook.
- `core.hooksPath` set elsewhere: sdd writes nothing there and says how to proceed.
- Everything that could refuse is checked before the first write.

The hooks themselves are POSIX sh files in the top-level `hooks/` (package `sdd_git.hooks`); the
interpreter that starts the worker is written into the installed copy (`SDD_PYTHON=...`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.errors import SddError
from sdd_git.root import Root

HOOK_NAMES = ("post-merge", "post-rewrite", "reference-transaction")
MARKER = "# sdd-hook sha256="
LEGACY_SUFFIX = ".legacy"
TEMPLATED_START = "# start templated\n"
TEMPLATED_END = "# end templated\n"
REFERENCE_TRANSACTION_SINCE = (2, 28)

# What a hook file is to sdd.
INSTALLED = "installed"  # sdd's, unchanged, as `install` would write it now
OUTDATED = "out of date"  # sdd's, unchanged, from another version or interpreter
MODIFIED = "modified by someone else"  # sdd's marker, but the text changed since
NOT_INSTALLED = "not installed"
OTHER = "another hook"  # not sdd's (install chains it)
UNSUPPORTED = "not supported by this git"


def shipped_dir() -> Path:
    """Installed: the package sdd_git.hooks. From a source checkout: the top-level hooks/."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "hooks"
    return installed if (installed / "post-merge").is_file() else package.parent / "hooks"


def render(name: str, python: str | None = None) -> str:
    """The hook file `install` writes: the shipped text, this interpreter, and the marker."""
    text = (shipped_dir() / name).read_text(encoding="utf-8")
    before, rest = text.split(TEMPLATED_START, 1)
    _, after = rest.split(TEMPLATED_END, 1)
    interpreter = shlex.quote(python or sys.executable)
    return sign(f"{before}{TEMPLATED_START}SDD_PYTHON={interpreter}\n{TEMPLATED_END}{after}")


def sign(body: str) -> str:
    """Put the marker line, with the sha256 of `body`, right after the shebang."""
    shebang, _, rest = body.partition("\n")
    return f"{shebang}\n{MARKER}{_digest(body)}\n{rest}"


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def signature(data: bytes) -> str | None:
    """ "intact" when the marker's hash matches the rest of the file (sdd wrote it, and nobody
    changed it since), "changed" when there is a marker but the text differs, None when there
    is no marker (not sdd's)."""
    marker = MARKER.encode()
    start = data.find(b"\n" + marker)
    if start < 0:
        return None
    end = data.find(b"\n", start + 1)
    if end < 0:
        return "changed"
    recorded = data[start + 1 + len(marker) : end].decode("ascii", "replace").strip()
    body = data[: start + 1] + data[end + 1 :]
    return "intact" if hashlib.sha256(body).hexdigest() == recorded else "changed"


@dataclass(frozen=True)
class HookStatus:
    name: str
    path: Path
    state: str  # INSTALLED, OUTDATED, MODIFIED, NOT_INSTALLED, OTHER, UNSUPPORTED
    legacy: Path | None  # the chained hook (`HOOK.legacy`) when there is one

    @property
    def words(self) -> str:
        said = self.state
        if self.legacy is not None and self.state in (INSTALLED, OUTDATED, MODIFIED):
            said += f", chains {self.legacy.name} (run first, its exit code kept)"
        elif self.legacy is not None:
            said += f"; {self.legacy.name} is there too"
        if self.state == OUTDATED:
            said += ": run `sdd hooks install` to update it"
        return said

    def as_json(self) -> dict[str, Any]:
        return {
            "hook": self.name,
            "path": str(self.path),
            "state": self.state,
            "legacy": None if self.legacy is None else str(self.legacy),
        }


@dataclass(frozen=True)
class Status:
    folder: Path
    hooks: tuple[HookStatus, ...]
    hooks_path: str | None  # core.hooksPath, when it sends git elsewhere
    main: str | None  # from the index
    listening: tuple[str, ...]  # from the index

    def as_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
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


@dataclass(frozen=True)
class Place:
    """Where the hooks go, and what git this is."""

    folder: Path  # the repository's own hooks folder (the common dir's, shared by worktrees)
    git_version: tuple[int, ...]
    hooks_path: str | None  # core.hooksPath when it names another folder
    hooks_path_scope: str | None  # local, global, system, worktree, command

    def supports(self, name: str) -> bool:
        return name != "reference-transaction" or self.git_version >= REFERENCE_TRANSACTION_SINCE


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
    """The hooks folder of the repository whose working tree top is the sdd root."""
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
    configured = _git(root, "config", "--show-scope", "--get", "core.hooksPath")
    if configured.returncode not in (0, 1):  # git before 2.26 has no --show-scope
        configured = _git(root, "config", "--get", "core.hooksPath")
        configured.stdout = f"config\t{configured.stdout}" if configured.stdout.strip() else ""
    if configured.returncode == 0 and configured.stdout.strip():
        scope, _, value = configured.stdout.strip().partition("\t")
        given = Path(os.path.expanduser(value))
        target = given if given.is_absolute() else root.path / given
        if target.resolve() != folder:
            hooks_path = value
    return Place(folder, _git_version(root), hooks_path, scope)


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
    copies = ", ".join(str(shipped_dir() / n) for n in HOOK_NAMES if where.supports(n))
    raise SddError(
        f"core.hooksPath is set to {where.hooks_path} ({where.hooks_path_scope} config): git "
        f"runs the hooks there, and sdd will not write into a folder another tool manages",
        hint=f"unset it with `git config{flag} --unset core.hooksPath`, then run `sdd hooks "
        f"install` again; or add sdd's hooks to {where.hooks_path} yourself: copy {copies} "
        f"there and set SDD_PYTHON in each to {shlex.quote(sys.executable)}",
    )


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None  # absent, a dangling link, a folder: not sdd's


def hook_state(where: Place, name: str, python: str | None = None) -> HookStatus:
    path = where.folder / name
    legacy = where.folder / f"{name}{LEGACY_SUFFIX}"
    chained = legacy if os.path.lexists(legacy) else None
    if not where.supports(name):
        return HookStatus(name, path, UNSUPPORTED, chained)
    if not os.path.lexists(path):
        return HookStatus(name, path, NOT_INSTALLED, chained)
    data = _read(path)
    mark = None if data is None else signature(data)
    if mark is None:
        state = OTHER
    elif mark == "changed":
        state = MODIFIED
    else:
        state = INSTALLED if data == render(name, python).encode("utf-8") else OUTDATED
    return HookStatus(name, path, state, chained)


def status(root: Root) -> Status:
    from sdd_git.routines.hookindex import read_index

    where = place(root)
    main, listening = read_index(root)
    hooks = tuple(hook_state(where, name) for name in HOOK_NAMES)
    return Status(where.folder, hooks, where.hooks_path, main, tuple(listening))


def install(root: Root, python: str | None = None) -> list[Change]:
    """Write sdd's hooks into the repository's hooks folder, chaining any hook already there.
    Run again, it rewrites only what changed; it never chains its own hook. `python` is the
    interpreter the hooks start the worker with (default: the one running sdd now)."""
    from sdd_git.routines.hookindex import write_index
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    where = place(root)
    _refuse_hooks_path(where)
    states = [hook_state(where, name, python) for name in HOOK_NAMES]
    for hook in states:  # every refusal before the first write
        _refuse_to_install(hook)
    where.folder.mkdir(parents=True, exist_ok=True)
    changes = []
    for hook in states:
        changes.append(_install_one(where, hook, python))
    write_index(root)
    return changes


def _refuse_to_install(hook: HookStatus) -> None:
    if hook.state == MODIFIED:
        raise SddError(
            f"{hook.path} was written by sdd and has been changed since: sdd will not overwrite "
            "it, and will not chain it (it would run sdd twice); nothing was written",
            hint=f"move your additions to a file of their own, {hook.path.name}"
            f"{LEGACY_SUFFIX} (if there is none) or elsewhere, delete {hook.path}, and run `sdd "
            "hooks install` again",
        )
    if hook.state == OTHER and hook.legacy is not None and not _same_file(hook.path, hook.legacy):
        raise SddError(
            f"{hook.path} and {hook.legacy} both exist and neither is sdd's: sdd keeps an "
            f"existing hook as {hook.legacy.name}, and will not overwrite it; nothing was written",
            hint=f"merge the two into {hook.path.name} (or remove one), then run `sdd hooks "
            "install` again",
        )
    if hook.state == NOT_INSTALLED and hook.legacy is not None:
        raise SddError(
            f"{hook.legacy} is there without {hook.path}: git does not run it now, and sdd will "
            "not start running it; nothing was written",
            hint=f"rename it back to {hook.path.name} (sdd then chains it) or delete it, and run "
            "`sdd hooks install` again",
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
    text = render(hook.name, python)
    if hook.state == INSTALLED:
        return Change(hook.name, hook.path, "already installed" + _chain_words(hook.legacy))
    legacy = hook.path.with_name(f"{hook.name}{LEGACY_SUFFIX}")
    if hook.state == OTHER:
        # The old hook gets its second name before sdd's takes the first, so at no moment does
        # git find no hook there; a rename keeps its bytes and its mode.
        if not os.path.lexists(legacy):
            try:
                os.link(hook.path, legacy, follow_symlinks=False)
            except OSError:
                os.rename(hook.path, legacy)
        _write_executable(hook.path, text)
        return Change(
            hook.name,
            hook.path,
            f"installed; the hook that was there is kept as {legacy.name}, run first, its exit "
            "code kept",
        )
    _write_executable(hook.path, text)
    done = "updated" if hook.state == OUTDATED else "installed"
    return Change(hook.name, hook.path, done + _chain_words(hook.legacy))


def _chain_words(legacy: Path | None) -> str:
    return "" if legacy is None else f" (chains {legacy.name})"


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
    """Remove the hooks sdd wrote, unchanged, and put back the ones they chained. A hook that is
    not sdd's, or that someone changed since sdd wrote it, stays where it is."""
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    where = place(root)
    changes = []
    for name in HOOK_NAMES:
        hook = hook_state(where, name)
        legacy = hook.path.with_name(f"{name}{LEGACY_SUFFIX}")
        if hook.state in (INSTALLED, OUTDATED):
            os.unlink(hook.path)
            words = "removed"
            if hook.legacy is not None:
                os.rename(legacy, hook.path)
                words += f"; {legacy.name} is {name} again"
        elif hook.state == MODIFIED:
            words = "left: sdd wrote it, but it was changed since (remove it yourself)"
            if hook.legacy is not None:
                words += f"; {legacy.name} left beside it"
        elif hook.state == OTHER:
            words = "left: not sdd's"
        elif hook.legacy is not None and hook.state == NOT_INSTALLED:
            os.rename(legacy, hook.path)  # sdd's hook is gone already: give the old one back
            words = f"{legacy.name} is {name} again"
        else:
            words = "not installed"
        changes.append(Change(name, hook.path, words))
    return changes
