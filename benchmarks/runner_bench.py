"""In-process timings of the runner, printed as one JSON object for `benchmarks/run.py` to read.

    python benchmarks/runner_bench.py turns ROOT SCRIPT
        Runs `start(ROOT, RunRequest("builder", ...))` once with `SDD_PROVIDER=script:SCRIPT` and
        prints {"elapsed_s", "provider_call", "tool_call", "tool_result", "rejected"}: the
        wall-clock time of `start` alone (imports happen before it) and how many of each event
        the run log holds.

    python benchmarks/runner_bench.py rules [--batches N] [--checks N]
        Builds a `BoundaryIndex` over 10,000 saved `always_allow` rules N times, checks its
        verdicts, then times N batches of `decide("run_command", args)` calls over a mix of hits
        and misses; prints {"build_ms": [one per build], "us_per_check": [one per batch]}.

Stdlib plus `sdd_git` only; a wrong verdict or an unfinished run exits 1 with the reason on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RULES = 10_000
DEFAULT_BATCHES = 5
DEFAULT_CHECKS = 100_000


def fail(message: str) -> int:
    print(f"runner_bench: {message}", file=sys.stderr)
    return 1


# --- turns --------------------------------------------------------------------------------------


def turns(root_path: Path, script: Path) -> int:
    os.environ["SDD_PROVIDER"] = f"script:{script.resolve()}"
    from sdd_git.root import Root
    from sdd_git.runner import run as sdd_run
    from sdd_git.runner.runlog import log_path, read_events

    # The runner gives up after MAX_PROVIDER_CALLS calls (60 today); this run makes 101. Lift the
    # cap for the benchmark only: it is a counter compared once per turn, not a cost.
    sdd_run.MAX_PROVIDER_CALLS = max(sdd_run.MAX_PROVIDER_CALLS, 1_000)
    root = Root(root_path.resolve())
    request = sdd_run.RunRequest("builder", "Read it 100 times")
    begin = time.perf_counter()
    outcome = sdd_run.start(root, request)
    elapsed = time.perf_counter() - begin
    if outcome.exit_code != sdd_run.EXIT_DONE or outcome.status != "done":
        return fail(f"the run ended {outcome.status} (exit {outcome.exit_code}): {outcome.message}")
    if outcome.run_id is None:
        return fail("the run has no id")
    events = read_events(log_path(root, outcome.run_id))
    counts = {
        name: sum(1 for e in events if e.get("event") == name)
        for name in ("provider_call", "tool_call", "tool_result", "rejected")
    }
    print(json.dumps({"elapsed_s": elapsed, **counts}))
    return 0


# --- rules --------------------------------------------------------------------------------------


def command(number: int) -> str:
    return f"pytest -q tests/test_{number}.py"


def workload() -> list[tuple[dict[str, Any], bool]]:
    """1,000 calls, each with whether a saved rule must allow it.

    Hits name a saved command and add a `purpose`, which the boundary must ignore; misses are a
    command one past the saved ones, a saved command with an extra flag, and one with an extra
    input (which `purpose` alone never is).
    """
    calls: list[tuple[dict[str, Any], bool]] = []
    for n in range(250):
        i = (n * 37) % RULES
        calls.append(({"command": command(i), "purpose": f"run test file {i} again"}, True))
        calls.append(({"command": command(RULES + n)}, False))
        calls.append(({"command": command(i) + " -x", "purpose": "stop at the first"}, False))
        calls.append(({"command": command(i), "cwd": "tests"}, False))
    return calls


def rules(batches: int, checks: int) -> int:
    from sdd_git.roles.profile import Boundary, Rule
    from sdd_git.runner.boundary import BoundaryIndex

    boundary = Boundary(
        always_allow=tuple(Rule("run_command", {"command": command(i)}) for i in range(RULES)),
        ask_first=(Rule("git_push"),),
    )
    build_ms: list[float] = []
    for _ in range(batches):
        begin = time.perf_counter()
        index = BoundaryIndex(boundary)
        build_ms.append((time.perf_counter() - begin) * 1000.0)

    calls = workload()
    for args, allowed in calls:
        verdict = index.decide("run_command", args)
        if verdict.allowed != allowed:
            return fail(f"decide('run_command', {args}) gave {verdict}, expected run={allowed}")
    if index.decide("git_push", {"remote": "origin"}).code != "ask_first":
        return fail("git_push did not ask first")

    args_only = [args for args, _ in calls]
    plan = (args_only * (checks // len(args_only) + 1))[:checks]
    decide = index.decide
    per_check: list[float] = []
    for _ in range(batches):
        begin = time.perf_counter()
        for args in plan:
            decide("run_command", args)
        per_check.append((time.perf_counter() - begin) / checks * 1e6)
    print(json.dumps({"build_ms": build_ms, "us_per_check": per_check}))
    return 0


# --- command line -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="what", required=True)
    turns_parser = sub.add_parser("turns", help="time one scripted run of the builder role")
    turns_parser.add_argument("root", type=Path)
    turns_parser.add_argument("script", type=Path)
    rules_parser = sub.add_parser("rules", help="time boundary checks over 10,000 saved rules")
    rules_parser.add_argument("--batches", type=int, default=DEFAULT_BATCHES)
    rules_parser.add_argument("--checks", type=int, default=DEFAULT_CHECKS)
    args = parser.parse_args(argv)
    if args.what == "turns":
        return turns(args.root, args.script)
    if args.batches < 1 or args.checks < 1:
        parser.error("--batches and --checks must be at least 1")
    return rules(args.batches, args.checks)


if __name__ == "__main__":
    sys.exit(main())
