"""What the trust check (CONTRACT §13) adds where users feel it.

1. `sdd role list` over 1,000 repo roles, every one confirmed in her ledger, against the same
   command on the same root with the ledger not consulted (`GITHUB_ACTIONS=true`: a CI engine is
   its own trust anchor, so the list skips the ledger and every role's digest). Each run is a
   fresh process, the two alternating, warm role cache.
2. A hook-fired routine run: the checks `routines.fire.fire` and `runner.run.start` add before a
   run (the routine's, its role's and the settings' surfaces against the ledger), timed in-process
   by calling them exactly as the worker does, against a ledger of 1,000 roles.

    .venv/bin/python benchmarks/trust_bench.py [--runs 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import add_roles  # the same 1,000 role files as benchmarks/run.py


def sdd_argv() -> list[str]:
    console = Path(sys.executable).with_name("sdd")
    return [str(console)] if console.exists() else [sys.executable, "-m", "sdd_git"]


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    took = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    base = Path(tempfile.mkdtemp(prefix="sdd-trust-bench-"))
    home = base / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDD_")}
    for name in ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL"):
        env.pop(name, None)
    env.update(HOME=str(home), NO_COLOR="1", SDD_HOME=str(home / ".sdd"))
    root = base / "product"
    root.mkdir()
    subprocess.run([*sdd_argv(), "init"], cwd=root, env=env, check=True, capture_output=True)
    add_roles(root, 1000)
    subprocess.run([*sdd_argv(), "trust", "accept", "--all"], cwd=root, env=env, check=True,
                   capture_output=True)  # fmt: skip
    ci_env = {**env, "GITHUB_ACTIONS": "true"}
    argv = [*sdd_argv(), "role", "list"]
    timed(argv, root, env)  # warm the role cache and the disk
    timed(argv, root, ci_env)
    with_ledger: list[float] = []
    without: list[float] = []
    for _ in range(runs):
        with_ledger.append(timed(argv, root, env))
        without.append(timed(argv, root, ci_env))

    # 2: the checks of a routine run, in-process, as the worker makes them.
    os.environ.update(HOME=str(home), SDD_HOME=str(home / ".sdd"))
    for name in ("CI", "GITHUB_ACTIONS"):
        os.environ.pop(name, None)
    os.chdir(root)
    from sdd_git.roles.registry import find_role
    from sdd_git.root import Root
    from sdd_git.routines.fire import require_confirmed
    from sdd_git.routines.manage import create, draft
    from sdd_git.runner import trusted
    from sdd_git.trust.pending import require_settings

    product = Root(root.resolve())
    made = draft(product, "role-0500", "on-merge", on="pr-merged", schedule=None,
                 input="the merge", expected="a note")  # fmt: skip
    routine = create(product, made)
    checks: list[float] = []
    for _ in range(max(runs, 50)):
        start = time.perf_counter()
        require_confirmed(product, routine)  # fire()
        role, _ = find_role(product, routine.role, use_cache=False)
        trusted.require(product, [role, None])  # start()
        require_settings(product, "bench")  # provider_settings()
        checks.append((time.perf_counter() - start) * 1000)

    # 1 again, in-process: the registry `sdd role list` builds, with and without the ledger,
    # interleaved, so the machine's noise falls on both alike.
    from sdd_git.roles.registry import load_registry

    registry_with: list[float] = []
    registry_without: list[float] = []
    for _ in range(max(runs, 50)):
        start = time.perf_counter()
        load_registry(product)
        registry_with.append((time.perf_counter() - start) * 1000)
        os.environ["GITHUB_ACTIONS"] = "true"
        start = time.perf_counter()
        load_registry(product)
        registry_without.append((time.perf_counter() - start) * 1000)
        del os.environ["GITHUB_ACTIONS"]

    def row(name: str, values: list[float]) -> str:
        return (f"| {name} | {statistics.median(values):.1f} | {min(values):.1f} | "
                f"{max(values):.1f} |")  # fmt: skip

    print(f"python {sys.version.split()[0]}, {runs} runs each, ms")
    print("| case | median | min | max |")
    print("| --- | --- | --- | --- |")
    print(row("`sdd role list`, 1,000 confirmed roles, ledger read", with_ledger))
    print(row("`sdd role list`, same root, ledger not consulted (CI engine)", without))
    added = statistics.median(with_ledger) - statistics.median(without)
    print(f"| added by the trust check (difference of medians) | {added:.1f} | | |")
    print(row("the registry of 1,000 roles, ledger read (in-process)", registry_with))
    print(row("the same, ledger not consulted (in-process)", registry_without))
    inside = statistics.median(registry_with) - statistics.median(registry_without)
    print(f"| added by the trust check, in-process (difference of medians) | {inside:.1f} | | |")
    print(row("trust checks of one hook-fired routine run (in-process)", checks))


if __name__ == "__main__":
    main()
