"""The watcher's latency: from something happening in the repository to the routine's run start.

    python benchmarks/watch_bench.py [--trials 30] [--quiet-ms 50] [--max-wait-ms 100]

In a temporary sdd root (a git repository with a role from a shipped template), the watcher
runs as `sdd watch` runs it (a real watchdog observer, the real worker in a thread of the same
process, the real fire() and runner, the scripted provider), with two routines listening:
`main-build-failed` and `push main`. Each trial is one of:

- a build result: `build/exit-code` written with `1` while main is checked out;
- a ref move: `git update-ref refs/heads/main <a new commit>`, timed from before git starts.

Measured per trial, from the moment before the write (or before git starts):
- "event written": the watcher's event file on disk;
- "run started": the routine run's `run_started` line appended to its run log.
Each trial waits until the run has ended and its event is done, so trials do not overlap.
Prints a markdown table of medians and 90th percentiles in milliseconds. Goal: run started at
most 300 ms (median).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CHECKOUT))

GOAL_MS = 300.0
ROLE = "spec-steward"


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    if result.returncode != 0:
        raise SystemExit(f"watch_bench: git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))]


def wait_until(check: Callable[[], Any], seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise SystemExit("watch_bench: a trial did not finish within 30 s")
        time.sleep(0.002)


def setup(folder: Path) -> Any:
    home = folder / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n",
        encoding="utf-8",
    )
    os.environ.update({"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1"})
    for key in [k for k in os.environ if k.startswith("SDD_")]:
        del os.environ[key]
    script = folder / "model.yaml"
    script.write_text('calls:\n  - say: "Noted."\n', encoding="utf-8")
    os.environ["SDD_PROVIDER"] = f"script:{script}"

    from sdd_git.roles.manage import add
    from sdd_git.root import init_root

    root = init_root(folder / "product", product="Bench").root
    add(root, ROLE)
    routines = root.sdd / "roles" / ROLE / "routines"
    routines.mkdir(parents=True)
    for name, trigger in (("build-watch", "main-build-failed"), ("push-watch", "push main")):
        (routines / f"{name}.yaml").write_text(
            f"name: {name}\non: {trigger}\ninput: what happened\nexpected: a one-line note\n",
            encoding="utf-8",
        )
    with root.config.open("a", encoding="utf-8") as handle:
        handle.write('watch: {build_results: ["build/exit-code"]}\n')
    (root.path / "build").mkdir()
    git(root.path, "add", "-A")
    git(root.path, "commit", "-q", "-m", "first")
    return root


class Marks:
    """perf_counter() times of the watcher's event writes and the runs' run_started lines."""

    def __init__(self) -> None:
        self.events: list[float] = []
        self.starts: list[float] = []
        self.lock = threading.Lock()

    def install(self) -> None:
        from sdd_git.events import watcher
        from sdd_git.runner.logwriter import RunLog

        original_write = getattr(watcher, "write_event")  # noqa: B009 - patched below
        original_append = RunLog.append
        marks = self

        def write_event(*args: Any, **kwargs: Any) -> Any:
            event = original_write(*args, **kwargs)
            with marks.lock:
                marks.events.append(time.perf_counter())
            return event

        def append(self: Any, event: str, **fields: Any) -> Any:
            written = original_append(self, event, **fields)
            if event == "run_started":
                with marks.lock:
                    marks.starts.append(time.perf_counter())
            return written

        setattr(watcher, "write_event", write_event)  # noqa: B010 - the watcher's own name
        RunLog.append = append  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30, help="trials per trigger")
    parser.add_argument("--quiet-ms", type=float, default=50.0, help="the debounce's quiet window")
    parser.add_argument("--max-wait-ms", type=float, default=100.0, help="the debounce's cap")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="sdd-watch-bench-") as temp:
        root = setup(Path(temp))
        from sdd_git.events.queue import pending
        from sdd_git.events.watcher import Watcher
        from sdd_git.events.worker import lock_path

        marks = Marks()
        marks.install()
        watcher = Watcher(
            root,
            say=lambda line: None,
            quiet=options.quiet_ms / 1000,
            max_wait=options.max_wait_ms / 1000,
        )
        watcher.start()
        stop = threading.Event()
        thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
        thread.start()

        def idle() -> bool:
            return not pending(root) and not lock_path(root).exists() and not watcher.worker_busy

        wait_until(idle)
        commits = []
        parent = git(root.path, "rev-parse", "HEAD")
        tree = git(root.path, "rev-parse", "HEAD^{tree}")
        for number in range(options.trials + 1):
            parent = git(root.path, "commit-tree", tree, "-p", parent, "-m", f"c{number}")
            commits.append(parent)

        results: dict[str, tuple[list[float], list[float]]] = {}

        def trial(name: str, act: Callable[[], object]) -> None:
            events, starts = results.setdefault(name, ([], []))
            before_events, before_starts = len(marks.events), len(marks.starts)
            began = time.perf_counter()
            act()
            wait_until(lambda: len(marks.starts) > before_starts)
            events.append((marks.events[before_events] - began) * 1000)
            starts.append((marks.starts[before_starts] - began) * 1000)
            wait_until(idle)
            time.sleep(0.05)  # let the observer's echo of the run's own writes settle

        result_file = root.path / "build" / "exit-code"
        build = "build result written (exit code 1 on main)"
        move = "ref moved (git update-ref refs/heads/main)"
        for commit in commits[: options.trials]:
            trial(build, lambda: result_file.write_text("1\n", encoding="utf-8"))
            trial(move, functools.partial(git, root.path, "update-ref", "refs/heads/main", commit))

        stop.set()
        watcher.wake()
        thread.join(5)
        watcher.close(grace=5)
        statuses = outcome_statuses(root)

    quiet, cap = options.quiet_ms, options.max_wait_ms
    print(f"Watcher latency, {options.trials} trials each (debounce: {quiet:g} ms quiet, "
          f"{cap:g} ms cap; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)\n")  # fmt: skip
    print("| trigger | event written median | p90 | run started median | p90 | goal |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for name, (events, starts) in results.items():
        median = statistics.median(starts)
        verdict = "met" if median <= GOAL_MS else "missed"
        print(
            f"| {name} | {statistics.median(events):.1f} ms | {p90(events):.1f} ms | "
            f"{median:.1f} ms | {p90(starts):.1f} ms | <= {GOAL_MS:g} ms: {verdict} |"
        )
    firsts = ", ".join(
        f"{name.split(' (')[0]} {starts[0]:.1f} ms" for name, (_e, starts) in results.items()
    )
    print(f"\nFirst trial of each (run started): {firsts}")
    print("Runs' end statuses: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))


def outcome_statuses(root: Any) -> dict[str, int]:
    """How the routines' runs ended, from the done events (each trial's run must have run)."""
    import json

    from sdd_git.events.queue import done_folder

    counts: dict[str, int] = {}
    for path in done_folder(root).glob("*.json"):
        for outcome in json.loads(path.read_text(encoding="utf-8")).get("outcomes", []):
            status = str(outcome.get("status"))
            counts[status] = counts.get(status, 0) + 1
    return counts


if __name__ == "__main__":
    main()
