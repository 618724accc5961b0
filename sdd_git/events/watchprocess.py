"""The watcher as a process: one per repository, in the foreground or detached, and stopped.

- `.sdd/local/watch.lock` names the watcher that holds it (lockfile.hold): a second watcher is
  refused with the holder's pid and start time; a holder that died is taken over.
- `.sdd/local/watch.pid` holds the pid of the running watcher, written once it watches (so a
  `--detach` that returned means watching), removed when it exits.
- `.sdd/local/watch.log` is where a detached watcher writes what it would print.

SIGTERM or SIGINT stops it: the observer first, then a routine in progress gets a grace period to
finish; a second signal stops at once. Events are files written before anything runs, so an
event whose routine did not finish stays pending and the next worker takes it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from sdd_git import lockfile, statefolders
from sdd_git.errors import LockError, SddError
from sdd_git.events.sources.emit import Say, say_on_stderr, stamp
from sdd_git.events.watcher import DEFAULT_GRACE_SECONDS, Watcher
from sdd_git.recordjson import record_json
from sdd_git.root import Root

START_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 60.0


def lock_path(root: Root) -> Path:
    return root.local / "watch.lock"


def pid_path(root: Root) -> Path:
    return root.local / "watch.pid"


def log_path(root: Root) -> Path:
    return root.local / "watch.log"


@dataclass(frozen=True)
class WatcherStatus:
    running: bool
    pid: int | None = None
    holder: str | None = None  # "pid N on HOST (sdd watch) since T"
    since: str | None = None

    def as_json(self) -> dict[str, object]:
        return record_json(self, omit=("holder",))


def _process_gone(pid: int) -> bool:
    """Not running: no such process, or a zombie waiting for its parent to read its exit."""
    return not lockfile.pid_alive(pid)


def status(root: Root) -> WatcherStatus:
    """Whether a watcher holds this repository's lock, and which."""
    path = lock_path(root)
    if not path.exists():
        return WatcherStatus(False)
    text, stale = lockfile.describe_holder(path)
    try:
        holder = json.loads(lockfile.read_holder_text(path))
    except (OSError, ValueError):
        holder = {}
    pid = holder.get("pid") if isinstance(holder, dict) else None
    if stale or not isinstance(pid, int) or _process_gone(pid):
        return WatcherStatus(False)
    since = holder.get("since") if isinstance(holder.get("since"), str) else None
    return WatcherStatus(True, pid, text, since)


def _refuse_second(root: Root) -> None:
    current = status(root)
    if current.running:
        raise SddError(
            f"a watcher already watches this repository: {current.holder}",
            hint="one watcher per repository; stop it with: sdd watch --stop",
        )


def run_watcher(
    root: Root, *, grace: float = DEFAULT_GRACE_SECONDS, say: Say = say_on_stderr
) -> int:
    """Watch until SIGTERM or SIGINT; 0 once stopped. Holds the watcher lock throughout."""
    try:
        with lockfile.hold(
            lock_path(root),
            wait_seconds=0,
            stale_hint="a watcher that died held it; starting again takes it over",
        ):
            return _watch_holding_lock(root, grace, say)
    except LockError:
        _refuse_second(root)
        raise


def _watch_holding_lock(root: Root, grace: float, say: Say) -> int:
    stop = threading.Event()
    now = threading.Event()
    watcher = Watcher(root, say=say)

    def on_signal(number: int, frame: FrameType | None) -> None:
        if stop.is_set():
            now.set()  # a second signal: leave the routine in progress, its event stays pending
        stop.set()
        watcher.wake()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGINT):
            previous[number] = signal.signal(number, on_signal)
    pid_file = pid_path(root)
    try:
        watcher.start()
        from sdd_git.atomicfile import write_text_atomic

        write_text_atomic(pid_file, f"{os.getpid()}\n")
        if sys.stderr.isatty():
            say("Ctrl-C stops it (or, from another terminal: sdd watch --stop)")
        watcher.run(stop)
        say(f"{stamp()} stopping")
        watcher.close(grace, now.is_set)
    finally:
        with contextlib.suppress(OSError, ValueError):
            if int(pid_file.read_text(encoding="utf-8").strip()) == os.getpid():
                pid_file.unlink()
        for number, handler in previous.items():
            signal.signal(number, handler)
    say(f"{stamp()} stopped")
    return 0


def detach(root: Root, *, grace: float = DEFAULT_GRACE_SECONDS) -> int:
    """Start the watcher in the background (its own session, stdin from /dev/null, output to
    the log) and return its pid once it watches."""
    _refuse_second(root)
    log = log_path(root)
    statefolders.make_folder(log.parent)
    started_at = time.time()
    # -P: `python -m` run in the product folder would put it first on the import path, and a
    # module there (yaml.py, watchdog.py, a branch's sdd_git/) would run with all her rights.
    command = [sys.executable, "-P", "-m", "sdd_git", "-C", str(root.path), "watch"]
    with open(log, "ab") as output:
        child = subprocess.Popen(
            [*command, "--grace", f"{grace:g}"],
            cwd=root.path,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        code = child.poll()
        if code is not None:
            raise SddError(
                f"the watcher did not start (exit {code}): {_last_lines(log, started_at)}",
                hint=f"see {log}",
            )
        if _read_pid(root) == child.pid:
            return child.pid
        time.sleep(0.05)
    raise SddError(
        f"the watcher (pid {child.pid}) has not started watching after {START_TIMEOUT_SECONDS:g}s",
        hint=f"see {log}; stop it with: sdd watch --stop",
    )


def _last_lines(log: Path, since: float) -> str:
    with contextlib.suppress(OSError):
        if log.stat().st_mtime >= since:
            lines = [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
            errors = [ln for ln in lines[-10:] if ln.startswith(("error:", "hint:"))]
            return " ".join(errors or lines[-2:])
    return "no output"


def _read_pid(root: Root) -> int | None:
    try:
        return int(pid_path(root).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def stop(root: Root, *, timeout: float = STOP_TIMEOUT_SECONDS) -> int | None:
    """SIGTERM the running watcher and wait until it has exited; its pid, or None when no
    watcher was running. The pid is the lock holder's (checked against reuse), not only the
    pid file's, so a stale pid file never signals a stranger."""
    current = status(root)
    if not current.running or current.pid is None:
        with contextlib.suppress(OSError):
            pid_path(root).unlink()
        return None
    pid = current.pid
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _process_gone(pid):
            return pid
        time.sleep(0.05)
    raise SddError(
        f"the watcher (pid {pid}) has not stopped after {timeout:g}s: a routine may be running",
        hint=f"to stop it at once (the routine's event stays pending): kill -TERM {pid}",
    )
