"""The one process reaper: nothing a child started outlives it.

A child runs in a process group (a session) of its own, which is killed whole when it is done;
sdd is the subreaper of what escaped the group (a helper in a session of its own), so those
are found below sdd in /proc, killed and reaped too. While a child runs, sdd is not dumpable, so
a child of the same user cannot read sdd's environment through /proc/PPID/environ. Used by the
sandbox's commands and by MCP stdio servers.

An MCP server kept for a run is a child that outlives one command: it is `keep`-ed, so that the
cleanup after a command leaves it (and what runs in its group) alone, and its keeper ends it
when the run ends. What escapes its group is still ended by the next cleanup."""

from __future__ import annotations

import os
import signal
import sys
import time
from contextlib import suppress

PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
PR_SET_CHILD_SUBREAPER = 36

_subreaper_set = False
_kept: set[int] = set()  # children that live until their keeper ends them (see keep)


def _prctl(option: int, value: int) -> int | None:
    """prctl(2) on Linux, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def become_subreaper() -> bool:
    """Make sdd the parent every orphan below it is handed to (Linux); once per process."""
    global _subreaper_set
    if not _subreaper_set:
        _subreaper_set = _prctl(PR_SET_CHILD_SUBREAPER, 1) == 0
    return _subreaper_set


def set_dumpable(on: bool) -> bool:
    """Set sdd's dumpable flag (Linux). Gives back whether the flag was on before (and so is to
    be put back); False where there is no such flag."""
    was = _prctl(PR_GET_DUMPABLE, 0)
    if was is None:
        return False
    _prctl(PR_SET_DUMPABLE, 1 if on else 0)
    return was == 1


def kill_group(group: int) -> None:
    """Kill a process group whole; one that is gone already is no error."""
    if group > 1:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def keep(pid: int) -> None:
    """Spare the child `pid` and everything below it from `end_descendants` until `let_go`: it
    is a server kept for a run, which its keeper ends when the run ends."""
    _kept.add(pid)


def let_go(pid: int) -> None:
    _kept.discard(pid)


def children_of(parents: set[int]) -> dict[int, tuple[str, str]]:
    """The processes whose parent is one of `parents`, from /proc: pid -> (name, state)."""
    found: dict[int, tuple[str, str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        with suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{entry}/stat", "rb") as handle:
                raw = handle.read()
            name = raw[raw.find(b"(") + 1 : raw.rfind(b")")].decode(errors="replace")
            fields = raw.rsplit(b")", 1)[1].split()
            if int(fields[1]) in parents:
                found[int(entry)] = (name, fields[0].decode())
    return found


def _below(roots: set[int], before: set[int]) -> dict[int, tuple[str, str]]:
    level = {p: v for p, v in children_of(roots).items() if p not in before}
    found: dict[int, tuple[str, str]] = {}
    while level:
        found.update(level)
        level = {p: v for p, v in children_of(set(level)).items() if p not in found}
    return found


def _reap(pids: set[int]) -> None:
    deadline = time.monotonic() + 1.0
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours to reap: its own parent will
                done = pid
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.005)


def end_descendants(before: frozenset[int] | set[int] = frozenset()) -> bool:
    """Kill and reap every process below sdd that was not there `before` (orphans handed to it
    as subreaper, and their children). True when one of them was still running the child's
    work (not a zombie, and not bubblewrap's own monitor on its way out). A kept child and its
    own children are left to their keeper."""
    running = False
    for _ in range(20):
        found = _below({os.getpid()}, set(before) | _kept)
        if not found:
            return running
        running = running or any(state != "Z" and name != "bwrap" for name, state in found.values())
        for pid in found:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap(set(found))
    return running
