"""A network of 1 lead and 8 specialists on the scripted provider: speedup and driver overhead.

Run it as `python benchmarks/network_bench.py [--runs N] [--reads N]` (5 runs by default). It
builds one synthetic sdd root in a temporary folder with the records API (untimed): module `bench`
with 8 services `s1`..`s8`, each owned by its specialist `s1-dev`..`s8-dev` (level 10), the lead
`bench-lead` (level 50, delegation allowed, scope `module:bench`, so the route of the change is
`plan`), an accepted change scoped to `module:bench`, and an accepted plan of 8 root nodes
`N1`..`N8` with no needs, each owned by a different specialist: all 8 are ready in round 1. One
script file drives
every run: each specialist reads `README.md`, then `NOTES.md`, with `read_file` (`--reads N`
alternates them N times, default 2; the same call 4 times in a row would stop the run as stuck),
returns its summary with `return_artifact`, then says it is done (4 provider calls by default).

Each repetition times three things, each in a fresh copy of that root:

- **network**: `sdd work CH --json` as a process, as a person runs it: its start, the route, the
  driver's round (8 node processes in parallel) and its final states. It must exit 0 with status
  `done` and every node `done`.
- **sequential**: `python -m sdd_git network-node CH Nk SHA` for k = 1..8, one after the other, each
  timed from `Popen` to its exit; their sum is the children's own time.
- **plain parallel**: the same 8 processes started together by a plain `Popen` loop and waited
  for, without the driver.

Speedup = sequential sum / network wall (goal: at least 1.7x on 2 cores). Driver overhead per
node = (network wall - slowest child alone) / 8 (goal: at most 50 ms). Each is computed within a
repetition; the table shows their median, min and max, and a goal is checked against the median.
A missed goal is marked **no**, but the script still exits 0, because timings depend on the
machine. Every child must end `done` with one artifact in its run log, or the script stops.

Stdlib plus `sdd_git` (from this checkout) only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_RUNS = 5
SPECIALISTS = 8
MODULE = "bench"
LEAD = "bench-lead"
READS = 2  # read_file calls of each specialist before it returns (--reads)
SPEEDUP_GOAL = 1.7
OVERHEAD_GOAL_MS = 50.0
IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench Person",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench Person",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


class BenchError(Exception):
    pass


def specialist(number: int) -> str:
    return f"s{number}-dev"


# --- the synthetic root -------------------------------------------------------------------------


def role_file(
    folder: Path, name: str, level: int, delegation: str, scope: str, produces: str
) -> None:
    path = folder / ".sdd" / "roles" / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}\njob: Do {name} work\nlevel: {level}\n"
        f"toolPolicy.delegation: {delegation}\nproduces: {produces}\nscope: {scope}\n---\n"
        f"Rules of {name}.\n",
        encoding="utf-8",
    )


def build_root(folder: Path) -> str:
    """The root every repetition copies; returns the change's id."""
    from sdd_git.records import acceptance, changes, scopes
    from sdd_git.root import init_root

    root = init_root(folder, product="Bench").root
    for name in ("README.md", "NOTES.md"):
        (folder / name).write_text(f"# {name}\n\nA product to read.\n" * 20, encoding="utf-8")
    role_file(folder, LEAD, 50, "allow", f"module:{MODULE}", "plan")
    for k in range(1, SPECIALISTS + 1):
        role_file(folder, specialist(k), 10, "deny", f"service:s{k}", "code")
    scopes.add_module(root, MODULE)
    for k in range(1, SPECIALISTS + 1):
        scopes.add_service(root, f"s{k}", MODULE, owner=specialist(k))
    pack = changes.create(root, "I need the bench network to run.")
    acceptance.correct_reading(root, pack.id, "The network runs.\n\n- C1: Every node returns.")
    acceptance.accept_reading(root, pack.id)
    spec = root.spec_file(changes.load(root, pack.id).spec)
    text = re.sub(r"(?m)^scope:.*\n", "", spec.read_text(encoding="utf-8"), count=1)
    spec.write_text(re.sub(r"\A---\n", f"---\nscope: module:{MODULE}\n", text, count=1))
    nodes = [
        {
            "id": f"N{k}",
            "scope": f"s{k}",
            "owner": specialist(k),
            "task": f"Do N{k}",
            "returns": "summary",
        }
        for k in range(1, SPECIALISTS + 1)
    ]
    plan = folder / "changes" / pack.id / "plan.yaml"
    plan.write_text(json.dumps({"nodes": nodes}, indent=2) + "\n", encoding="utf-8")  # JSON is YAML
    acceptance.accept_plan(root, pack.id)
    return pack.id


def write_script(path: Path, reads: int) -> None:
    calls: list[dict[str, Any]] = []
    for k in range(1, SPECIALISTS + 1):
        role = specialist(k)
        for n in range(reads):  # alternate files: the same call 4 times in a row is "stuck"
            read = {"tool": "read_file", "args": {"path": ("README.md", "NOTES.md")[n % 2]}}
            calls.append({"role": role, "tool_calls": [read]})
        summary = {"kind": "summary", "ref": "-", "summary": f"N{k} done"}
        calls.append({"role": role, "tool_calls": [{"tool": "return_artifact", "args": summary}]})
        calls.append({"role": role, "say": f"N{k} done."})
    path.write_text(json.dumps({"calls": calls}, indent=2) + "\n", encoding="utf-8")


# --- the processes ------------------------------------------------------------------------------


def sdd_command() -> tuple[list[str], str]:
    script = Path(sys.executable).parent / "sdd"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)], f"console script {script}"
    return [sys.executable, "-m", "sdd_git"], f"{sys.executable} -m sdd_git"


def child_env(base: Path, script: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDD_")}
    env.update(IDENTITY)
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env.update(
        {
            "NO_COLOR": "1",
            "HOME": str(base / "home"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "SDD_HOME": str(base / "home" / ".sdd"),
            "SDD_PROVIDER": f"script:{script}",
            "PYTHONPATH": path,
        }
    )
    return env


def node_argv(root: Path, change: str, k: int) -> list[str]:
    """The node process as the driver starts it: with the accepted plan's hash."""
    digest = hashlib.sha256((root / "changes" / change / "plan.yaml").read_bytes()).hexdigest()
    return [sys.executable, "-m", "sdd_git", "network-node", change, f"N{k}", digest]


def check_node(k: int, code: int, stdout: str) -> None:
    try:
        outcome = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BenchError(f"node N{k} printed no outcome (exit {code}): {stdout!r}") from None
    if code != 0 or outcome.get("status") != "done":
        raise BenchError(f"node N{k} ended {outcome} (exit {code})")


def check_runs(root: Path) -> None:
    """Every node ran once and returned one artifact."""
    artifacts: dict[str, int] = {}
    for path in (root / ".sdd" / "role-runs").glob("*.jsonl"):
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        route: dict[str, Any] = next((e for e in events if e.get("event") == "route"), {})
        if route.get("route") == "node":
            node = str(route["node"])
            artifacts[node] = artifacts.get(node, 0) + sum(
                1 for e in events if e.get("event") == "artifact"
            )
    wanted = {f"N{k}": 1 for k in range(1, SPECIALISTS + 1)}
    if artifacts != wanted:
        raise BenchError(f"artifacts per node {artifacts}, expected {wanted}")


def network(root: Path, change: str, env: dict[str, str], sdd: list[str]) -> float:
    begin = time.perf_counter()
    done = subprocess.run(
        [*sdd, "work", change, "--json"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - begin
    try:
        outcome = json.loads(done.stdout)
    except ValueError:
        raise BenchError(
            f"`sdd work {change}` printed no JSON (exit {done.returncode}): "
            f"{done.stdout!r} {done.stderr!r}"
        ) from None
    states = {n["id"]: n["state"] for n in outcome.get("nodes", [])}
    if done.returncode != 0 or outcome.get("status") != "done" or set(states.values()) != {"done"}:
        raise BenchError(
            f"`sdd work {change}` ended {outcome.get('status')} (exit {done.returncode}): "
            f"{outcome.get('message')} {states} {done.stderr!r}"
        )
    if len(states) != SPECIALISTS:
        raise BenchError(f"`sdd work {change}` shows {len(states)} nodes: {states}")
    check_runs(root)
    return elapsed


def sequential(root: Path, change: str, env: dict[str, str]) -> list[float]:
    times = []
    for k in range(1, SPECIALISTS + 1):
        begin = time.perf_counter()
        done = subprocess.run(
            node_argv(root, change, k),
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - begin)
        check_node(k, done.returncode, done.stdout)
    check_runs(root)
    return times


def plain_parallel(root: Path, change: str, env: dict[str, str]) -> float:
    begin = time.perf_counter()
    processes = [
        subprocess.Popen(
            node_argv(root, change, k),
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for k in range(1, SPECIALISTS + 1)
    ]
    outputs = [process.communicate()[0] for process in processes]
    elapsed = time.perf_counter() - begin
    for k, (process, stdout) in enumerate(zip(processes, outputs, strict=True), start=1):
        check_node(k, process.returncode, stdout)
    check_runs(root)
    return elapsed


# --- the table ----------------------------------------------------------------------------------


def row(name: str, values: Sequence[float], unit: str, goal: str, within: str) -> str:
    cells = [f"{statistics.median(values):.{unit}}", f"{min(values):.{unit}}"]
    cells.append(f"{max(values):.{unit}}")
    return f"| {name} | {' | '.join(cells)} | {goal} | {within} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="repetitions (default 5)")
    parser.add_argument(
        "--reads", type=int, default=READS, help="read_file calls per specialist (default 2)"
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.reads < 0:
        parser.error("--runs must be at least 1 and --reads at least 0")
    sdd, how = sdd_command()
    net_ms: list[float] = []
    seq_ms: list[float] = []
    max_child_ms: list[float] = []
    par_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sdd-network-bench-") as temp:
        base = Path(temp)
        (base / "home" / ".sdd").mkdir(parents=True)
        script = base / "script.json"
        write_script(script, args.reads)
        env = child_env(base, script)
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)  # the records API reads HOME, SDD_* and git's identity
        try:
            change = build_root(base / "template")
        finally:
            os.environ.clear()
            os.environ.update(saved)

        def fresh(name: str) -> Path:
            folder = base / name
            shutil.copytree(base / "template", folder, symlinks=True)
            return folder

        try:
            # One untimed round of each, to warm the disk cache and check the setup.
            network(fresh("warm-network"), change, env, sdd)
            sequential(fresh("warm-sequential"), change, env)
            plain_parallel(fresh("warm-parallel"), change, env)
            for run in range(args.runs):
                net_ms.append(network(fresh(f"network-{run}"), change, env, sdd) * 1000.0)
                children = [t * 1000.0 for t in sequential(fresh(f"sequential-{run}"), change, env)]
                seq_ms.append(sum(children))
                max_child_ms.append(max(children))
                par_ms.append(plain_parallel(fresh(f"parallel-{run}"), change, env) * 1000.0)
        except BenchError as exc:
            print(f"network_bench: {exc}", file=sys.stderr)
            return 1

    speedups = [s / n for s, n in zip(seq_ms, net_ms, strict=True)]
    ceiling = [s / p for s, p in zip(seq_ms, par_ms, strict=True)]
    # What the driver adds per node, at most: the network's wall beyond its slowest child
    # alone (which also holds the 8 children sharing 2 cores). The plain `Popen` loop is no
    # baseline for it since the driver forks its children and skips their interpreter start-up.
    overheads = [(n - m) / SPECIALISTS for n, m in zip(net_ms, max_child_ms, strict=True)]
    beside_plain = [(n - p) / SPECIALISTS for n, p in zip(net_ms, par_ms, strict=True)]
    speed_ok = "yes" if statistics.median(speedups) >= SPEEDUP_GOAL else "**no**"
    over_ok = "yes" if statistics.median(overheads) <= OVERHEAD_GOAL_MS else "**no**"
    print(
        f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cpus; {args.runs} runs; 1 lead, {SPECIALISTS} specialists, "
        f"{args.reads + 2} scripted provider calls each; `sdd work` via {how}"
    )
    print()
    print("| case | median | min | max | goal | within goal |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    print(row("`sdd work CH`, the whole network, ms", net_ms, "0f", "-", "-"))
    print(row("the 8 node processes one after the other, sum, ms", seq_ms, "0f", "-", "-"))
    print(row("the slowest of those 8 alone, ms", max_child_ms, "0f", "-", "-"))
    print(row("the 8 node processes by a plain `Popen` loop, ms", par_ms, "0f", "-", "-"))
    print(row("speedup: sequential sum / network wall, x", speedups, "2f", "≥ 1.7x", speed_ok))
    name = "(the ceiling without the driver: sequential sum / plain parallel, x)"
    print(row(name, ceiling, "2f", "-", "-"))
    print(
        row(
            "driver overhead per node: (network - slowest child alone) / 8, ms",
            overheads,
            "1f",
            "≤ 50 ms",
            over_ok,
        )
    )
    print(row("(network - plain parallel) / 8, ms", beside_plain, "1f", "-", "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
