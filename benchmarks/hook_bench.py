"""How long sdd's git hooks keep git waiting, against a bare shell hook, lefthook and pre-commit
installed the same way.

    python benchmarks/hook_bench.py [--runs 200] [--listening-runs 40] [--git-runs 40] [--quick]

In temporary repositories, the same no-op `post-merge` hook is installed four ways:

- bare: `#!/bin/sh` + `exit 0`;
- sdd, with no routine listening (`sdd hooks install`; the index names no trigger);
- lefthook (`lefthook install`, a `post-merge` with no jobs), run through its Go binary
  (LEFTHOOK_BIN, the fastest way its hook can find it) and, when installed with pip, through the
  `lefthook` command pip puts on PATH;
- pre-commit (`pre-commit install --hook-type post-merge`, config `repos: []`).

Each is run the way git runs it: the hook file executed with git's argument (`0`), in the working
tree, stdin from /dev/null, N times, the variants taking turns so that drift hits them alike. A
second table times `git merge --ff-only` itself with each installation (every sdd hook in place,
the others' post-merge), and a third the return time of sdd's hook when a routine listens: the
event file written and the worker started, detached.

lefthook and pre-commit come from `pip install -e '.[bench]'` (or `--lefthook`, `--pre-commit`, or
PATH); a tool that cannot be found is left out of the tables, and the output says so. Prints a
markdown table of medians and 90th percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CHECKOUT))

GOALS = {"no-op median": 5.0, "no-op over bare": 3.0, "listening return": 30.0}


@dataclass
class Variant:
    name: str
    repo: Path
    env: dict[str, str]
    note: str = ""


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL
    )
    if result.returncode != 0:
        raise SystemExit(f"hook_bench: {' '.join(args)} failed in {cwd}: {result.stderr.strip()}")
    return result.stdout


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SDD_", "GIT_", "LEFTHOOK"))}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        NO_COLOR="1",
        PRE_COMMIT_HOME=str(home / "pre-commit-cache"),
    )
    return env


def new_repo(folder: Path, env: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    run(folder, "git", "init", "-q", "-b", "main", env=env)
    (folder / "README").write_text("bench\n")
    run(folder, "git", "add", "README", env=env)
    run(folder, "git", "commit", "-q", "-m", "first", env=env)
    return folder


def find_tool(given: str | None, name: str) -> Path | None:
    if given:
        return Path(given)
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return beside
    found = shutil.which(name)
    return Path(found) if found else None


def lefthook_binary(command: Path) -> Path | None:
    """The Go binary behind pip's `lefthook` command (a Python script that starts it)."""
    if command.read_bytes()[:2] != b"#!":
        return command  # already the binary
    venv = command.resolve().parent.parent if command.parent.name == "bin" else command.parent
    for found in sorted(venv.glob("lib/python*/site-packages/lefthook/bin/*/lefthook")):
        return found
    return None


def setup(folder: Path, args: argparse.Namespace) -> tuple[list[Variant], list[str], Variant]:
    from sdd_git.events import hooks as sdd_hooks
    from sdd_git.root import Root, init_root
    from sdd_git.routines.hookindex import write_index

    home = folder / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    env = base_env(home)
    os.environ.update(env)  # sdd's own git calls below run in the same setting
    for key in [k for k in os.environ if k.startswith(("SDD_", "GIT_DIR", "GIT_INDEX"))]:
        del os.environ[key]
    notes: list[str] = []
    variants = []

    bare = new_repo(folder / "bare", env)
    hook = bare / ".git" / "hooks" / "post-merge"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    variants.append(Variant("bare `#!/bin/sh` `exit 0`", bare, env))

    quiet = new_repo(folder / "sdd", env)
    init_root(quiet, product="bench")
    sdd_hooks.install(Root(quiet))
    variants.append(Variant("sdd, no routine listening", quiet, env))

    lefthook = find_tool(args.lefthook, "lefthook")
    if lefthook is None:
        notes.append("lefthook: not found (pip install -e '.[bench]'); left out")
    else:
        repo = new_repo(folder / "lefthook", env)
        (repo / "lefthook.yml").write_text("post-merge:\n  jobs: []\n")
        tool_env = {**env, "PATH": f"{lefthook.parent}{os.pathsep}{env.get('PATH', '')}"}
        run(repo, str(lefthook), "install", env=tool_env)
        binary = lefthook_binary(lefthook)
        if binary is not None:
            variants.append(
                Variant(
                    "lefthook (Go binary, LEFTHOOK_BIN)",
                    repo,
                    {**tool_env, "LEFTHOOK_BIN": str(binary)},
                )
            )
        if binary != lefthook:
            variants.append(Variant("lefthook (pip's `lefthook` command)", repo, tool_env))
        version = run(repo, str(binary or lefthook), "version", env=tool_env).strip()
        notes.append(f"lefthook {version}: {binary or lefthook}")

    pre_commit = find_tool(args.pre_commit, "pre-commit")
    if pre_commit is None:
        notes.append("pre-commit: not found (pip install -e '.[bench]'); left out")
    else:
        repo = new_repo(folder / "pre-commit", env)
        (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
        run(repo, str(pre_commit), "install", "--hook-type", "post-merge", env=env)
        variants.append(Variant("pre-commit (`repos: []`)", repo, env))
        notes.append(run(repo, str(pre_commit), "--version", env=env).strip())

    # The listening hook: a routine of a role that does not exist, so the worker it starts
    # records an error and ends at once, instead of running a model.
    listening = new_repo(folder / "sdd-listening", env)
    root = init_root(listening, product="bench").root
    sdd_hooks.install(root)
    routine = root.sdd / "roles" / "nobody" / "routines" / "on-merge.yaml"
    routine.parent.mkdir(parents=True)
    routine.write_text("name: on-merge\non: pr-merged\ninput: the merge\nexpected: a note\n")
    write_index(root)
    return variants, notes, Variant("sdd, a routine listening", listening, env)


def hook_runner(variant: Variant) -> Callable[[], float]:
    hook = str(variant.repo / ".git" / "hooks" / "post-merge")

    def once() -> float:
        begin = time.perf_counter()
        subprocess.run(
            [hook, "0"],
            cwd=variant.repo,
            env=variant.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        return (time.perf_counter() - begin) * 1000

    return once


def transaction_runner(variant: Variant, state: str) -> Callable[[], float]:
    """sdd's reference-transaction as git runs it for a commit on main: `prepared`, then
    `committed`, with git's line on stdin."""
    hook = str(variant.repo / ".git" / "hooks" / "reference-transaction")
    line = f"{'1' * 40} {'2' * 40} refs/heads/main\n".encode()

    def once() -> float:
        begin = time.perf_counter()
        subprocess.run(
            [hook, state],
            cwd=variant.repo,
            env=variant.env,
            input=line,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        return (time.perf_counter() - begin) * 1000

    return once


def merge_runner(variant: Variant) -> Callable[[], float]:
    """`git merge --ff-only topic` from `base`, reset (untimed) before each run."""
    repo, env = variant.repo, variant.env
    base = run(repo, "git", "rev-parse", "HEAD", env=env).strip()
    run(repo, "git", "branch", "-f", "topic", "HEAD", env=env)
    run(repo, "git", "checkout", "-q", "topic", env=env)
    (repo / "topic.txt").write_text("topic\n")
    run(repo, "git", "add", "topic.txt", env=env)
    run(repo, "git", "commit", "-q", "-m", "topic", env=env)
    run(repo, "git", "checkout", "-q", "main", env=env)

    def once() -> float:
        run(repo, "git", "reset", "-q", "--hard", base, env=env)
        begin = time.perf_counter()
        subprocess.run(
            ["git", "merge", "-q", "--ff-only", "topic"],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        return (time.perf_counter() - begin) * 1000

    return once


def listening_runner(variant: Variant) -> Callable[[], float]:
    """The hook's return when a routine listens. Between runs (untimed) the worker is let finish
    and the event's file removed, so each run writes a new event and starts a worker."""
    from sdd_git.events.queue import done_folder, events_folder, pending
    from sdd_git.events.worker import lock_path
    from sdd_git.root import Root

    root = Root(variant.repo)
    timed = hook_runner(variant)

    def settle() -> None:
        deadline = time.monotonic() + 30
        while lock_path(root).exists() or pending(root):
            if time.monotonic() > deadline:
                raise SystemExit("hook_bench: the worker did not finish within 30 s")
            time.sleep(0.01)
        for path in [*events_folder(root).glob("*.json"), *done_folder(root).glob("*.json")]:
            path.unlink()

    def once() -> float:
        settle()
        took = timed()
        if not [*events_folder(root).glob("*.json"), *done_folder(root).glob("*.json")]:
            raise SystemExit("hook_bench: the listening hook wrote no event")
        return took

    return once


def measure(runners: dict[str, Callable[[], float]], runs: int) -> dict[str, list[float]]:
    for once in runners.values():  # warm-up: disk cache, first-run compiles
        once()
        once()
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(runs):
        for name, once in runners.items():  # in turns: drift hits every variant alike
            times[name].append(once())
    return times


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def table(times: dict[str, list[float]], baseline: str | None, title: str) -> list[str]:
    lines = [f"**{title}**", "", "| hook | median ms | p90 ms | median over bare ms |"]
    lines.append("| --- | ---: | ---: | ---: |")
    base = statistics.median(times[baseline]) if baseline else None
    for name, values in times.items():
        median = statistics.median(values)
        over = "-" if base is None or name == baseline else f"{median - base:+.1f}"
        lines.append(f"| {name} | {median:.1f} | {p90(values):.1f} | {over} |")
    return lines


def show(times: dict[str, list[float]], baseline: str | None, title: str) -> None:
    print("\n".join(table(times, baseline, title)))
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs of each no-op hook")
    parser.add_argument("--git-runs", type=int, default=40, help="runs of git merge per variant")
    parser.add_argument("--listening-runs", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="20 / 5 / 5 runs: a smoke test")
    parser.add_argument("--lefthook", help="the lefthook command or binary")
    parser.add_argument("--pre-commit", help="the pre-commit command")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.git_runs, args.listening_runs = 20, 5, 5
    with tempfile.TemporaryDirectory(prefix="sdd-hook-bench-") as tmp:
        variants, notes, listening = setup(Path(tmp), args)
        print(
            f"python {sys.version.split()[0]}, {os.uname().sysname} {os.uname().machine}, "
            f"{os.cpu_count()} cpus, {run(Path(tmp), 'git', '--version').strip()}, /bin/sh -> "
            f"{os.path.realpath('/bin/sh')}"
        )
        for note in notes:
            print(f"- {note}")
        print()
        bare = variants[0].name
        hooks = measure({v.name: hook_runner(v) for v in variants}, args.runs)
        show(hooks, bare, f"The post-merge hook run as git runs it, {args.runs} runs each")
        quiet_variant = variants[1]
        transaction = measure(
            {
                f"sdd reference-transaction `{state}`, no routine listening": transaction_runner(
                    quiet_variant, state
                )
                for state in ("prepared", "committed")
            },
            args.runs,
        )
        show(transaction, None, f"sdd's reference-transaction hook, {args.runs} runs each")
        merges = measure({v.name: merge_runner(v) for v in variants}, args.git_runs)
        show(
            merges,
            bare,
            f"`git merge --ff-only` with the hooks installed, {args.git_runs} runs each",
        )
        heard = measure({listening.name: listening_runner(listening)}, args.listening_runs)
        show(
            heard,
            None,
            "sdd's post-merge when a routine listens (event written, worker started detached), "
            f"{args.listening_runs} runs",
        )
        quiet = statistics.median(hooks[variants[1].name])
        over = quiet - statistics.median(hooks[bare])
        loud = statistics.median(heard[listening.name])
        print(
            f"goals: no-op median {quiet:.1f} ms (goal <= {GOALS['no-op median']:g}), "
            f"over bare {over:+.1f} ms (goal <= {GOALS['no-op over bare']:g}), listening "
            f"return {loud:.1f} ms (goal <= {GOALS['listening return']:g})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
