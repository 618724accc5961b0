"""Open paths beneath the product folder without ever following a symlink.

The guard checks a path by its name before a tool runs. Between that check and the moment the
tool opens the file, a role's own command could swap a folder for a symlink to `memory/` (the
person's record) or out of the product, so checking a resolved path and then opening it again
by name proves nothing. Every file tool therefore works from a descriptor of the product folder:
folders are opened one name at a time with `O_NOFOLLOW` (or in one `openat2` call with
`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it), and the last name is acted on
with the `*at` calls, which do not follow it either. A swapped-in symlink then makes the call
fail; it can never redirect it.

Reads may follow a symlink that stays inside the product: it is resolved here, hop by hop from
the product's descriptor with the same no-follow opening, and the file is then opened by the
names it resolved to, none of them a symlink. Writes and deletes never follow one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any

from sdd_git.tools.base import ToolFailed

OUTSIDE = "path is outside the product folder"
NEVER_FOLLOW = "file tools never follow symlinks"
MAX_HOPS = 40  # the kernel's own limit for one path walk

_O_PATH: int = getattr(os, "O_PATH", 0)
_O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
# O_PATH opens a folder for use as a starting point only: nothing is read, no permission needed.
_DIR_FLAGS = (_O_PATH or os.O_RDONLY) | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
_LIST_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC  # scandir needs a real read

# openat2(2): Linux 5.6+. The syscall number is 437 on every architecture that has it and is
# generic (x86_64, aarch64); elsewhere the component walk below does the same job.
_SYS_OPENAT2 = 437
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


class _Openat2:
    """The openat2 syscall through ctypes, or None where the kernel or a filter lacks it."""

    def __init__(self) -> None:
        self.call: Any = None  # libc's syscall(2), once probed
        self.probed = False

    def usable(self, dir_fd: int) -> bool:
        if self.probed:
            return self.call is not None
        self.probed = True
        if sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64"):
            return False
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            call = libc.syscall
        except (OSError, AttributeError):
            return False
        call.restype = ctypes.c_long
        self.call = call
        try:
            os.close(self.open(dir_fd, ".", _DIR_FLAGS))
        except OSError:
            # ENOSYS on an old kernel, EPERM or ENOSYS from a seccomp filter (older containers).
            self.call = None
            return False
        return True

    def open(self, dir_fd: int, path: str, flags: int) -> int:
        assert self.call is not None
        how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
        fd = int(
            self.call(
                ctypes.c_long(_SYS_OPENAT2),
                ctypes.c_int(dir_fd),
                ctypes.c_char_p(os.fsencode(path)),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
        )
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), path)
        return fd


_OPENAT2 = _Openat2()


def kernel_path() -> str:
    """Which way folders are opened here: "openat2" or "walk" (for the run log and tests)."""
    fd = os.open("/", (_O_PATH or os.O_RDONLY) | _O_DIRECTORY | _O_CLOEXEC)
    try:
        return "openat2" if _OPENAT2.usable(fd) else "walk"
    finally:
        os.close(fd)


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


class _Symlink(Exception):
    """A symlink where none may be followed; `link` is its path from the product folder."""

    def __init__(self, link: str) -> None:
        super().__init__(link)
        self.link = link


class Folder:
    """The product folder, open. Every path given is relative to it, or absolute inside it."""

    def __init__(self, root: Path) -> None:
        self.given = Path(os.path.abspath(root))
        self.path = root.resolve()
        # The product folder itself may sit behind a symlink the person made: only what is
        # below it is never followed.
        self.fd = os.open(self.path, (_O_PATH or os.O_RDONLY) | _O_DIRECTORY | _O_CLOEXEC)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- names ------------------------------------------------------------------------------

    def _raw_names(self, raw: str | Path) -> list[str]:
        """`raw` as names below the product folder, `.` dropped and `..` kept."""
        if "\0" in str(raw):
            raise ToolFailed("a path cannot hold a NUL character")
        path = Path(raw)
        if not path.is_absolute():
            return [p for p in path.parts if p not in ("", ".")]
        for base in (self.path, self.given):
            if path.parts[: len(base.parts)] == base.parts:
                return [p for p in path.parts[len(base.parts) :] if p not in ("", ".")]
        raise ToolFailed(OUTSIDE)

    def names(self, raw: str | Path) -> list[str]:
        """The names `raw` leads to, with each `..` taken back.

        A `..` that would climb out of the product folder is refused. One that climbs back out
        of a symlink is refused too: the kernel would climb out of the link's target, the
        guard checked that, and taking it back by name would land somewhere else.
        """
        names: list[str] = []
        for name in self._raw_names(raw):
            if name != "..":
                names.append(name)
                continue
            if not names:
                raise ToolFailed(OUTSIDE)
            try:
                self._close(self._open_dir(names))
            except _Symlink as link:
                raise ToolFailed(self._through(raw, link.link)) from None
            except OSError:
                pass  # not there (or not a folder): the name is taken back as written
            names.pop()
        return names

    def shown(self, raw: str | Path) -> str:
        """`raw` as the model should read it back: relative to the product folder."""
        return "/".join(self.names(raw)) or "."

    def display(self, raw: str | Path) -> str:
        """`raw` as written, `..` taken back by name: for messages only, never to open."""
        try:
            names: list[str] = []
            for name in self._raw_names(raw):
                if name != "..":
                    names.append(name)
                elif names:
                    names.pop()
                else:
                    return str(raw)
        except ToolFailed:
            return str(raw)
        return "/".join(names) or "."

    def _through(self, raw: str | Path, link: str) -> str:
        try:
            shown = "/".join(self._raw_names(raw)) or "."  # as written: `..` and all
        except ToolFailed:
            shown = str(raw)
        if shown == link:
            return f"{shown} is a symlink; {NEVER_FOLLOW}"
        return f"{shown} goes through the symlink {link}; {NEVER_FOLLOW}"

    # --- opening folders --------------------------------------------------------------------

    def _close(self, fd: int) -> None:
        if fd != self.fd:
            os.close(fd)

    def _open_dir(self, names: list[str], make: bool = False) -> int:
        """A descriptor of the folder `names` (no `..`), no symlink followed at any name.

        The descriptor is `self.fd` itself for the product folder; close others with `_close`.
        """
        if not names:
            return self.fd
        if _OPENAT2.usable(self.fd):
            try:
                return _OPENAT2.open(self.fd, "/".join(names), _DIR_FLAGS)
            except OSError:
                # Whatever failed, the walk says exactly why and where (ELOOP or ENOTDIR: a
                # symlink, named; ENOENT: folders to make; EAGAIN: a rename raced the lookup),
                # and it is as strict: it only ever opens one name with O_NOFOLLOW.
                pass
        return self._walk_dir(names, make)

    def _walk_dir(self, names: list[str], make: bool) -> int:
        current = self.fd
        try:
            for index, name in enumerate(names):
                try:
                    opened = self._open_one(current, name, names[: index + 1])
                except FileNotFoundError:
                    if not make:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, dir_fd=current)
                    # Opened again without following: a symlink put there since is refused.
                    opened = self._open_one(current, name, names[: index + 1])
                self._close(current)
                current = opened
        except BaseException:
            self._close(current)
            raise
        return current

    def _open_one(self, dir_fd: int, name: str, so_far: list[str]) -> int:
        for _ in range(3):
            try:
                return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                # O_NOFOLLOW on a symlink: ELOOP, or ENOTDIR when O_PATH opened the link itself
                # and O_DIRECTORY refused it.
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise
                try:
                    found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    raise exc from None
                if stat.S_ISLNK(found.st_mode) or exc.errno != errno.ENOTDIR:
                    raise _Symlink("/".join(so_far)) from None
                if not stat.S_ISDIR(found.st_mode):
                    raise
                # A folder now, not when it was opened: the name was swapped; look again.
        raise _Symlink("/".join(so_far))

    def _parent(self, raw: str | Path, names: list[str], make: bool) -> int:
        """The folder holding the last name, opened without following any symlink."""
        try:
            return self._open_dir(names[:-1], make)
        except _Symlink as link:
            raise ToolFailed(self._through(raw, link.link)) from None
        except FileNotFoundError:
            raise ToolFailed(f"no folder {'/'.join(names[:-1])}") from None
        except NotADirectoryError:
            raise ToolFailed(
                f"{self.display(raw)}: a name on the way is a file, not a folder"
            ) from None

    # --- what the tools use -----------------------------------------------------------------

    def lstat(self, raw: str | Path) -> os.stat_result | None:
        """The entry itself (a symlink is not followed), or None when nothing is there.

        A path through a symlink is refused, as for a write.
        """
        names = self.names(raw)
        if not names:
            return os.fstat(self.fd)
        try:
            parent = self._open_dir(names[:-1])
        except _Symlink as link:
            raise ToolFailed(self._through(raw, link.link)) from None
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        finally:
            self._close(parent)

    def write_atomic(self, raw: str | Path, data: bytes, make_dirs: bool = True) -> bool:
        """Replace the entry with a file holding `data`; True when something was there before.

        The temp file is made in the final folder's descriptor and renamed over the name: a
        symlink at the name is replaced, never followed, and no folder on the way is a symlink.
        """
        names = self.names(raw)
        if not names:
            raise ToolFailed(f"{self.shown(raw)} is a folder; a file cannot be written there")
        parent = self._parent(raw, names, make_dirs)
        name = names[-1]
        try:
            try:
                before = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                before = None
            if before is not None and stat.S_ISDIR(before.st_mode):
                raise ToolFailed(f"{'/'.join(names)} is a folder; a file cannot be written there")
            # An existing file keeps its mode (a script stays executable); a new one is 0644,
            # as sdd's other writes are.
            mode = (
                stat.S_IMODE(before.st_mode) if before and stat.S_ISREG(before.st_mode) else 0o644
            )
            temp = f".sdd-{secrets.token_hex(8)}.tmp"
            fd = os.open(
                temp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC,
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
            raise ToolFailed(f"{self.shown(raw)} is a folder; nothing can be appended to it")
        parent = self._parent(raw, names, make_dirs)
        try:
            try:
                # O_NONBLOCK: a FIFO planted at the name fails at once instead of hanging.
                fd = os.open(
                    names[-1],
                    os.O_WRONLY
                    | os.O_CREAT
                    | os.O_APPEND
                    | _O_NOFOLLOW
                    | _O_CLOEXEC
                    | os.O_NONBLOCK,
                    0o644,
                    dir_fd=parent,
                )
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise ToolFailed(self._through(raw, "/".join(names))) from None
                if exc.errno == errno.ENXIO:  # a FIFO nobody reads
                    raise ToolFailed(f"{'/'.join(names)} is not a regular file") from None
                raise
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise ToolFailed(f"{'/'.join(names)} is not a regular file")
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
            raise ToolFailed(f"{self.shown(raw)} is a folder; only a file can be deleted")
        parent = self._parent(raw, names, make=False)
        try:
            try:
                os.unlink(names[-1], dir_fd=parent)
            except FileNotFoundError:
                raise ToolFailed(f"no file {'/'.join(names)}") from None
            except IsADirectoryError:
                raise ToolFailed(
                    f"{'/'.join(names)} is a folder; only a file can be deleted"
                ) from None
            except PermissionError:
                # unlink(2) answers EPERM for a folder on some systems.
                found = os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
                if stat.S_ISDIR(found.st_mode):
                    raise ToolFailed(
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
                        raise ToolFailed(self._outside(shown, link))
                    resolved.pop()
                    self._close(fds.pop())
                    status = None
                    continue
                try:
                    status = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
                except (FileNotFoundError, NotADirectoryError):
                    if link is not None:
                        raise ToolFailed(self._broken(shown, link)) from None
                    return Found((*resolved, name, *pending), None)
                if stat.S_ISLNK(status.st_mode):
                    hops += 1
                    if hops > MAX_HOPS:
                        raise ToolFailed(
                            f"{shown}: more than {MAX_HOPS} symlinks in a row; "
                            "file tools stop there"
                        )
                    here = "/".join([*resolved, name])
                    link = link or here
                    target = os.readlink(name, dir_fd=fds[-1])
                    if os.path.isabs(target):
                        try:
                            steps = self._raw_names(target)
                        except ToolFailed:
                            raise ToolFailed(self._outside(shown, here)) from None
                        while len(fds) > 1:
                            self._close(fds.pop())
                        resolved.clear()
                    else:
                        steps = [p for p in PurePosixPath(target).parts if p not in ("", ".")]
                    pending.extendleft(reversed(steps))
                    continue
                if pending:
                    if not stat.S_ISDIR(status.st_mode):
                        if link is not None:
                            raise ToolFailed(self._broken(shown, link))
                        return Found((*resolved, name, *pending), None)
                    try:
                        fds.append(self._open_one(fds[-1], name, [*resolved, name]))
                    except _Symlink as swapped:
                        raise ToolFailed(self._through(raw, swapped.link)) from None
                resolved.append(name)
            if status is None:  # ended on a `..`: the folder it climbed back to, all opened
                status = os.fstat(fds[-1])
            return Found(tuple(resolved), status)
        finally:
            for fd in fds:
                self._close(fd)

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
            raise ToolFailed(". is a folder")
        shown = found.rel
        try:
            parent = self._open_dir(names[:-1])
        except _Symlink as link:
            raise ToolFailed(self._through(shown, link.link)) from None
        except (FileNotFoundError, NotADirectoryError):
            raise ToolFailed(f"no file {shown}") from None
        try:
            try:
                # O_NONBLOCK: a FIFO planted in the product never hangs the tool.
                fd = os.open(
                    names[-1],
                    os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK,
                    dir_fd=parent,
                )
            except FileNotFoundError:
                raise ToolFailed(f"no file {shown}") from None
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise ToolFailed(self._through(shown, shown)) from None
                raise
        finally:
            self._close(parent)
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise ToolFailed(f"{shown} is a folder")
            if not stat.S_ISREG(info.st_mode):
                raise ToolFailed(f"{shown} is not a regular file")
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
            raise ToolFailed(f"no file {self.display(raw)}")
        if found.is_dir:
            raise ToolFailed(f"{self.display(raw)} is a folder")
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
        except (_Symlink, OSError):
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
            listing = os.open(".", _LIST_FLAGS, dir_fd=dir_fd)
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
            except (_Symlink, OSError):
                continue  # swapped for a symlink, or gone: never entered
            try:
                self._collect(child, [*names, name], skip, out)
            finally:
                os.close(child)

    def _sync(self, dir_fd: int) -> None:
        # The rename is durable only once the folder entry is on disk; an O_PATH descriptor
        # cannot be fsync'd, so "." is opened from it for reading.
        try:
            fd = os.open(".", os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC, dir_fd=dir_fd)
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
