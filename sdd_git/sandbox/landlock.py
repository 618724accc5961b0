"""Landlock: the Linux kernel's own file-system and network allow-list, as a second layer inside
bubblewrap or as the fallback where bubblewrap cannot make a sandbox. A small ctypes binding of
the three syscalls; no dependency.

What it enforces, by ABI version (`abi()`): every file-system write right the kernel knows is
handled, so a write is refused unless a rule grants it beneath the path; from ABI 4, TCP bind and
connect are refused when the policy says no network; from ABI 6, the command cannot signal
processes outside its sandbox (sdd) nor reach their abstract unix sockets.

Its limits, plainly:

- Reads are not restricted. Landlock is an allow-list: a right granted on a folder holds for the
  whole tree below it, so it cannot carve a hidden credential file out of a readable home. The
  bubblewrap backend hides credentials; Landlock alone does not.
- Rights are inherited by a whole hierarchy and cannot be taken away below a granted folder. So
  the product folder's root gets no write right; each entry directly inside it that is not
  read-only (nor holds a read-only path) gets one instead. As a consequence a new file or folder
  directly in the product folder's top (or directly in a folder that holds a read-only path, such
  as `.venv` when `.venv/lib` is read-only) cannot be created, and such an entry cannot be deleted
  or renamed. Entries made after `prepare` get no rule of their own.
- A symbolic link directly in the product folder gets no rule: a rule binds to the inode it names,
  so a link to /etc would grant /etc. Writes through such a link are refused.
- Network rules filter TCP ports only (UDP and other protocols are not covered); the bubblewrap
  backend's network namespace is the real network wall.
- A process under Landlock cannot mount anything, so bubblewrap started inside it fails; stack
  Landlock inside bubblewrap (applied by the command's own process), never around it.

Everything that allocates or opens files happens in `prepare`, in the parent; `Prepared.apply`
runs in the forked child (`subprocess.Popen(preexec_fn=prepared.apply)`) and only makes syscalls.
"""

from __future__ import annotations

import ctypes
import os
import platform
import stat
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from sdd_git.errors import SddError
from sdd_git.sandbox.policy import Policy

# <linux/landlock.h>. The syscall numbers come from the generic table, shared by x86_64 and
# aarch64 (and most other architectures, but not all: alpha and mips differ).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_ARCHITECTURES = ("x86_64", "aarch64")
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_NAMES = {
    WRITE_FILE: "write_file",
    REMOVE_DIR: "remove_dir",
    REMOVE_FILE: "remove_file",
    MAKE_CHAR: "make_char",
    MAKE_DIR: "make_dir",
    MAKE_REG: "make_reg",
    MAKE_SOCK: "make_sock",
    MAKE_FIFO: "make_fifo",
    MAKE_BLOCK: "make_block",
    MAKE_SYM: "make_sym",
    REFER: "refer",
    TRUNCATE: "truncate",
    IOCTL_DEV: "ioctl_dev",
}
# The kernel refuses a rule on a non-folder that names a folder-only right (EINVAL).
_FILE_RIGHTS = WRITE_FILE | TRUNCATE | IOCTL_DEV
_DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx")
_DEVICE_FOLDERS = ("/dev/pts",)  # not /dev/shm: it is shared by the whole machine


def write_rights(version: int) -> int:
    """Every file-system write right the given ABI knows: what the ruleset handles."""
    if version <= 0:
        return 0
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
    rights |= MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def rights_names(rights: int) -> list[str]:
    return [name for bit, name in _NAMES.items() if rights & bit]


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),  # ABI 4
        ("scoped", ctypes.c_uint64),  # ABI 6
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is __attribute__((packed)): 12 bytes
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


@cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    libc.close.restype = ctypes.c_int
    return libc


@cache
def abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (not Linux, too old, disabled)."""
    if sys.platform != "linux" or platform.machine() not in _ARCHITECTURES:
        return 0
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(
        ctypes.c_long(_SYS_CREATE_RULESET),
        ctypes.c_void_p(None),
        ctypes.c_long(0),
        ctypes.c_long(_CREATE_RULESET_VERSION),
    )
    # ENOSYS: the kernel predates Landlock; EOPNOTSUPP: built in but not enabled at boot.
    return int(version) if version > 0 else 0


@dataclass(frozen=True)
class Rule:
    """Write rights granted beneath one path."""

    path: Path
    access: int
    folder: bool
    # Entries of the product folder are opened without following a link: one swapped in for a
    # folder after the scan must not carry the grant to its target. sdd's own paths may be links.
    follow: bool


@dataclass(frozen=True)
class Ruleset:
    version: int
    handled_fs: int
    handled_net: int  # handled and granted on no port: no TCP bind or connect
    scoped: int
    rules: tuple[Rule, ...]


def _same(path: Path) -> set[str]:
    """The spellings a path is compared by: as written and with its links resolved."""
    return {os.path.normpath(os.path.abspath(path)), os.path.realpath(path)}


def _product_rules(policy: Policy, everything: int) -> list[Rule]:
    blocked: set[str] = set()
    for path in (*policy.read_only, *policy.hidden):
        blocked |= _same(path)
    # Walked by its real spelling, so every entry compares with the real spelling of a blocked path.
    product = os.path.realpath(policy.product)
    if _same(policy.product) & blocked:
        return []
    inside = [path for path in blocked if path.startswith(product + os.sep)]
    rules: list[Rule] = []

    def walk(folder: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            return  # unreadable: nothing beneath it is granted, which fails closed
        for entry in entries:
            path = entry.path
            if path in blocked or entry.is_symlink():
                continue
            is_folder = entry.is_dir(follow_symlinks=False)
            if is_folder and any(other.startswith(path + os.sep) for other in inside):
                walk(path)  # it holds a read-only path: grant its other entries one by one
            elif is_folder:
                rules.append(Rule(Path(path), everything, folder=True, follow=False))
            else:
                rules.append(
                    Rule(Path(path), everything & _FILE_RIGHTS, folder=False, follow=False)
                )

    walk(product)
    return rules


def ruleset(policy: Policy, version: int | None = None) -> Ruleset:
    """The rules the policy becomes under the given ABI (default: this kernel's)."""
    version = abi() if version is None else version
    everything = write_rights(version)
    rules = _product_rules(policy, everything)
    rules.append(Rule(policy.scratch, everything, folder=True, follow=True))
    for name in _DEVICE_FILES:
        if os.path.exists(name) and not os.path.isdir(name):
            rules.append(Rule(Path(name), everything & _FILE_RIGHTS, folder=False, follow=True))
    for name in _DEVICE_FOLDERS:
        if os.path.isdir(name):
            rules.append(Rule(Path(name), everything, folder=True, follow=True))
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 and not policy.network else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    return Ruleset(version, everything, handled_net, scoped, tuple(rules))


def describe(policy: Policy, version: int | None = None) -> list[str]:
    """The rules in words: for tests, and to see what a command was given."""
    rules = ruleset(policy, version)
    if rules.version <= 0:
        return ["no Landlock on this kernel: nothing is enforced"]
    lines = [f"Landlock ABI {rules.version}"]
    lines.append("handled: " + " ".join(rights_names(rules.handled_fs)))
    lines.append("reads: not restricted")
    for rule in rules.rules:
        kind = "folder" if rule.folder else "file"
        lines.append(f"allow {kind} {rule.path}: " + " ".join(rights_names(rule.access)))
    if rules.handled_net:
        lines.append("network: no TCP bind or connect on any port")
    elif rules.version >= 4:
        lines.append("network: not restricted (the policy allows it)")
    else:
        lines.append("network: not restricted (this ABI has no network rules)")
    if rules.scoped:
        lines.append("scoped: no signals or abstract unix sockets outside the sandbox")
    return lines


def _attr_size(version: int) -> int:
    # The kernel accepts a shorter struct from an older ABI; it rejects fields it does not know.
    if version >= 6:
        return ctypes.sizeof(_RulesetAttr)
    if version >= 4:
        return _RulesetAttr.scoped.offset
    return _RulesetAttr.handled_access_net.offset


def _open(rule: Rule) -> int | None:
    flags = os.O_PATH | os.O_CLOEXEC | (0 if rule.follow else os.O_NOFOLLOW)
    try:
        fd = os.open(rule.path, flags)
    except OSError:
        return None  # gone since the scan: no grant
    kind = os.fstat(fd).st_mode
    if stat.S_ISDIR(kind) != rule.folder or stat.S_ISLNK(kind):
        os.close(fd)  # changed since the scan; a wrong kind would fail the rule (EINVAL)
        return None
    return fd


class Prepared:
    """A ruleset ready to apply in a child: open descriptors and the kernel structs, built in the
    parent. `close()` (or leaving a `with` block) closes the descriptors after the Popen."""

    __slots__ = ("_attr", "_attr_size", "_fds", "_rules", "ruleset")

    def __init__(self, rules: Ruleset) -> None:
        self.ruleset = rules
        self._attr = _RulesetAttr(rules.handled_fs, rules.handled_net, rules.scoped)
        self._attr_size = _attr_size(rules.version)
        self._fds: list[int] = []
        self._rules: list[_PathBeneathAttr] = []
        try:
            for rule in rules.rules:
                fd = _open(rule)
                if fd is not None:
                    self._fds.append(fd)
                    self._rules.append(_PathBeneathAttr(rule.access, fd))
        except BaseException:
            self.close()
            raise
        _libc()  # loaded here so the child does not dlopen

    def apply(self) -> None:
        """Restrict the calling process (and every process it starts) for good."""
        libc = _libc()
        # Both calls are variadic in C: every argument goes as a full long, as the kernel reads it.
        zero = ctypes.c_ulong(0)
        if libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), zero, zero, zero):
            _raise("prctl(PR_SET_NO_NEW_PRIVS)")
        ruleset_fd = libc.syscall(
            ctypes.c_long(_SYS_CREATE_RULESET),
            ctypes.byref(self._attr),
            ctypes.c_long(self._attr_size),
            ctypes.c_long(0),
        )
        if ruleset_fd < 0:
            _raise("landlock_create_ruleset")
        fd = ctypes.c_long(ruleset_fd)
        for attr in self._rules:
            added = libc.syscall(
                ctypes.c_long(_SYS_ADD_RULE),
                fd,
                ctypes.c_long(_RULE_PATH_BENEATH),
                ctypes.byref(attr),
                ctypes.c_long(0),
            )
            if added != 0:
                _raise("landlock_add_rule")
        if libc.syscall(ctypes.c_long(_SYS_RESTRICT_SELF), fd, ctypes.c_long(0)) != 0:
            _raise("landlock_restrict_self")
        libc.close(ctypes.c_int(ruleset_fd))

    def close(self) -> None:
        fds, self._fds = self._fds, []
        for fd in fds:
            os.close(fd)

    def __enter__(self) -> Prepared:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _raise(call: str) -> NoReturn:
    number = ctypes.get_errno()
    raise OSError(number, f"{call}: {os.strerror(number)}")


def prepare(policy: Policy) -> Prepared:
    """Open what the child's `apply` needs. Raises when this kernel has no Landlock."""
    version = abi()
    if version <= 0:
        raise SddError(
            "this kernel has no Landlock",
            hint="Linux 5.13 or later with Landlock enabled (lsm=landlock,...) is needed",
        )
    return Prepared(ruleset(policy, version))
