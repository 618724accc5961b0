"""Wall-clock benchmarks of the `sdd` command line, each command a fresh subprocess.

Run it as `python benchmarks/run.py [--runs N] [--quick] [--case TEXT]`. It builds synthetic sdd
roots in a temporary folder by writing their files directly (no `sdd` calls), runs each case once
untimed to warm the disk cache (a non-zero exit there stops everything, with the command's
stderr; so does a case's own `check` of the warm-up output), then times N runs and prints a
markdown table of median, min and max in milliseconds.

Stdlib only. To add a row, add a `Case` in `build_cases` (and, if it needs one, a synthetic root
in `build_roots`).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_RUNS = 15
QUICK_RUNS = 3

# The defaults of CONTRACT.md section 2, as `sdd init` writes them.
DEFAULT_CONFIG = """\
provider: {kind: openai, model: gpt-4.1-mini, base_url: null, api_key_env: OPENAI_API_KEY}
approvals: {timeout: 10m}
messaging: on            # roles may message each other (handoff); off stops every handoff
roles: {default_depth_cutoff: 1, max_grantable_delegation: null}
"""
DECISIONS_HEADER = "# Decisions: the person's record. Appended by person commands only.\n"
PRODUCT = "name: bench\nmodules: []\n"
GITIGNORE = "# sdd: run logs and local state are never committed\n.sdd/role-runs/\n.sdd/local/\n"


@dataclass(frozen=True)
class Case:
    """A row of the table: a command, where it runs, its goal, and untimed work before each run."""

    name: str
    argv: Sequence[str]
    cwd: Path
    goal_ms: float | None = None
    setup_before_each: Callable[[], None] | None = None
    # Checks the warm-up run's (stdout, stderr); returns what is wrong, or None.
    check: Callable[[str, str], str | None] | None = None


@dataclass(frozen=True)
class Result:
    case: Case
    times_ms: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)


# --- the command under test ---------------------------------------------------------------------


REPO = Path(__file__).resolve().parent.parent


def sdd_command() -> tuple[list[str], str, dict[str, str]]:
    """The console script next to this interpreter, else `python -m sdd_git` (plus its env).

    The fallback puts this checkout on PYTHONPATH, so it works before the package is installed.
    """
    script = Path(sys.executable).parent / "sdd"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)], f"console script {script}", {}
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    how = f"{sys.executable} -m sdd_git (no console script; PYTHONPATH={path})"
    return [sys.executable, "-m", "sdd_git"], how, {"PYTHONPATH": path}


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env["NO_COLOR"] = "1"
    env.pop("SDD_RUN_ID", None)
    return env


# --- synthetic sdd roots ------------------------------------------------------------------------


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_root(folder: Path) -> Path:
    """The layout `sdd init` creates, written directly, in a fresh git repository."""
    write(folder / ".sdd" / "config.yaml", DEFAULT_CONFIG)
    for sub in (".sdd/roles", ".sdd/skills", "memory/specs", "memory/releases", "changes"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    write(folder / "memory" / "decisions.yaml", DECISIONS_HEADER)
    write(folder / "memory" / "product.yaml", PRODUCT)
    write(folder / ".gitignore", GITIGNORE)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


def spec_front_matter(number: int, title: str, words: str) -> str:
    return (
        f"---\nid: SPEC-{number:04d}\ntitle: {title}\nkind: feature\n"
        f"change: CH-{number:04d}\nwords: {words}\nscope: product\n---\n"
    )


def add_change(root: Path, number: int, spec_body: str | None = None) -> None:
    """A change pack and its spec, as `sdd change new` writes them (same number for both)."""
    title = f"Bench change {number:04d}"
    words = f"I need bench change {number:04d} to work"
    write(
        root / "changes" / f"CH-{number:04d}" / "change.yaml",
        f"id: CH-{number:04d}\ntitle: {title}\nwords: {words}\nkind: feature\n"
        f"stage: reading\nspec: SPEC-{number:04d}\n",
    )
    body = spec_body if spec_body is not None else "## S1 Reading\nSome text.\n\n- C1: a check\n"
    write(
        root / "memory" / "specs" / f"SPEC-{number:04d}.md",
        spec_front_matter(number, title, words) + body,
    )


def many_sections_body(count: int, last_revision: int) -> str:
    """Sections S1..S<count>; the last one's text carries a revision number."""
    parts = []
    for n in range(1, count + 1):
        text = f"Text of section {n}."
        if n == count:
            text = f"Text of section {n}, revision {last_revision}."
        checks = f"- C1: first check of S{n}\n- C2: second check of S{n}\n"
        parts.append(f"## S{n} Title {n}\n{text}\n\n{checks}")
    return "\n".join(parts)


class SectionReviser:
    """Before each run, rewrites the last section's text so that it needs a new acceptance."""

    def __init__(self, root: Path, sections: int) -> None:
        self.root = root
        self.sections = sections
        self.revision = 0

    def __call__(self) -> None:
        self.revision += 1
        add_change(self.root, 1, many_sections_body(self.sections, self.revision))


def role_file(number: int) -> str:
    """A canonical ROLE.md (CONTRACT.md section 3); every 10th is pinned, every 7th hidden."""
    name = f"role-{number:04d}"
    pinned = "true" if number % 10 == 0 else "false"
    hidden = "true" if number % 7 == 0 else "false"
    return (
        f"---\nrole: {name}\nlabel: Role {number:04d}\n"
        f"job: Implement accepted spec sections for service {number}\nlevel: 10\n"
        "toolPolicy.delegation: deny\nproduces: code\nskills: []\n"
        f"pinned: {pinned}\nhidden: {hidden}\n"
        "boundary:\n"
        "  always_allow:\n"
        '    - {tool: run_command, inputs: {command: "pytest -q"}}\n'
        "  ask_first:\n"
        "    - {tool: git_push}\n"
        "---\n"
        f"You are {name}. Your one job is to turn accepted spec sections of service {number} into\n"
        "working code, and nothing beyond them. Work only from accepted sections and cite their\n"
        "check ids. A missing source is reported as missing, never invented.\n"
    )


def add_roles(root: Path, count: int) -> None:
    for number in range(1, count + 1):
        write(root / ".sdd" / "roles" / f"role-{number:04d}" / "ROLE.md", role_file(number))


class RoleCacheDropper:
    """Before each run, deletes the role cache, so `sdd role list` parses every file again."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".sdd" / "local" / "cache" / "roles"

    def __call__(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


@dataclass(frozen=True)
class Roots:
    changes_1000: Path
    spec_200: Path
    spec_200_reviser: SectionReviser
    roles_1000: Path


def build_roots(base: Path) -> Roots:
    changes_1000 = make_root(base / "changes-1000")
    for number in range(1, 1001):
        add_change(changes_1000, number)
    spec_200 = make_root(base / "spec-200")
    reviser = SectionReviser(spec_200, 200)
    reviser()
    roles_1000 = make_root(base / "roles-1000")
    add_roles(roles_1000, 1000)
    return Roots(
        changes_1000=changes_1000,
        spec_200=spec_200,
        spec_200_reviser=reviser,
        roles_1000=roles_1000,
    )


# --- the cases ----------------------------------------------------------------------------------


def check_role_list(stdout: str, stderr: str) -> str | None:
    """A visible role is listed (role-0001: neither pinned nor hidden) and nothing warned."""
    warnings = [line for line in stderr.splitlines() if line.lstrip().startswith("warning:")]
    if warnings:
        return "warnings on stderr:\n" + "\n".join(warnings[:10])
    if not any("role-0001" in line for line in stdout.splitlines()):
        return "no line for the visible role role-0001 on stdout"
    if "role-0007" in stdout:
        return "the hidden role role-0007 was listed"
    return None


def check_role_show(stdout: str, stderr: str) -> str | None:
    warnings = [line for line in stderr.splitlines() if line.lstrip().startswith("warning:")]
    if warnings:
        return "warnings on stderr:\n" + "\n".join(warnings[:10])
    return None if "role-0500" in stdout else "role-0500 is not in stdout"


def build_cases(sdd: list[str], roots: Roots, base: Path) -> list[Case]:
    return [
        Case("`python -c pass` (floor)", [sys.executable, "-c", "pass"], base),
        Case("`sdd --help`", [*sdd, "--help"], base, goal_ms=80),
        Case(
            "`sdd change list` (1,000 change packs)",
            [*sdd, "change", "list"],
            roots.changes_1000,
            goal_ms=250,
        ),
        Case(
            "`sdd accept section SPEC-0001#S200` (200 sections)",
            [*sdd, "accept", "section", "SPEC-0001#S200", "--words", "ok"],
            roots.spec_200,
            setup_before_each=roots.spec_200_reviser,
        ),
        Case(
            "`sdd role list` (1,000 roles)",
            [*sdd, "role", "list"],
            roots.roles_1000,
            goal_ms=150,
            check=check_role_list,
        ),
        Case(
            "`sdd role list` (1,000 roles, cold cache)",
            [*sdd, "role", "list"],
            roots.roles_1000,
            setup_before_each=RoleCacheDropper(roots.roles_1000),
            check=check_role_list,
        ),
        Case(
            "`sdd role show role-0500` (1,000 roles)",
            [*sdd, "role", "show", "role-0500"],
            roots.roles_1000,
            goal_ms=100,
            check=check_role_show,
        ),
    ]


# --- running ------------------------------------------------------------------------------------


def run_once(case: Case, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    if case.setup_before_each is not None:
        case.setup_before_each()
    start = time.perf_counter()
    done = subprocess.run(list(case.argv), cwd=case.cwd, env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000.0
    return elapsed, done


def warm_up(case: Case, env: dict[str, str]) -> None:
    _, done = run_once(case, env)
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        raise SystemExit(
            f"benchmark case {case.name} failed on warm-up (exit {done.returncode})\n"
            f"command: {' '.join(case.argv)}\ncwd: {case.cwd}\nstderr:\n{stderr}"
        )
    if case.check is not None:
        stdout = done.stdout.decode("utf-8", "replace")
        problem = case.check(stdout, done.stderr.decode("utf-8", "replace"))
        if problem is not None:
            raise SystemExit(
                f"benchmark case {case.name}: unexpected warm-up output: {problem}\n"
                f"command: {' '.join(case.argv)}\ncwd: {case.cwd}\nstdout (start):\n{stdout[:2000]}"
            )


def measure(cases: list[Case], runs: int, env: dict[str, str]) -> list[Result]:
    """Round-robin: run i of every case before run i+1 of any, so a slow spell on a shared
    machine lands on every row alike instead of on whichever case was running then."""
    for case in cases:
        warm_up(case, env)
    times: dict[str, list[float]] = {case.name: [] for case in cases}
    for _ in range(runs):
        for case in cases:
            elapsed, done = run_once(case, env)
            if done.returncode != 0:
                stderr = done.stderr.decode("utf-8", "replace").strip()
                raise SystemExit(
                    f"benchmark case {case.name} failed (exit {done.returncode})\nstderr:\n{stderr}"
                )
            times[case.name].append(elapsed)
    return [Result(case, times[case.name]) for case in cases]


def goal_cells(result: Result) -> tuple[str, str]:
    goal = result.case.goal_ms
    if goal is None:
        return "-", "-"
    return f"≤ {goal:g}", "yes" if result.median <= goal else "**no**"


def table(results: list[Result]) -> str:
    lines = [
        "| case | median ms | min ms | max ms | median - floor ms | goal ms | within goal |",
        "| --- | ---: | ---: | ---: | ---: | ---: | :---: |",
    ]
    floor = next((r.median for r in results if r.case.name.startswith("`python -c pass`")), None)
    for result in results:
        goal, within = goal_cells(result)
        over = "-" if floor is None else f"{result.median - floor:.1f}"
        lines.append(
            f"| {result.case.name} | {result.median:.1f} | {min(result.times_ms):.1f} "
            f"| {max(result.times_ms):.1f} | {over} | {goal} | {within} |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs per case")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_RUNS} runs (smoke test)")
    parser.add_argument(
        "--case", action="append", default=[], metavar="TEXT", help="only cases whose name has TEXT"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = QUICK_RUNS
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def compile_package() -> str:
    """Compile sdd_git to bytecode first, as pip does when it installs a package.

    An editable install under PYTHONDONTWRITEBYTECODE (set on these machines) never caches
    bytecode, so every run would recompile the package's sources: a cost no installed copy has.
    """
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("sdd_git")
    if spec is None or not spec.submodule_search_locations:
        return "sdd_git not importable here; not compiled"
    folder = next(iter(spec.submodule_search_locations))
    compileall.compile_dir(folder, quiet=1)
    return f"compiled {folder} with compileall, as pip does on install"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sdd, how, extra_env = sdd_command()
    env = child_env(extra_env)
    print(f"python {platform.python_version()} ({sys.executable})")
    print(f"machine: {platform.machine()}, {platform.platform()}, {os.cpu_count()} cpus")
    print(f"sdd: {how}")
    print(f"runs per case: {args.runs} (after one untimed warm-up run)")
    print(f"bytecode: {compile_package()}")
    with tempfile.TemporaryDirectory(prefix="sdd-bench-") as tmp:
        base = Path(tmp).resolve()
        roots = build_roots(base)
        os.sync()  # let the writeback of thousands of new files finish before anything is timed
        cases = build_cases(sdd, roots, base)
        if args.case:
            cases = [c for c in cases if any(text in c.name for text in args.case)]
        results = measure(cases, args.runs, env)
    print()
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
