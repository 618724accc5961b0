"""sdd's own state folders, `.sdd/local` and `.sdd/role-runs`: hers alone, or not used at all.

Her conversations, stops, events, locks, run logs and trust ledger live there. A folder that
came with the repository as a link (`.sdd/local -> /tmp/x`: git tracks a link, and the ignore
line `.sdd/local/` matches only a folder), one another user owns, or one others may write in,
would put that state where someone else reads or plants it. sdd then refuses to use it and says
how to fix it, and when it makes the folder itself it makes it hers alone, whatever the umask.

Every write of sdd's own state makes its folders through `make_folder` (the atomic writes and
the locks do it for their callers), so the check runs wherever the state is first used.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from sdd_git.errors import RecordError
from sdd_git.paths import display

STATE_FOLDERS = (".sdd/local", ".sdd/role-runs")
_NAMES = frozenset(name.split("/")[1] for name in STATE_FOLDERS)


class StateFolderError(RecordError):
    """A state folder that is not hers alone: a link, another user's, or open to others."""


def state_folder_of(path: Path) -> Path | None:
    """The state folder (`ROOT/.sdd/local` or `ROOT/.sdd/role-runs`) that holds `path`, or
    None when `path` is in neither."""
    parts = path.parts
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == ".sdd" and parts[index + 1] in _NAMES:
            return Path(*parts[: index + 2])
    return None


def problem(folder: Path) -> tuple[str, str] | None:
    """Why `folder` cannot hold her state and how to fix it, or None when it can (or when
    it is not there yet). The `.sdd` folder holding it must be a real folder too."""
    shown = display(folder)
    parent = folder.parent
    try:
        above = os.lstat(parent)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(above.st_mode):
        return (
            f"{display(parent)} is a link; sdd keeps its settings and state only in a folder "
            "of its own inside the product",
            f"remove the link (rm {display(parent)}; if git tracks it, git rm --cached "
            f"{display(parent)} first), then run sdd init",
        )
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        target = ""
        with contextlib.suppress(OSError):
            target = f" (to {os.readlink(folder)})"
        return (
            f"{shown} is a link{target}; sdd keeps your conversations, stops, events and run "
            "logs only in a folder of its own inside the product",
            f"remove the link: rm {shown} (if git tracks it: git rm --cached {shown}); sdd "
            "makes the folder again",
        )
    if not stat.S_ISDIR(info.st_mode):
        return (
            f"{shown} is not a folder; sdd keeps its state in a folder of its own there",
            f"remove it: rm {shown}; sdd makes the folder again",
        )
    if info.st_uid != os.geteuid():
        return (
            f"{shown} belongs to another user (uid {info.st_uid}); sdd keeps your state only "
            "in a folder that is yours",
            f"move it away (mv {shown} {shown}.not-mine) and sdd makes its own",
        )
    if info.st_mode & 0o022:
        who = "your group and others" if info.st_mode & 0o002 else "your group"
        return (
            f"{shown} can be written by {who} (mode {stat.S_IMODE(info.st_mode):o}); sdd keeps "
            "your state only in a folder that you alone can write",
            f"chmod go-w {shown}",
        )
    return None


IGNORE_ALL = "# sdd's own state: never committed, whatever another .gitignore says\n*\n"


def ensure(folder: Path) -> None:
    """Refuse a state folder that is not hers alone; make it, hers alone, when it is missing.

    It holds a `.gitignore` of its own that ignores everything in it: the closest ignore file
    wins in git, so a merged `.sdd/.gitignore` with `!local/` cannot turn her ledger, stops and
    run logs into files her next `git add -A` commits."""
    found = problem(folder)
    if found is None and not os.path.lexists(folder):
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            # 0700 whatever the umask: under 002 a plain mkdir would let her group write.
            os.mkdir(folder, 0o700)
        found = problem(folder)  # a link planted in between is refused like any other
    if found is not None:
        raise StateFolderError(found[0], hint=found[1])
    ignore = folder / ".gitignore"
    if not os.path.lexists(ignore):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with contextlib.suppress(FileExistsError):
            fd = os.open(ignore, flags, 0o644)
            try:
                os.write(fd, IGNORE_ALL.encode())
            finally:
                os.close(fd)


def check(path: Path) -> None:
    """Refuse `path` when the state folder holding it is not hers alone (nothing is made)."""
    folder = state_folder_of(path)
    if folder is not None:
        found = problem(folder)
        if found is not None:
            raise StateFolderError(found[0], hint=found[1])


def make_folder(folder: Path) -> None:
    """`folder` and its parents made, as `mkdir(parents=True, exist_ok=True)` does. Inside a
    state folder: one that is hers alone, and no folder on the way a link (a merge can bring
    `.sdd/local/stops -> /tmp/x` inside a real `.sdd/local`)."""
    state = state_folder_of(folder)
    if state is None:
        folder.mkdir(parents=True, exist_ok=True)
        return
    ensure(state)
    current = state
    for name in folder.parts[len(state.parts) :]:
        current = current / name
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir(current)
            info = os.lstat(current)
        if not stat.S_ISDIR(info.st_mode):
            what = "a link" if stat.S_ISLNK(info.st_mode) else "not a folder"
            shown = display(current)
            raise StateFolderError(
                f"{shown} is {what}; sdd keeps your state only in folders of its own, and "
                "never writes it through a link (it came with the repository, or someone "
                "else put it there)",
                hint=f"remove it: rm {shown} (if git tracks it: git rm --cached {shown}); "
                "sdd makes the folder again",
            )


def append(path: Path, data: bytes, sync: bool = True) -> None:
    """Append `data` to the state file `path` (made, 0600, if missing), fsync'd when `sync`:
    never through a link at its name, never into a FIFO, only in a folder that is hers alone."""
    make_folder(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
            raise StateFolderError(
                f"{display(path)} is a link or not a regular file; sdd writes its state only "
                "into regular files of its own",
                hint=f"remove it: rm {display(path)}",
            ) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StateFolderError(
                f"{display(path)} is not a regular file; sdd writes its state only into "
                "regular files of its own",
                hint=f"remove it: rm {display(path)}",
            )
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """A file of sdd's state, read with no link followed below the product that holds the
    state folder, from a state folder that is hers alone (FileNotFoundError when missing)."""
    from sdd_git import beneath

    folder = state_folder_of(path)
    if folder is None:
        raise ValueError(f"{path} is not in a state folder")
    check(path)
    return beneath.read_bytes(folder.parents[1], path, limit)


def read_text(path: Path) -> str:
    return read_bytes(path).decode("utf-8")
