"""The watcher's worker: the event worker's `work`, run in a thread of the watcher's process, so
no Python start is paid per event."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sdd_git.errors import SddError
from sdd_git.events.sources.emit import Say, stamp
from sdd_git.root import Root

if TYPE_CHECKING:
    from sdd_git.routines.fire import Fired

Work = Callable[..., Any]


class WorkerThread:
    """Runs `work(root)` in the background, one at a time; a kick during a run runs it again after,
    so an event written meanwhile is taken."""

    def __init__(self, root: Root, work: Work | None, say: Say) -> None:
        self.root = root
        self._work = work
        self._say = say
        self._kick = threading.Event()
        self._busy = threading.Event()
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="sdd-watch-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def kick(self) -> None:
        self._kick.set()

    @property
    def busy(self) -> bool:
        return self._busy.is_set() or self._kick.is_set()

    def _loop(self) -> None:
        if self._work is None:
            self._warm()
        while True:
            self._kick.wait()
            if self._closing:
                return
            self._busy.set()
            self._kick.clear()
            try:
                self._run_once()
            finally:
                self._busy.clear()

    @staticmethod
    def _warm() -> None:
        """Import what a routine run needs now, not when the first event is waiting for it."""
        try:
            import sdd_git.events.worker  # noqa: F401
            from sdd_git.routines.fire import warm

            warm()
        except Exception:
            pass  # only a head start: the first run imports what it needs itself

    def _run_once(self) -> None:
        work = self._work
        if work is None:
            from sdd_git.events.worker import work as real_work

            work = real_work
        try:
            work(self.root, on_fired=self._fired, on_error=self._failed)
        except SddError as exc:
            self._say(f"error: {exc.message}")
            if exc.hint:
                self._say(f"hint: {exc.hint}")
        except Exception as exc:  # a bug in one run must not end the watcher; events stay queued
            self._say(f"error: the worker failed: {type(exc).__name__}: {exc}")

    def _fired(self, fired: Fired) -> None:
        run = f" (run {fired.run_id})" if fired.run_id else ""
        self._say(f"{stamp()} routine {fired.role}/{fired.routine}: {fired.message}{run}")

    def _failed(self, outcome: dict[str, Any]) -> None:
        self._say(f"error: {outcome.get('message') or outcome.get('error')}")

    def close(self, grace: float, now: Callable[[], bool]) -> bool:
        """Take no more work; wait up to `grace` seconds for a run in progress (or until `now()`
        says stop at once). True when nothing is running any more."""
        self._closing = True
        self._kick.set()
        deadline = time.monotonic() + grace
        while self._thread.is_alive() and time.monotonic() < deadline and not now():
            self._thread.join(0.05)
        return not self._thread.is_alive()
