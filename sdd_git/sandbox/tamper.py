"""The tamper check: where no sandbox holds a command, the protected tree is fingerprinted before
it and compared after it; any change is put back as it was and reported.

A fingerprint is (mode, inode, size, mtime, ctime): a command cannot forge the ctime of a file it
wrote, so a same-size rewrite with its mtime reset still shows. The content needed to put a file
back is read before the command, and kept between commands while its fingerprint holds, so the
check costs a walk of stats when nothing changed."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

Fingerprint = tuple[int, int, int, int, int]
# Inside .git everything that can change what git runs or what the record's history says, objects
# included (git does not re-hash a loose object it reads, so a rewritten one rewrites history).
_GIT_SKIP = frozenset({"logs", "lfs", "rr-cache", "fsmonitor--daemon"})
# A file larger than this is fingerprinted but not kept: a change to it is found and reported,
# but cannot be put back (a big pack file; a record file is never this large).
KEEP_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    fingerprint: Fingerprint
    kind: str  # "file", "dir", "link"
    mode: int
    content: bytes | None = None  # a file's bytes
    target: str | None = None  # a link's target


@dataclass
class Snapshot:
    entries: dict[str, Entry] = field(default_factory=dict)


_CONTENT: dict[str, tuple[Fingerprint, bytes]] = {}  # path -> content seen, across commands


def _fingerprint(st: os.stat_result) -> Fingerprint:
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _listed(folder: Path | str) -> list[os.DirEntry[str]]:
    """The folder's entries; none where it cannot be listed (gone, or not hers to read)."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def _walk(top: Path, out: dict[str, os.stat_result], skip: frozenset[str] = frozenset()) -> None:
    try:
        st = os.lstat(top)
    except FileNotFoundError:
        return
    out[str(top)] = st
    if not stat.S_ISDIR(st.st_mode):
        return
    for child in _listed(top):
        if child.name in skip:
            continue
        try:
            cst = child.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(cst.st_mode):
            _walk(Path(child.path), out)
        else:
            out[child.path] = cst


def _startup_file(name: str) -> bool:
    return name.endswith(".pth") or name in ("sitecustomize.py", "usercustomize.py")


def _stats(paths: Iterable[Path], site: Iterable[Path] = ()) -> dict[str, os.stat_result]:
    found: dict[str, os.stat_result] = {}
    for path in paths:
        _walk(path, found, _GIT_SKIP if path.name == ".git" else frozenset())
    for folder in site:  # only what Python runs at start: .pth files and the customize modules
        if not os.path.lexists(folder):
            _walk(folder, found)  # made by the command: everything in it is new
            continue
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    if _startup_file(entry.name):
                        found[entry.path] = entry.stat(follow_symlinks=False)
        except OSError:
            continue
    return found


def take(paths: Iterable[Path], site: Iterable[Path] = ()) -> Snapshot:
    """Fingerprint the protected tree (and the start-up files of `site` folders) and keep what
    is needed to put it back. A path that does not exist yet is watched too: made, it is new."""
    snapshot = Snapshot()
    for name, st in _stats(paths, site).items():
        fp = _fingerprint(st)
        if stat.S_ISLNK(st.st_mode):
            snapshot.entries[name] = Entry(fp, "link", st.st_mode, target=os.readlink(name))
        elif stat.S_ISDIR(st.st_mode):
            snapshot.entries[name] = Entry(fp, "dir", st.st_mode)
        elif stat.S_ISREG(st.st_mode) and st.st_size > KEEP_LIMIT:
            snapshot.entries[name] = Entry(fp, "file", st.st_mode, content=None)
        elif stat.S_ISREG(st.st_mode):
            cached = _CONTENT.get(name)
            if cached is None or cached[0] != fp:
                try:
                    with open(name, "rb") as handle:
                        cached = (fp, handle.read())
                except OSError:
                    continue
                _CONTENT[name] = cached
            snapshot.entries[name] = Entry(fp, "file", st.st_mode, content=cached[1])
    return snapshot


def changed(before: Snapshot, paths: Iterable[Path], site: Iterable[Path] = ()) -> list[str]:
    """The paths that differ from the snapshot: written, made, removed or replaced."""
    now = _stats(paths, site)
    out: list[str] = []
    for name, entry in before.entries.items():
        st = now.get(name)
        if st is None or _fingerprint(st) != entry.fingerprint:
            if (
                entry.kind == "dir"
                and st is not None
                and stat.S_ISDIR(st.st_mode)
                and (st.st_mode, st.st_ino) == entry.fingerprint[:2]
            ):
                continue  # a folder's times change with its children, which are checked
            out.append(name)
    # A new git object changes nothing by itself (objects are named by their content).
    out.extend(name for name in now if name not in before.entries and "/.git/objects/" not in name)
    return sorted(out)


def restore(before: Snapshot, names: list[str]) -> list[str]:
    """Put every changed path back as the snapshot holds it; remove what was not there. Gives
    back the paths it could not put back (a file too large to keep)."""
    lost = [
        n for n in names if (e := before.entries.get(n)) and e.kind == "file" and e.content is None
    ]
    for name in sorted(names, key=len, reverse=True):  # children before their folders
        if name not in before.entries:
            _remove(name)
    for name in sorted(names, key=len):  # folders before their children
        entry = before.entries.get(name)
        if entry is None or name in lost:
            continue
        if entry.kind == "dir":
            if not os.path.isdir(name) or os.path.islink(name):
                _remove(name)
                os.makedirs(name, exist_ok=True)
            os.chmod(name, stat.S_IMODE(entry.mode))
            continue
        _remove(name)
        os.makedirs(os.path.dirname(name), exist_ok=True)
        if entry.kind == "link":
            assert entry.target is not None
            os.symlink(entry.target, name)
        else:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(entry.content or b"")
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(name, stat.S_IMODE(entry.mode))
        _CONTENT.pop(name, None)
    return lost


# Folders that hold no role or skill sdd would load, and are large: the rule-file scan skips them.
# Only folders sdd loads nothing from, and that hold third-party code or caches; `.sdd/` is the
# record's own (read-only to commands, and watched on its own).
_SCAN_SKIP = frozenset({".git", "node_modules", "__pycache__", ".sdd"})


def rule_files(product: Path, names: Iterable[str]) -> set[str]:
    """Every file in the product named like a role or skill file (any case). There is no limit:
    a command that first makes the product huge must not blind the check."""
    wanted = {n.casefold() for n in names}
    found: set[str] = set()
    stack = [str(product)]
    while stack:
        for entry in _listed(stack.pop()):
            if entry.name.casefold() in wanted:
                found.add(entry.path)
            elif entry.name not in _SCAN_SKIP and entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return found


def _remove(name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        if os.path.isdir(name) and not os.path.islink(name):
            shutil.rmtree(name)
        else:
            os.unlink(name)
