"""Open paths beneath the product folder without ever following a symlink.

Everything sdd opens inside the product goes through here: the model's file tools, and every
reader of her record and of sdd's own state (specs, decisions, change packs, role, skill and
routine files, run logs, stops, events). A file in the repo is anyone's, and so is a symlink:
`memory/specs/SPEC-0009.md -> ~/.ssh/id_ed25519` would hand her key to whoever reads the spec.

Folders are opened one name at a time with `O_NOFOLLOW` (or in one `openat2` call with
`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it), and the last name is acted on
with the `*at` calls, which do not follow it either. A swapped-in symlink then makes the call
fail; it can never redirect it (a role's command could swap a folder between a check by name
and the open, so checking a resolved path and opening it again by name proves nothing).

Two ways of reading:
- the record readers (`read_bytes`, `read_text`, `is_file`, `entries`) follow no link at all,
  and open nothing that is not a regular file or folder: a FIFO never hangs them;
- the file tools (`Folder.resolve`, then `Folder.read`) may follow a link that stays inside
  the product: it is resolved here, hop by hop from the product's descriptor with the same
  no-follow opening, and the file is then opened by the names it resolved to.
Writes and deletes never follow one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from sdd_git.errors import RecordError

OUTSIDE = "path is outside the product folder"
NEVER_FOLLOW = "file tools never follow symlinks"
ONLY_REGULAR = "sdd reads only regular files inside the product"
FIX_LINK = (
    "put the file itself there in place of the link (git ls-files -s lists a link with mode "
    "120000), or remove it"
)

_O_PATH: int = getattr(os, "O_PATH", 0)
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
# O_PATH opens a folder for use as a starting point only: nothing is read, no permission needed.
_DIR_FLAGS = (_O_PATH or os.O_RDONLY) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
LIST_FLAGS = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC  # scandir needs a real read

# openat2(2): Linux 5.6+. The syscall number is 437 on every architecture that has it and is
# generic (x86_64, aarch64); elsewhere the component walk below does the same job.
_SYS_OPENAT2 = 437
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08


class _Openat2:
    """The openat2 syscall through ctypes, or None where the kernel or a filter lacks it.

    ctypes is imported at the first open, not with this module: `sdd role list` imports this
    module and must stay fast (ctypes alone costs a few milliseconds)."""

    def __init__(self) -> None:
        self.call: Any = None  # libc's syscall(2), once probed
        self.probed = False
        self._ctypes: Any = None
        self._how: Any = None  # struct open_how

    def usable(self, dir_fd: int) -> bool:
        if self.probed:
            return self.call is not None
        self.probed = True
        if sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64"):
            return False
        import ctypes

        class OpenHow(ctypes.Structure):
            _fields_ = [
                ("flags", ctypes.c_uint64),
                ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64),
            ]

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            call = libc.syscall
        except (OSError, AttributeError):
            return False
        call.restype = ctypes.c_long
        self._ctypes, self._how, self.call = ctypes, OpenHow, call
        try:
            os.close(self.open(dir_fd, ".", _DIR_FLAGS))
        except OSError:
            # ENOSYS on an old kernel, EPERM or ENOSYS from a seccomp filter (older containers).
            self.call = None
            return False
        return True

    def open(self, dir_fd: int, path: str, flags: int) -> int:
        assert self.call is not None
        c = self._ctypes
        how = self._how(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
        fd = int(
            self.call(
                c.c_long(_SYS_OPENAT2),
                c.c_int(dir_fd),
                c.c_char_p(os.fsencode(path)),
                c.byref(how),
                c.c_size_t(c.sizeof(how)),
            )
        )
        if fd < 0:
            code = c.get_errno()
            raise OSError(code, os.strerror(code), path)
        return fd


_OPENAT2 = _Openat2()


def kernel_path() -> str:
    """Which way folders are opened here: "openat2" or "walk" (for the run log and tests)."""
    fd = os.open("/", (_O_PATH or os.O_RDONLY) | O_DIRECTORY | O_CLOEXEC)
    try:
        return "openat2" if _OPENAT2.usable(fd) else "walk"
    finally:
        os.close(fd)


class LinkOnTheWay(Exception):
    """A symlink where none may be followed; `link` is its path from the product folder."""

    def __init__(self, link: str) -> None:
        super().__init__(link)
        self.link = link


class Refused(RecordError):
    """A path sdd will not open: a link, a special file, or one outside the product."""

    def __init__(self, message: str, hint: str | None = FIX_LINK) -> None:
        super().__init__(message, hint)


@dataclass(frozen=True)
class Entries:
    """A folder's entries: real folders, regular files, and what was left out and why."""

    folders: tuple[str, ...]
    files: tuple[str, ...]
    refused: tuple[str, ...]  # one sentence per link or special file, naming its path


class Folder:
    """The product folder, open. Every path given is relative to it, or absolute inside it.

    What it refuses is raised as `failure`: `Refused` for sdd's readers, the tools' own error
    for the tools.
    """

    failure: type[Exception] = Refused

    def __init__(self, root: Path) -> None:
        self.given = Path(os.path.abspath(root))
        self._given_parts = [p for p in str(self.given).split("/") if p]
        self._resolved: Path | None = None
        # The product folder itself may sit behind a symlink the person made: only what is
        # below it is never followed.
        self.fd = os.open(self.given, (_O_PATH or os.O_RDONLY) | O_DIRECTORY | O_CLOEXEC)

    @property
    def path(self) -> Path:
        """The product folder with the links above it resolved (asked for only when needed:
        it costs more than the rest of reading a small file)."""
        if self._resolved is None:
            self._resolved = self.given.resolve()
        return self._resolved

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
        """`raw` as names below the product folder, `.` dropped and `..` kept.

        Plain string work, as `PurePosixPath.parts` splits: this runs once per file of a
        listing of 1,000 roles, where pathlib cost more than the opening itself."""
        text = os.fspath(raw)
        if "\0" in text:
            raise self.failure("a path cannot hold a NUL character")
        parts = [p for p in text.split("/") if p not in ("", ".")]
        if not text.startswith("/"):
            return parts
        given = self._given_parts
        if parts[: len(given)] == given:
            return parts[len(given) :]
        resolved = [p for p in str(self.path).split("/") if p]
        if parts[: len(resolved)] == resolved:
            return parts[len(resolved) :]
        raise self.failure(OUTSIDE)

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
                raise self.failure(OUTSIDE)
            try:
                self._close(self._open_dir(names))
            except LinkOnTheWay as link:
                raise self.failure(self._through(raw, link.link)) from None
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
        except self.failure:
            return str(raw)
        return "/".join(names) or "."

    def _through(self, raw: str | Path, link: str) -> str:
        try:
            shown = "/".join(self._raw_names(raw)) or "."  # as written: `..` and all
        except self.failure:
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
        # One or two names: two plain opens cost less than loading ctypes, which `sdd role
        # list` (it opens `.sdd/roles` and nothing deeper) would otherwise pay for one call.
        if len(names) > 2 and _OPENAT2.usable(self.fd):
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
                    raise LinkOnTheWay("/".join(so_far)) from None
                if not stat.S_ISDIR(found.st_mode):
                    raise
                # A folder now, not when it was opened: the name was swapped; look again.
        raise LinkOnTheWay("/".join(so_far))

    # --- the entry itself ---------------------------------------------------------------------

    def lstat(self, raw: str | Path) -> os.stat_result | None:
        """The entry itself (a symlink is not followed), or None when nothing is there.

        A path through a symlink is refused, as for a write.
        """
        names = self.names(raw)
        if not names:
            return os.fstat(self.fd)
        try:
            parent = self._open_dir(names[:-1])
        except LinkOnTheWay as link:
            raise self.failure(self._through(raw, link.link)) from None
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        finally:
            self._close(parent)

    # --- what sdd's own readers use: no link at all, regular files and folders only ---------

    def _strict_names(self, raw: str | Path) -> list[str]:
        try:
            names = self._raw_names(raw)
        except Refused:
            raise
        except self.failure:
            raise Refused(f"{raw}: {OUTSIDE}; {ONLY_REGULAR}", hint=None) from None
        if ".." in names:
            # sdd names its own files; a `..` only comes from a name it was handed.
            raise Refused(f"{raw}: {OUTSIDE}; {ONLY_REGULAR}", hint=None)
        return names

    @staticmethod
    def _link_words(shown: str, link: str) -> str:
        if shown == link:
            return f"{shown} is a link; {ONLY_REGULAR}"
        return f"{shown} goes through the link {link}; {ONLY_REGULAR}"

    def _strict_dir(self, names: list[str], shown: str) -> int:
        try:
            return self._open_dir(names)
        except LinkOnTheWay as link:
            raise Refused(self._link_words(shown, link.link)) from None

    def open_regular(self, raw: str | Path) -> int:
        """A read-only descriptor of the regular file `raw`, reached with no link at any name.

        Missing: FileNotFoundError (or NotADirectoryError), as `Path.read_bytes` says it. A
        link on the way or at the name, or a FIFO, socket or device: `Refused`, naming it.
        """
        names = self._strict_names(raw)
        shown = "/".join(names)
        if not names:
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(self.given))
        # O_NONBLOCK: a FIFO planted in the record opens at once, and is refused below.
        flags = os.O_RDONLY | O_NOFOLLOW | O_CLOEXEC | os.O_NONBLOCK
        fd = -1
        if len(names) > 2 and _OPENAT2.usable(self.fd):  # see `_open_dir`
            try:
                fd = _OPENAT2.open(self.fd, shown, flags)
            except (FileNotFoundError, NotADirectoryError):
                raise
            except OSError:
                fd = -1  # a link (ELOOP, EXDEV) or a race (EAGAIN): the walk says which, where
        if fd < 0:
            parent = self._strict_dir(names[:-1], shown)
            try:
                fd = os.open(names[-1], flags, dir_fd=parent)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise Refused(self._link_words(shown, shown)) from None
                if exc.errno in (errno.ENXIO, errno.ENODEV):  # a socket, a device
                    raise self._special(shown) from None
                raise
            finally:
                self._close(parent)
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            return fd
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", shown)
        raise self._special(shown)

    @staticmethod
    def _special(shown: str) -> Refused:
        return Refused(
            f"{shown} is not a regular file (a FIFO, a socket or a device); {ONLY_REGULAR}",
            hint=f"remove it: rm {shown}",
        )

    def regular_bytes(self, raw: str | Path, limit: int | None = None) -> bytes:
        """The bytes of the regular file `raw` (at most `limit`), read with no link followed."""
        fd = self.open_regular(raw)
        try:
            chunks: list[bytes] = []
            left = limit if limit is not None else -1
            while left != 0:
                chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                if left > 0:
                    left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def kind(self, raw: str | Path) -> str | None:
        """ "file", "folder", "link" or "other" for the entry itself, None when nothing is
        there. A link on the way there is `Refused`."""
        names = self._strict_names(raw)
        if not names:
            return "folder"
        shown = "/".join(names)
        try:
            parent = self._strict_dir(names[:-1], shown)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            info = os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        finally:
            self._close(parent)
        if stat.S_ISREG(info.st_mode):
            return "file"
        if stat.S_ISDIR(info.st_mode):
            return "folder"
        return "link" if stat.S_ISLNK(info.st_mode) else "other"

    def entries(self, raw: str | Path) -> Entries:
        """The folder `raw`'s real folders and regular files, sorted; each link or special
        file is left out and said. A folder that is missing lists as empty."""
        names = self._strict_names(raw)
        shown = "/".join(names)
        try:
            start = self._strict_dir(names, shown or ".")
        except (FileNotFoundError, NotADirectoryError):
            return Entries((), (), ())
        try:
            listing = os.open(".", LIST_FLAGS, dir_fd=start)
        finally:
            self._close(start)
        folders: list[str] = []
        files: list[str] = []
        refused: list[str] = []
        prefix = f"{shown}/" if shown else ""
        try:
            with os.scandir(listing) as found:
                for entry in found:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                    elif entry.is_file(follow_symlinks=False):
                        files.append(entry.name)
                    elif entry.is_symlink():
                        refused.append(self._link_words(prefix + entry.name, prefix + entry.name))
                    else:
                        refused.append(
                            f"{prefix}{entry.name} is not a regular file; {ONLY_REGULAR}"
                        )
        finally:
            os.close(listing)
        return Entries(tuple(sorted(folders)), tuple(sorted(files)), tuple(sorted(refused)))


# --- the readers' calls: one open of the product folder each ---------------------------------


@contextlib.contextmanager
def opened(root: Path) -> Iterator[Folder]:
    """The product folder open for several reads (a listing of many files)."""
    top = Folder(root)
    try:
        yield top
    finally:
        top.close()


def read_bytes(root: Path, path: Path | str, limit: int | None = None) -> bytes:
    """The regular file at `path` (relative to `root`, or absolute inside it), read with no
    link followed at any name below `root`."""
    with opened(root) as top:
        return top.regular_bytes(path, limit)


def read_text(root: Path, path: Path | str) -> str:
    """`read_bytes` as UTF-8 text (UnicodeDecodeError as `Path.read_text` raises it)."""
    return read_bytes(root, path).decode("utf-8")


def kind(root: Path, path: Path | str) -> str | None:
    """What is at `path` itself: "file", "folder", "link", "other", or None."""
    try:
        with opened(root) as top:
            return top.kind(path)
    except FileNotFoundError:
        return None


def is_file(root: Path, path: Path | str) -> bool:
    """True for a regular file reached with no link at any name (a link to one is not)."""
    try:
        return kind(root, path) == "file"
    except Refused:
        return False


def is_dir(root: Path, path: Path | str) -> bool:
    """True for a real folder reached with no link at any name (a link to one is not)."""
    try:
        return kind(root, path) == "folder"
    except Refused:
        return False


def entries(root: Path, path: Path | str) -> Entries:
    try:
        with opened(root) as top:
            return top.entries(path)
    except FileNotFoundError:
        return Entries((), (), ())


def within(root: Path, path: Path) -> Path | None:
    """`root` when `path` lies inside it (as written, before any link), else None: where a
    reader of role, skill and routine files takes the product's strict reading, and where it
    reads a file of hers or sdd's own (a user pack, a shipped template) as it is."""
    given = Path(os.path.abspath(root)).parts
    return root if Path(os.path.abspath(path)).parts[: len(given)] == given else None
