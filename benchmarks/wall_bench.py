"""What the wall costs: a sandboxed `run_command` against the bare command, and the tamper check.

Run it as `python benchmarks/wall_bench.py [--runs N]`. It prints a markdown table of medians.

- **bare**: `bash -c true` started with `subprocess.Popen` and waited for: the floor.
- **sandboxed**: `sdd_git.sandbox.execute.run(product, "true", ...)` with the sandbox this machine
  gives (`SDD_SANDBOX` unset), the whole call: scratch folder, policy, bubblewrap, output reader,
  the subreaper's sweep. The row reports the median of the sandboxed call minus the median of the
  bare one; the goal is at most 30 ms.
- **the same in a product of 5,000 source files**: the scan for role and skill files a command
  may have planted walks the product before and after each command.
- **no sandbox**: the same call with `SDD_SANDBOX=none`: the tamper check's snapshot and comparison
  over the small record of the synthetic product, plus the sweep.
- **tamper check over 1,000 files**: `tamper.take` then `tamper.changed` over a record of 1,000
  files in 50 folders (content already cached, as between two commands of a run); goal 20 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdd_git.sandbox import choose, tamper
from sdd_git.sandbox.execute import run


def timed(action: Callable[[], object], runs: int) -> list[float]:
    action()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return times


def product(base: Path, files: int) -> Path:
    folder = base / "product"
    for name in ("memory", "changes", ".sdd", ".git", "src"):
        (folder / name).mkdir(parents=True)
    for index in range(files):
        sub = folder / "memory" / f"specs-{index % 50:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"SPEC-{index:04d}.md").write_text(f"---\nid: SPEC-{index:04d}\n---\n## S1 x\n")
    return folder


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    env = {"PATH": os.environ["PATH"]}
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as base:
        small = product(Path(base) / "small", 20)
        big = product(Path(base) / "big", 1000)

        def bare() -> None:
            subprocess.run(["bash", "-c", "true"], cwd=small, env=env, check=True)

        def sandboxed() -> None:
            done = run(small, "true", env, network=False, timeout=30)
            assert done.code == 0, done.output

        floor = statistics.median(timed(bare, args.runs))
        rows.append(("bare `bash -c true`", floor, "-"))
        os.environ.pop("SDD_SANDBOX", None)
        choose.current.cache_clear()
        label = choose.current().label
        boxed = statistics.median(timed(sandboxed, args.runs))
        rows.append((f"sandboxed `run_command` ({label}), added over bare", boxed - floor, "≤ 30"))
        wide = product(Path(base) / "wide", 0)
        for index in range(5000):
            sub = wide / "src" / f"pkg{index % 100:02d}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"m{index:04d}.py").write_text("x = 1\n")

        def sandboxed_wide() -> None:
            done = run(wide, "true", env, network=False, timeout=30)
            assert done.code == 0, done.output

        wide_ms = statistics.median(timed(sandboxed_wide, args.runs))
        rows.append(
            (f"the same in a product of 5,000 source files ({label})", wide_ms - floor, "≤ 30")
        )
        os.environ["SDD_SANDBOX"] = "none"
        choose.current.cache_clear()
        unboxed = statistics.median(timed(sandboxed, args.runs))
        rows.append(("no sandbox (tamper check), added over bare", unboxed - floor, "-"))
        watched = [big / n for n in ("memory", "changes", ".sdd", ".git")]
        count = len(tamper.take(watched).entries)

        def check() -> None:
            before = tamper.take(watched)
            assert tamper.changed(before, watched) == []

        rows.append(
            (
                f"tamper check over {count:,} entries",
                statistics.median(timed(check, args.runs)),
                "≤ 20",
            )
        )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, {args.runs} runs per row")
    print()
    print("| case | median ms | goal ms |")
    print("| --- | --- | --- |")
    for name, value, goal in rows:
        print(f"| {name} | {value:.1f} | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
