"""A lock file that names its holder, so a blocked writer can say who holds it.

A lock whose holder is provably dead on this host (its pid is gone, or now belongs to a process
that started later) is taken over, and the takeover is logged beside the lock
(`takeovers.jsonl`). Taking over happens under a second, short-lived guard file, so two writers
that find the same dead holder cannot both take it."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from sdd_git.errors import LockError
from sdd_git.paths import display
from sdd_git.statefolders import StateFolderError, append, make_folder

DEFAULT_WAIT_SECONDS = 3.0
_POLL_SECONDS = 0.05


_GUARD_STALE_SECONDS = 10.0


# Where the kernel's process table is read (Linux). macOS has none: there a process's state and
# start come from `ps`. A module-level name, so that a test can point it at a missing folder.
PROC = Path("/proc")
# `ps` by its absolute path (macOS: /bin/ps; Linux: either): sdd's own process never runs a
# program found through a PATH that a planted folder could come first in.
_PS = ("/bin/ps", "/usr/bin/ps")


def _has_proc() -> bool:
    return (PROC / "self" / "stat").exists()


def _proc_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (the state first), or None."""
    try:
        with open(PROC / str(pid) / "stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _ps(pid: int, field: str) -> str | None:
    """One field `ps` shows of `pid`, or None (no such process, or no `ps`). In the C locale and
    UTC, so that two sdd processes with other settings read the same text."""
    import subprocess  # only where there is no /proc

    program = next((p for p in _PS if os.access(p, os.X_OK)), None)
    if program is None:
        return None
    try:
        done = subprocess.run(
            [program, "-o", f"{field}=", "-p", str(pid)],
            capture_output=True, text=True, timeout=10, check=False,
            env={"LC_ALL": "C", "TZ": "UTC", "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    return text if done.returncode == 0 and text else None


_own_ps_start: dict[int, int | None] = {}  # this process's start never changes: one `ps`


def _ps_start(pid: int) -> int | None:
    """When `pid` started, in UTC seconds, from `ps -o lstart` ("Mon Dec  7 13:18:04 2026")."""
    import calendar  # only where there is no /proc

    if pid == os.getpid() and pid in _own_ps_start:
        return _own_ps_start[pid]
    text = _ps(pid, "lstart")
    try:
        value = None if text is None else calendar.timegm(
            time.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
        )  # fmt: skip
    except ValueError:
        value = None
    if pid == os.getpid():
        _own_ps_start[pid] = value
    return value


def _start_time(pid: int) -> int | None:
    """When the process started, in clock ticks since boot, from /proc (Linux); else None."""
    fields = _proc_fields(pid)
    try:
        return None if fields is None else int(fields[19])
    except (ValueError, IndexError):
        return None


def _started(pid: int) -> tuple[str, int | None]:
    """When the process started, to tell a reused pid apart, and the key a holder keeps it under.

    With /proc (Linux): `started`, clock ticks since boot. Without (macOS): `started_at`, UTC
    seconds from `ps`. That one is weaker: to the second, so a pid reused within the second its
    first holder started is not told apart; and it costs a `ps` process per lock that is found
    held (this process's own is asked once). Two keys, so that ticks are never compared with
    seconds; a holder that has only the other key is judged by its pid's liveness alone."""
    if _has_proc():
        return "started", _start_time(pid)
    return "started_at", _ps_start(pid)


def _holder_text() -> str:
    return json.dumps(
        {
            **this_process(),
            "command": " ".join(["sdd", *sys.argv[1:]])[:200],
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    )


_HOLDER_BYTES = 4096  # a holder's line is under 400 bytes; more is not a holder


def read_holder_text(path: Path) -> str:
    """A lock's text, read as sdd's own small file: never through a link, never from a FIFO or
    a device (a merged `record.lock -> /dev/zero` must not hang or fill her command)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, _HOLDER_BYTES).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _read_holder(path: Path) -> dict[str, object]:
    try:
        data = json.loads(read_holder_text(path))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _refuse_odd(path: Path) -> None:
    """A lock that is a link or anything but a regular file came with the repository or from
    someone else: refused, with the fix, instead of waited on."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        what = "a link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        raise StateFolderError(
            f"{display(path)} is {what}; sdd's locks are regular files of its own (it came with "
            "the repository, or someone else put it there)",
            hint=f"remove it: rm {display(path)} (if git tracks it: git rm --cached "
            f"{display(path)})",
        )


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A killed holder stays a zombie until its parent reaps it; it holds nothing any more.
    # A state that cannot be read counts as alive: a live holder's lock is never taken.
    if _has_proc():
        fields = _proc_fields(pid)
        return not fields or fields[0] not in (b"Z", b"X")
    state = _ps(pid, "stat")
    return state is None or not state.startswith("Z")


def this_process() -> dict[str, object]:
    """What names this process to a later reader (a run log's `process`): pid, host and when
    it started, so that a reused pid is told apart (`started`, or `started_at` without /proc)."""
    key, value = _started(os.getpid())
    return {"pid": os.getpid(), "host": _host(), "started": None, key: value}


def gone(holder: dict[str, object]) -> bool:
    """Whether the process a holder names (a lock's, or `this_process()` as a log kept it) is
    provably gone: on this host, and its pid dead or now another process's. A holder on another
    host, or one that names no pid, is never called gone."""
    pid = holder.get("pid")
    if not isinstance(pid, int) or holder.get("host") != _host():
        return False
    if not pid_alive(pid):
        return True
    key, now = _started(pid)
    started = holder.get(key)
    return isinstance(started, int) and now not in (None, started)


def describe_holder(path: Path) -> tuple[str, bool]:
    """A sentence naming the lock's holder, and whether that holder is known to be gone."""
    holder = _read_holder(path)
    pid = holder.get("pid")
    host = holder.get("host")
    command = holder.get("command", "an unknown command")
    since = holder.get("since", "an unknown time")
    text = f"pid {pid} on {host} ({command}) since {since}"
    return text, gone(holder)


def _take_over(path: Path) -> bool:
    """Remove the lock at `path` when its holder is provably dead; True when it was taken."""
    guard = path.with_name(path.name + ".takeover")
    try:
        guard_fd = os.open(guard, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        with contextlib.suppress(OSError):  # a taker that died while taking
            if time.time() - guard.stat().st_mtime > _GUARD_STALE_SECONDS:
                guard.unlink()
        return False
    try:
        # Only a guard holder removes a lock it did not make, so the holder read here is the
        # one removed: nobody can release and re-take it in between.
        text, stale = describe_holder(path)
        if not stale:
            return False
        path.unlink(missing_ok=True)
        entry = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "lock": path.name,
            "dead_holder": text,
            "taken_by": json.loads(_holder_text()),
        }
        append(path.with_name("takeovers.jsonl"), (json.dumps(entry) + "\n").encode(), sync=False)
        return True
    finally:
        os.close(guard_fd)
        guard.unlink(missing_ok=True)


@contextlib.contextmanager
def hold(
    path: Path, wait_seconds: float | None = None, stale_hint: str | None = None
) -> Iterator[None]:
    """Hold the lock at `path`; wait up to `wait_seconds` for another holder, then fail.

    A lock in sdd's state is taken only in a state folder that is hers alone."""
    make_folder(path.parent)
    deadline = time.monotonic() + (DEFAULT_WAIT_SECONDS if wait_seconds is None else wait_seconds)
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            _refuse_odd(path)
            if _take_over(path):
                continue
            if time.monotonic() >= deadline:
                _raise_locked(path, stale_hint)
            time.sleep(_POLL_SECONDS)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(_holder_text())
            handle.flush()
            os.fsync(handle.fileno())
        yield
    finally:
        path.unlink(missing_ok=True)


def _raise_locked(path: Path, stale_hint: str | None = None) -> None:
    text, stale = describe_holder(path)
    if stale:
        raise LockError(
            f"{_what(path)} is locked by {text}, and that process is no longer running",
            hint=stale_hint
            or f"nothing was changed; if no sdd command is running, clear it: rm {path}",
        )
    raise LockError(
        f"{_what(path)} is locked by {text}",
        hint="nothing was changed; wait for that command to finish and try again",
    )


def _what(path: Path) -> str:
    name = path.name
    if name.startswith("role-") and name.endswith(".lock"):
        return f"the role {name[5:-5]}"
    return "the record"


def _host() -> str:
    # What socket.gethostname() returns on every POSIX system (it asks uname), without
    # importing socket on the paths that only read a holder (`sdd role runs`).
    return os.uname().nodename
