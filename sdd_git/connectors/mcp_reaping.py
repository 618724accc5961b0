"""Nothing an MCP stdio server started outlives the call, and no server reads sdd's own
environment while it runs: its process group is ended after it, sdd is the subreaper of what
escaped the group (a helper in a session of its own), and sdd is not dumpable meanwhile.

Under bubblewrap the server's pid namespace already ends with it; these hold for every other
launch (Landlock, Seatbelt, `sandbox: off`, no sandbox)."""

from __future__ import annotations

import os
import signal
from contextlib import suppress
from pathlib import Path


def end_group(pid_file: Path) -> None:
    """Kill whatever is left of the server's process group (a helper it started and left).
    The SDK already stopped the server itself; this catches what outlived it."""
    try:
        group = int(pid_file.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return
    if group > 1:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


PR_SET_CHILD_SUBREAPER = 36
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4


def set_dumpable(on: bool) -> bool:
    """Linux: while a server runs, sdd's own process is not dumpable, so a server of the same
    user cannot read sdd's environment through /proc/PPID/environ (the scrubbed environment it
    was started with would mean little otherwise). Gives back whether the flag was on before
    (and so is to be put back); False where there is no such flag."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        was = bool(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1)
        libc.prctl(PR_SET_DUMPABLE, 1 if on else 0, 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return was


def become_subreaper() -> bool:
    """Make sdd the parent every orphan below it is handed to (Linux): a helper the server put
    in a session of its own (`setsid`) leaves its process group, but not sdd's care."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def children_of(parents: set[int]) -> set[int]:
    """The processes whose parent is one of `parents` (from /proc)."""
    found: set[int] = set()
    with suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            with suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    raw = handle.read()
                if int(raw.rsplit(b")", 1)[1].split()[1]) in parents:
                    found.add(int(entry))
    return found


def end_orphans(before: set[int]) -> None:
    """Kill and reap what the call left below sdd that was not there before it: the server's
    helpers that escaped its process group, and theirs."""
    import time

    for _ in range(5):
        level = children_of({os.getpid()}) - before
        found: set[int] = set()
        while level:
            found |= level
            level = children_of(level) - found
        if not found:
            return
        for pid in found:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 1.0
        waiting = set(found)
        while waiting and time.monotonic() < deadline:
            for pid in list(waiting):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:  # not ours to reap: its own parent will
                    done = pid
                if done:
                    waiting.discard(pid)
            if waiting:
                time.sleep(0.005)
