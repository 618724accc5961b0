"""The file tools' opening of paths beneath the product folder.

The opening itself is the foundation's (`sdd_git/beneath.py`): folders one name at a time with
`O_NOFOLLOW`, or one `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`. What the
tools add here: writes, appends and deletes that never follow a symlink (the temp file is made
in the final folder's descriptor and renamed over the name), and reads that may follow a
symlink staying inside the product, resolved hop by hop from the product's descriptor. Their
refusals are `ToolFailed`, whose words go back to the model.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sdd_git import beneath as base
from sdd_git.beneath import (
    LIST_FLAGS,
    NEVER_FOLLOW,
    O_CLOEXEC,
    O_DIRECTORY,
    O_NOFOLLOW,
    OUTSIDE,
    LinkOnTheWay,
    kernel_path,
)
from sdd_git.tools.base import ToolFailed

__all__ = ["NEVER_FOLLOW", "OUTSIDE", "Folder", "Found", "Read", "kernel_path"]

MAX_HOPS = 40  # the kernel's own limit for one path walk


@dataclass(frozen=True)
class Found:
    """Where a path leads for reading: the real names from the product folder (no symlink, no
    `..`), and the entry's own status, or None when nothing is there."""

    names: tuple[str, ...]
    status: os.stat_result | None

    @property
    def rel(self) -> str:
        return "/".join(self.names) or "."

    @property
    def is_dir(self) -> bool:
        return self.status is not None and stat.S_ISDIR(self.status.st_mode)

    @property
    def is_file(self) -> bool:
        return self.status is not None and stat.S_ISREG(self.status.st_mode)


@dataclass(frozen=True)
class Read:
    data: bytes  # at most the limit asked for
    size: int  # the file's whole size when it was opened


class Folder(base.Folder):
    """The product folder, open for the file tools. Every path given is relative to it, or
    absolute inside it."""

    failure = ToolFailed

    def _parent(self, raw: str | Path, names: list[str], make: bool) -> int:
        """The folder holding the last name, opened without following any symlink."""
        try:
            return self._open_dir(names[:-1], make)
        except LinkOnTheWay as link:
            raise self.failure(self._through(raw, link.link)) from None
        except FileNotFoundError:
            raise self.failure(f"no folder {'/'.join(names[:-1])}") from None
        except NotADirectoryError:
            raise self.failure(
                f"{self.display(raw)}: a name on the way is a file, not a folder"
            ) from None

    def write_atomic(self, raw: str | Path, data: bytes, make_dirs: bool = True) -> bool:
        """Replace the entry with a file holding `data`; True when something was there before.

        The temp file is made in the final folder's descriptor and renamed over the name: a
        symlink at the name is replaced, never followed, and no folder on the way is a symlink.
        """
        names = self.names(raw)
        if not names:
            raise self.failure(f"{self.shown(raw)} is a folder; a file cannot be written there")
        parent = self._parent(raw, names, make_dirs)
        name = names[-1]
        try:
            try:
                before = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                before = None
            if before is not None and stat.S_ISDIR(before.st_mode):
                raise self.failure(f"{'/'.join(names)} is a folder; a file cannot be written there")
            # An existing file keeps its mode (a script stays executable); a new one is 0644,
            # as sdd's other writes are.
            mode = (
                stat.S_IMODE(before.st_mode) if before and stat.S_ISREG(before.st_mode) else 0o644
            )
            temp = f".sdd-{secrets.token_hex(8)}.tmp"
            fd = os.open(
                temp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0o600,
                dir_fd=parent,
            )
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fchmod(fd, mode)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise
            self._sync(parent)
            return before is not None
        finally:
            self._close(parent)

    def append(self, raw: str | Path, data: bytes, make_dirs: bool = True) -> None:
        """Append `data` to a regular file (made if missing), fsync'd; never through a symlink."""
        names = self.names(raw)
        if not names:
            raise self.failure(f"{self.shown(raw)} is a folder; nothing can be appended to it")
        parent = self._parent(raw, names, make_dirs)
        try:
            try:
                # O_NONBLOCK: a FIFO planted at the name fails at once instead of hanging.
                fd = os.open(
                    names[-1],
                    os.O_WRONLY | os.O_CREAT | os.O_APPEND | O_NOFOLLOW | O_CLOEXEC | os.O_NONBLOCK,
                    0o644,
                    dir_fd=parent,
                )
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise self.failure(self._through(raw, "/".join(names))) from None
                if exc.errno == errno.ENXIO:  # a FIFO nobody reads
                    raise self.failure(f"{'/'.join(names)} is not a regular file") from None
                raise
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise self.failure(f"{'/'.join(names)} is not a regular file")
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        finally:
            self._close(parent)

    def unlink(self, raw: str | Path) -> None:
        """Remove the entry itself: a symlink is removed, never what it points to."""
        names = self.names(raw)
        if not names:
            raise self.failure(f"{self.shown(raw)} is a folder; only a file can be deleted")
        parent = self._parent(raw, names, make=False)
        try:
            try:
                os.unlink(names[-1], dir_fd=parent)
            except FileNotFoundError:
                raise self.failure(f"no file {'/'.join(names)}") from None
            except IsADirectoryError:
                raise self.failure(
                    f"{'/'.join(names)} is a folder; only a file can be deleted"
                ) from None
            except PermissionError:
                # unlink(2) answers EPERM for a folder on some systems.
                found = os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
                if stat.S_ISDIR(found.st_mode):
                    raise self.failure(
                        f"{'/'.join(names)} is a folder; only a file can be deleted"
                    ) from None
                raise
            self._sync(parent)
        finally:
            self._close(parent)

    def resolve(self, raw: str | Path) -> Found:
        """Where `raw` leads for reading, following symlinks that stay inside the product.

        Each hop is resolved here from the product's descriptor, never by the kernel: a link
        that leads outside, a broken one, or more than 40 hops is refused with plain words.
        """
        shown = self.display(raw)
        pending = deque(self._raw_names(raw))
        resolved: list[str] = []
        fds: list[int] = [self.fd]
        status: os.stat_result | None = None
        link: str | None = None  # the first symlink followed, for the messages
        hops = 0
        try:
            while pending:
                name = pending.popleft()
                if name == "..":
                    if not resolved:
                        raise self.failure(self._outside(shown, link))
                    resolved.pop()
                    self._close(fds.pop())
                    status = None
                    continue
                try:
                    status = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
                except (FileNotFoundError, NotADirectoryError):
                    if link is not None:
                        raise self.failure(self._broken(shown, link)) from None
                    return Found((*resolved, name, *pending), None)
                if stat.S_ISLNK(status.st_mode):
                    hops += 1
                    if hops > MAX_HOPS:
                        raise self.failure(
                            f"{shown}: more than {MAX_HOPS} symlinks in a row; "
                            "file tools stop there"
                        )
                    here = "/".join([*resolved, name])
                    link = link or here
                    pending.extendleft(reversed(self._hop(name, fds, resolved, shown, here)))
                    continue
                if pending:
                    if not stat.S_ISDIR(status.st_mode):
                        if link is not None:
                            raise self.failure(self._broken(shown, link))
                        return Found((*resolved, name, *pending), None)
                    try:
                        fds.append(self._open_one(fds[-1], name, [*resolved, name]))
                    except LinkOnTheWay as swapped:
                        raise self.failure(self._through(raw, swapped.link)) from None
                resolved.append(name)
            if status is None:  # ended on a `..`: the folder it climbed back to, all opened
                status = os.fstat(fds[-1])
            return Found(tuple(resolved), status)
        finally:
            for fd in fds:
                self._close(fd)

    def _hop(
        self, name: str, fds: list[int], resolved: list[str], shown: str, here: str
    ) -> list[str]:
        """The names the symlink `name` leads to, to walk next. An absolute target inside the
        product starts again from its top: the folders opened so far are closed."""
        target = os.readlink(name, dir_fd=fds[-1])
        if not os.path.isabs(target):
            return [p for p in PurePosixPath(target).parts if p not in ("", ".")]
        try:
            steps = self._raw_names(target)
        except self.failure:
            raise self.failure(self._outside(shown, here)) from None
        while len(fds) > 1:
            self._close(fds.pop())
        resolved.clear()
        return steps

    @staticmethod
    def _outside(shown: str, link: str | None) -> str:
        if link is None:
            return OUTSIDE
        never = "file tools never follow a symlink out of it"
        if shown == link:
            return f"{shown} is a symlink that leads outside the product folder; {never}"
        through = f"{shown} goes through the symlink {link}"
        return f"{through}, which leads outside the product folder; {never}"

    @staticmethod
    def _broken(shown: str, link: str) -> str:
        missing = "what it points to does not exist"
        if shown == link:
            return f"{shown} is a broken symlink ({missing})"
        return f"{shown} goes through the symlink {link}, which is broken ({missing})"

    def read(self, found: Found, limit: int) -> Read:
        """At most `limit` bytes of a file `resolve` found, opened by its real names.

        Nothing on the way may have turned into a symlink since: the open would refuse it.
        """
        names = list(found.names)
        if not names:
            raise self.failure(". is a folder")
        shown = found.rel
        try:
            parent = self._open_dir(names[:-1])
        except LinkOnTheWay as link:
            raise self.failure(self._through(shown, link.link)) from None
        except (FileNotFoundError, NotADirectoryError):
            raise self.failure(f"no file {shown}") from None
        try:
            try:
                # O_NONBLOCK: a FIFO planted in the product never hangs the tool.
                fd = os.open(
                    names[-1],
                    os.O_RDONLY | O_NOFOLLOW | O_CLOEXEC | os.O_NONBLOCK,
                    dir_fd=parent,
                )
            except FileNotFoundError:
                raise self.failure(f"no file {shown}") from None
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise self.failure(self._through(shown, shown)) from None
                raise
        finally:
            self._close(parent)
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise self.failure(f"{shown} is a folder")
            if not stat.S_ISREG(info.st_mode):
                raise self.failure(f"{shown} is not a regular file")
            chunks: list[bytes] = []
            left = limit
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return Read(b"".join(chunks), info.st_size)
        finally:
            os.close(fd)

    def read_bytes(self, raw: str | Path, limit: int) -> Read:
        """`resolve` then `read`, with the tools' plain words for what is not a file."""
        found = self.resolve(raw)
        if found.status is None:
            raise self.failure(f"no file {self.display(raw)}")
        if found.is_dir:
            raise self.failure(f"{self.display(raw)} is a folder")
        return self.read(found, limit)

    def files(
        self, names: tuple[str, ...] | list[str], skip: tuple[str, ...] = (".git",)
    ) -> list[str]:
        """Every entry that is not a folder under the folder `names`, as sorted relative paths.

        Only real folders are descended: a symlink is listed as the entry it is, never entered.
        """
        found: list[str] = []
        try:
            start = self._open_dir(list(names))
        except (LinkOnTheWay, OSError):
            return found
        try:
            self._collect(start, list(names), skip, found)
        finally:
            self._close(start)
        return sorted(found)

    def _collect(
        self, dir_fd: int, names: list[str], skip: tuple[str, ...], out: list[str]
    ) -> None:
        try:
            listing = os.open(".", LIST_FLAGS, dir_fd=dir_fd)
        except OSError:
            return
        try:
            with os.scandir(listing) as entries:
                children = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in entries)
        except OSError:
            return
        finally:
            os.close(listing)
        for name, is_dir in children:
            if not is_dir:
                out.append("/".join([*names, name]))
                continue
            if name in skip:
                continue
            try:
                child = self._open_one(dir_fd, name, [*names, name])
            except (LinkOnTheWay, OSError):
                continue  # swapped for a symlink, or gone: never entered
            try:
                self._collect(child, [*names, name], skip, out)
            finally:
                os.close(child)

    def _sync(self, dir_fd: int) -> None:
        # The rename is durable only once the folder entry is on disk; an O_PATH descriptor
        # cannot be fsync'd, so "." is opened from it for reading.
        try:
            fd = os.open(".", os.O_RDONLY | O_DIRECTORY | O_CLOEXEC, dir_fd=dir_fd)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


# --- one call, one open of the product folder ------------------------------------------------


@contextlib.contextmanager
def folder(root: Path) -> Iterator[Folder]:
    try:
        opened = Folder(root)
    except OSError as exc:
        raise ToolFailed(f"cannot open the product folder: {exc.strerror}") from None
    try:
        yield opened
    finally:
        opened.close()


def write_atomic(root: Path, rel: str | Path, data: bytes, make_dirs: bool = True) -> bool:
    with folder(root) as top:
        return top.write_atomic(rel, data, make_dirs)


def append(root: Path, rel: str | Path, data: bytes, make_dirs: bool = True) -> None:
    with folder(root) as top:
        top.append(rel, data, make_dirs)


def unlink(root: Path, rel: str | Path) -> None:
    with folder(root) as top:
        top.unlink(rel)


def read_bytes(root: Path, rel: str | Path, limit: int) -> Read:
    with folder(root) as top:
        return top.read_bytes(rel, limit)


def lstat(root: Path, rel: str | Path) -> os.stat_result | None:
    with folder(root) as top:
        return top.lstat(rel)


def is_dir_entry(entry: os.stat_result | None) -> bool:
    """True for what `lstat` found when it is a real folder (a symlink to one is not)."""
    return entry is not None and stat.S_ISDIR(entry.st_mode)


def is_dir(root: Path, rel: str | Path) -> bool:
    """True when `rel` is a real folder (a symlink to one is not)."""
    return is_dir_entry(lstat(root, rel))
