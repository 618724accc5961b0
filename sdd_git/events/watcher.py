"""The watcher, `sdd watch`: turns what happens in the repository into events, then runs them.

It follows, with watchdog (inotify on Linux):
- the git refs (`refs/` and `packed-refs`): the main branch, local or a remote's, moving to a new
  commit writes `push`, and a merge commit arriving on the local main writes `pr-merged`;
- the build result files named in `.sdd/config.yaml` (`watch.build_results`): a failed one while
  the main branch is checked out writes `main-build-failed`;
- the paths a `file-changed GLOB` routine listens for;
- role, skill and routine files, checked on save, mistakes printed with file and line;
- schedules (events/sources/schedules.py).

Each source is a module of events/sources/; this module is the loop that joins them.

An event is written only when an unpaused routine listens for it, and always before anything
runs; the worker (events/worker.py) then runs it in a thread of this process, so no Python start
is paid per event. A burst of file events (an editor's save is several) is handled once, after
a short quiet window.

Not the whole tree is watched: the root itself (its files, and folders appearing or going), the
git folder's refs, `.sdd/`, the skill and template folders, and the top-level folders a glob can
reach (all of them only when a glob starts with a wildcard). So `node_modules/` and
`.git/objects/` cost no watches unless a glob asks for them. A top-level folder deleted and made
again is watched again, and the files already in it are looked at; deeper folders are followed
by watchdog's recursive watch."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError, SddError
from sdd_git.events.sources.builds import build_result_globs, check_build_result, is_build_result
from sdd_git.events.sources.emit import Emitter, Say, say_on_stderr, stamp
from sdd_git.events.sources.files import ROUTINE_FILES, check_file, file_changed
from sdd_git.events.sources.refs import Refs, git_folders
from sdd_git.events.sources.schedules import Clock, Schedules, fire_schedules, slot_text, utc_now
from sdd_git.events.workerthread import Work, WorkerThread
from sdd_git.root import Root
from sdd_git.routines.routine import Routine, glob_matches, load_routines, main_branch

QUIET_SECONDS = 0.05  # a burst is over when nothing moved for this long...
MAX_WAIT_SECONDS = 0.1  # ...or this long after its first event, whichever comes first
REF_POLL_SECONDS = 1.0  # refs are re-read this often too, in case an event was missed
IDLE_SECONDS = 1.0
DEFAULT_GRACE_SECONDS = 10.0

# Never events: the queue and run logs are written by sdd itself (a routine listening for "**"
# would otherwise fire itself for ever).
IGNORED_PREFIXES = (".git/", ".sdd/local/", ".sdd/role-runs/")
# Folders watched whatever the globs say: where roles, skills and templates live (and every folder
# in .sdd but the two sdd writes to all the time, which are never watched at all).
ALWAYS_WATCHED = ("templates", ".agents", ".claude", ".github")
NEVER_WATCHED_IN_SDD = ("local", "role-runs")


class Watcher:
    """One repository's watcher. `start()`, then `run(stop)` until `stop` is set, then `close()`."""

    def __init__(
        self,
        root: Root,
        *,
        clock: Clock = utc_now,
        work: Work | None = None,
        say: Say = say_on_stderr,
        quiet: float = QUIET_SECONDS,
        max_wait: float = MAX_WAIT_SECONDS,
    ) -> None:
        from sdd_git.connectors.tokens import masker_for

        self.root = root
        mask = masker_for(root.path)
        # What it prints goes to a terminal or watch.log, which roles may read: a path or a
        # ref naming a secret is masked like every log.
        self.say: Say = lambda line: say(mask(line))
        self.quiet = quiet
        self.max_wait = max_wait
        self.schedules = Schedules(root, clock)
        self._clock = clock
        self._worker = WorkerThread(root, work, self.say)
        self._changes: dict[str, bool] = {}  # path -> is a folder
        self._gone: set[Path] = set()  # watched folders deleted or moved away since the last turn
        self._first = 0.0
        self._last = 0.0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._observer: Any = None
        self._handler: Any = None
        self._watched: dict[Path, tuple[Any, tuple[int, int]]] = {}  # folder -> (watch, inode)
        self._routines: list[Routine] = []
        self._globs: tuple[str, ...] = ()
        self._git = git_folders(root)
        self._emit = Emitter(root, self.say, self._active)
        self._refs = Refs(self._git, self._emit)
        self._next_ref_poll = 0.0
        self._local_text = str(root.local)
        self._quiet_prefixes = (
            str(root.local) + os.sep,
            str(root.sdd / "role-runs") + os.sep,
        )

    # --- starting and stopping ------------------------------------------------------------------

    def start(self) -> None:
        import warnings

        from watchdog.observers import Observer

        # watchdog warns when a folder it watches is moved and watched again: its own
        # bookkeeping, nothing a person can act on, and noise in the log.
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="watchdog")
        self._read_config()
        self._read_routines()
        self._refs.seen = self._refs.read()
        self._observer = Observer()
        self._handler = _make_handler(self)
        self._schedule(self._git.git_dir, recursive=False)
        if self._git.common_dir != self._git.git_dir:
            self._schedule(self._git.common_dir, recursive=False)
        self._schedule(self._git.common_dir / "refs", recursive=True)
        self._schedule(self.root.path, recursive=False)
        self._schedule(self.root.sdd, recursive=False)
        try:
            self._sync_folders(look_inside_new=False)
            self._observer.start()
        except OSError as exc:
            self._observer.stop()
            raise SddError(
                f"cannot watch {self.root.path}: {exc.strerror or exc}",
                hint="on Linux, raise the inotify limits, e.g. "
                "sudo sysctl fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=1024",
            ) from None
        self._worker.start()
        self._worker.kick()  # events left pending by an earlier watcher or hook are taken now
        self._next_ref_poll = time.monotonic() + REF_POLL_SECONDS
        self.say(self._summary())

    def run(self, stop: threading.Event) -> None:
        """Handle changes, schedules and ref moves until `stop` is set."""
        while not stop.is_set():
            self._wake.wait(self._wait_seconds())
            self._wake.clear()
            if stop.is_set():
                break
            self.step()

    def wake(self) -> None:
        self._wake.set()

    def step(self) -> None:
        """One turn of the loop. A failure is printed and the watcher goes on: the events
        already written are on disk, and the next change or ref check tries again."""
        try:
            self._step()
        except SddError as exc:
            self._emit.problem(exc.message, exc.hint)
        except Exception as exc:
            self._emit.problem(f"{type(exc).__name__}: {exc}", "the watcher goes on watching")

    def _step(self) -> None:
        batch = self._take_batch()
        if batch:
            self._process(batch)
        if self.schedules.due() and fire_schedules(self._emit, self.schedules):
            self._worker.kick()
        if time.monotonic() >= self._next_ref_poll:
            self._next_ref_poll = time.monotonic() + REF_POLL_SECONDS
            if self._refs.check():
                self._worker.kick()

    def close(
        self, grace: float = DEFAULT_GRACE_SECONDS, now: Callable[[], bool] | None = None
    ) -> bool:
        """Stop watching, then let a routine in progress finish for up to `grace` seconds. An
        event not finished stays pending on disk for the next worker. True when nothing runs."""
        if self._observer is not None:
            self._observer.stop()
            with contextlib.suppress(RuntimeError):
                self._observer.join(timeout=5)
        if self._worker.busy:
            self.say(
                f"{stamp()} waiting up to {grace:g}s for the routine in progress "
                "(stop again to leave its event pending now)"
            )
        finished = self._worker.close(grace, now or (lambda: False))
        if not finished:
            self.say(f"{stamp()} a routine was still running: its event stays pending")
        return finished

    @property
    def events_written(self) -> int:
        return self._emit.events_written

    @property
    def worker_busy(self) -> bool:
        return self._worker.busy

    # --- what is watched ------------------------------------------------------------------------

    def _summary(self) -> str:
        parts = [f"watching {self.root.path}", f"refs of {self._refs.main}"]
        if self._globs:
            parts.append("build results " + ", ".join(self._globs))
        scheduled = self.schedules.upcoming()
        if scheduled:
            soonest = scheduled[0]
            parts.append(
                f"{len(scheduled)} schedule(s), next {soonest.routine.role}/"
                f"{soonest.routine.name} at {slot_text(soonest.slot)} (UTC)"
            )
        changed = [r.argument for r in self._active() if r.event_kind == "file-changed"]
        if changed:
            parts.append("files " + ", ".join(str(g) for g in changed))
        return f"{stamp()} " + "; ".join(parts) + "; role, skill and routine files"

    def _schedule(self, folder: Path, recursive: bool) -> None:
        from watchdog.events import (
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
            FileClosedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
        )

        if not folder.is_dir():
            return
        kinds: list[Any] = [
            FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileDeletedEvent,
            FileMovedEvent, DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
        ]  # fmt: skip
        watch = self._observer.schedule(
            self._handler, str(folder), recursive=recursive, event_filter=kinds
        )
        info = folder.stat()
        self._watched[folder] = (watch, (info.st_dev, info.st_ino))

    def _wanted_folders(self) -> set[Path]:
        """The folders to watch recursively: the folders in .sdd (but local/ and role-runs/),
        and the top-level folders a glob can reach."""
        patterns = [*self._globs, *(str(r.argument) for r in self._active()
                                    if r.event_kind == "file-changed")]  # fmt: skip
        names = set(ALWAYS_WATCHED)
        every = False
        for pattern in patterns:
            first, slash, _rest = pattern.partition("/")
            if not slash and "**" not in first:
                continue  # a file at the root: the root's own watch sees it
            if any(ch in first for ch in "*?["):
                every = True
            else:
                names.add(first)
        root = self.root.path
        if every:
            with contextlib.suppress(OSError):
                names.update(p.name for p in root.iterdir() if p.is_dir())
        names.discard(".sdd")
        folders = [root / name for name in names]
        with contextlib.suppress(OSError):
            folders += [p for p in self.root.sdd.iterdir() if p.name not in NEVER_WATCHED_IN_SDD]
        found = set()
        for folder in folders:
            if folder.is_dir() and not folder.is_symlink() and not self._in_git(folder):
                found.add(folder)
        return found

    def _sync_folders(self, look_inside_new: bool) -> None:
        """Watch the wanted folders: drop watches of folders gone (or replaced), add the new ones,
        and look at the files a new folder already holds (made before its watch existed). A
        folder made again at once may get the old one's inode back, so a deletion seen by
        the observer counts too."""
        with self._lock:
            gone, self._gone = self._gone, set()
        fixed = {self._git.git_dir, self._git.common_dir, self._git.common_dir / "refs"}
        fixed.update((self.root.path, self.root.sdd))
        wanted = self._wanted_folders()
        for folder, (watch, inode) in list(self._watched.items()):
            if folder in fixed:
                continue
            try:
                info = folder.stat()
                same = (info.st_dev, info.st_ino) == inode
            except OSError:
                same = False
            if folder not in wanted or not same or folder in gone:
                with contextlib.suppress(KeyError, OSError):
                    self._observer.unschedule(watch)
                del self._watched[folder]
        for folder in sorted(wanted - set(self._watched)):
            self._schedule(folder, recursive=True)
            if look_inside_new:
                self._note_tree(folder)

    def _note_tree(self, folder: Path) -> None:
        for base, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if not self._ignored(Path(base, d))]
            for name in files:
                self.note(os.path.join(base, name), is_folder=False)

    def _in_git(self, path: Path) -> bool:
        return path.is_relative_to(self._git.git_dir) or path.is_relative_to(self._git.common_dir)

    def _relative(self, path: Path) -> str | None:
        try:
            return path.relative_to(self.root.path).as_posix()
        except ValueError:
            return None

    def _ignored(self, path: Path) -> bool:
        rel = self._relative(path)
        return rel is None or (rel + "/").startswith(IGNORED_PREFIXES)

    # --- collecting file events -----------------------------------------------------------------

    def skip_fast(self, path: str) -> bool:
        """The queue's own writes and the run logs move all the time: dropped before they wake
        anyone (from the observer's thread, so a string test and nothing more)."""
        return path.startswith(self._quiet_prefixes) or path == self._local_text

    def note(self, path: str, is_folder: bool, gone: bool = False) -> None:
        """A path moved (from the observer's thread): kept for the next burst."""
        now = time.monotonic()
        with self._lock:
            if gone and is_folder and Path(path) in self._watched:
                self._gone.add(Path(path))
            if not self._changes:
                self._first = now
            self._changes[path] = self._changes.get(path, False) or is_folder
            self._last = now
        self._wake.set()

    def _wait_seconds(self) -> float:
        with self._lock:
            if self._changes:
                until = min(self._last + self.quiet, self._first + self.max_wait)
                return max(0.0, until - time.monotonic())
        wait = IDLE_SECONDS
        due = self.schedules.next_due()
        if due is not None:
            wait = min(wait, max(0.0, (due - self._clock()).total_seconds()))
        return max(0.0, min(wait, self._next_ref_poll - time.monotonic()))

    def _take_batch(self) -> dict[str, bool]:
        with self._lock:
            if not self._changes:
                return {}
            now = time.monotonic()
            if now < self._last + self.quiet and now < self._first + self.max_wait:
                return {}
            batch, self._changes = self._changes, {}
        return batch

    # --- handling a burst -----------------------------------------------------------------------

    def _process(self, batch: dict[str, bool]) -> None:
        refs_moved = config_changed = routines_changed = folders_changed = False
        wrote = 0
        for text, is_folder in sorted(batch.items()):
            path = Path(text)
            if self._in_git(path):
                refs_moved = True
                continue
            rel = self._relative(path)
            if rel is None or (rel + "/").startswith(IGNORED_PREFIXES):
                continue
            if is_folder or path.is_dir():
                parent = rel.rpartition("/")[0]
                folders_changed = folders_changed or parent in ("", ".sdd")
                continue
            if rel == ".sdd/config.yaml":
                config_changed = True
            if any(glob_matches(g, rel) for g in ROUTINE_FILES):
                routines_changed = True
            check_file(self._emit, path, rel)
            if not path.is_file():
                # Gone again (an atomic writer's temp file, an editor's swap file) or deleted:
                # a routine could only report its source missing.
                continue
            if is_build_result(self._globs, rel):
                wrote += check_build_result(
                    self._emit, path, rel, self._refs.current_branch, self._refs.main
                )
            wrote += file_changed(self._emit, rel)
        if config_changed:
            main = self._refs.main
            self._read_config()
            if self._refs.main != main:  # another branch is main now: its commit is no move
                self._refs.seen = self._refs.read()
            folders_changed = True
        if routines_changed:
            self._routines_changed()
            folders_changed = True
        if folders_changed:
            self._sync_folders(look_inside_new=True)
        if refs_moved:
            wrote += self._refs.check()
        if wrote:
            self._worker.kick()

    def _read_config(self) -> None:
        try:
            self._globs = build_result_globs(self.root)
            self._refs.main = main_branch(self.root)
        except RecordError as exc:
            self._emit.problem(exc.message, exc.hint)

    def _read_routines(self, report: bool = True) -> None:
        routines, problems = load_routines(self.root)
        for problem in problems if report else ():  # a file saved now was checked on its own
            self._emit.problem(problem.message, problem.hint)
        self._routines = routines
        try:
            self.schedules.load(routines)
        except Exception as exc:  # a cron cronsim read at load but not now: say so, keep going
            self._emit.problem(f"schedules not read: {exc}", None)
        if not self._globs and any(r.event_kind == "main-build-failed" for r in self._active()):
            self._emit.problem(
                "a routine listens for main-build-failed, but .sdd/config.yaml names no build "
                "result files to watch",
                'add watch: {build_results: ["build/*.xml", "build/exit-code"]}',
                "warning",
            )

    def _routines_changed(self) -> None:
        from sdd_git.routines.hookindex import write_index

        self._read_routines(report=False)
        try:
            write_index(self.root)
        except SddError as exc:
            self._emit.problem(exc.message, exc.hint)

    def _active(self) -> list[Routine]:
        return [r for r in self._routines if not r.paused]

    # --- writing events -------------------------------------------------------------------------


def _make_handler(watcher: Watcher) -> Any:
    """A watchdog handler forwarding to the watcher; made here so that importing this module
    does not import watchdog."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            gone = event.event_type in ("deleted", "moved")
            for raw, went in ((event.src_path, gone), (event.dest_path, False)):
                if raw:
                    path = os.fsdecode(raw)
                    if not watcher.skip_fast(path):
                        watcher.note(path, event.is_directory, went)

    return Handler()
