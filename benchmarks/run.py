"""Wall-clock benchmarks of the `sdd` command line, each command a fresh subprocess.

Run it as `python benchmarks/run.py [--runs N] [--quick] [--case TEXT]`. It builds synthetic sdd
roots in a temporary folder by writing their files directly (no `sdd` calls, except that the two
roots a role runs in get their accepted reading from `sdd change new`, `correct` and `accept`),
runs each case once untimed to warm the disk cache (a non-zero exit there stops everything, with
the command's stderr; so does a case's own `check` of the warm-up output), then times N runs and
prints a markdown table of median, min and max in milliseconds.

One command row ends earlier than the command: `sdd role run` is timed from its start to the moment
a loopback OpenAI-compatible server in this process receives its first provider request. A second
table holds the runner's in-process rows, timed by `benchmarks/runner_bench.py` in a subprocess:
the overhead per turn of a 100-turn scripted run, and boundary checks among 10,000 saved rules.
A third table is `benchmarks/cache_bench.py`'s: the input tokens a long run is billed for,
without and with Anthropic's prompt cache (10 turns with --quick, else 30; `--case cache`
alone).

Stdlib only. To add a row, add a `Case` in `build_cases` (and, if it needs one, a synthetic root
in `build_roots`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_RUNS = 15
QUICK_RUNS = 3
TURN_RUNS = 5  # scripted 100-turn runs, whatever --runs says
RULE_BATCHES = 5  # batches of RULE_CHECKS boundary checks
RULE_CHECKS = 100_000
TURNS = 100  # read_file calls before the final reply

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


Completed = subprocess.CompletedProcess[bytes]


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
    # Runs the command and says how long it took, in ms, when the time is not the whole process's.
    timer: Callable[[Case, dict[str, str]], tuple[float, Completed]] | None = None


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


def build_roots(base: Path, sdd: list[str], env: dict[str, str]) -> Roots:
    changes_1000 = make_root(base / "changes-1000")
    for number in range(1, 1001):
        add_change(changes_1000, number)
    spec_200 = make_root(base / "spec-200")
    reviser = SectionReviser(spec_200, 200)
    reviser()
    roles_1000 = make_root(base / "roles-1000")
    add_roles(roles_1000, 1000)
    for root in (changes_1000, spec_200, roles_1000):
        # Written here as the person commands write them: she confirms them, as she would
        # (CONTRACT §13), so a role's `hidden` and rules count.
        sdd_untimed(sdd, root, env, "trust", "accept", "--all")
    return Roots(
        changes_1000=changes_1000,
        spec_200=spec_200,
        spec_200_reviser=reviser,
        roles_1000=roles_1000,
    )


README = "# Bench\n\nA small file for the runner to read.\n"


@dataclass(frozen=True)
class RunRoots:
    """Roots where the `builder` role may run: each has CH-0001 with its reading accepted."""

    cold_start: Path
    turns: Path
    turns_script: Path


def sdd_untimed(sdd: list[str], root: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run([*sdd, *args], cwd=root, env=env, capture_output=True, check=False)
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        raise SystemExit(
            f"building a benchmark root: `sdd {' '.join(args)}` failed (exit {done.returncode})\n"
            f"cwd: {root}\nstderr:\n{stderr}"
        )


def make_run_root(folder: Path, sdd: list[str], env: dict[str, str]) -> Path:
    """A root with an accepted reading, made by the person commands themselves, and a README."""
    root = make_root(folder)
    sdd_untimed(sdd, root, env, "trust", "accept", "--all")  # the settings make_root wrote
    sdd_untimed(sdd, root, env, "change", "new", "I need search to work")
    sdd_untimed(sdd, root, env, "correct", "reading", "CH-0001", "Search.\n\n- C1: x")
    sdd_untimed(sdd, root, env, "accept", "reading", "CH-0001")
    write(root / "README.md", README)
    write(root / "NOTES.md", README)
    return root


def turns_script(turns: int) -> str:
    """`turns` calls that each read README.md or its twin NOTES.md in turn (the runner ends a run
    that asks for the same thing four times in a row), then a final reply: turns + 1 calls."""
    reads = [
        f"  - tool_calls: [{{tool: read_file, args: {{path: {name}}}}}]\n"
        for name in ("README.md", "NOTES.md")
    ]
    return "calls:\n" + "".join(reads[n % 2] for n in range(turns)) + "  - say: Done.\n"


def build_run_roots(base: Path, sdd: list[str], env: dict[str, str]) -> RunRoots:
    script = base / "turns-script.yaml"
    write(script, turns_script(TURNS))
    return RunRoots(
        cold_start=make_run_root(base / "run-cold-start", sdd, env),
        turns=make_run_root(base / "run-turns", sdd, env),
        turns_script=script,
    )


# --- a loopback OpenAI-compatible server --------------------------------------------------------

FINAL_REPLY = {"choices": [{"message": {"role": "assistant", "content": "Done."}}], "usage": {}}
PROXY_VARIABLES = (
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
)


@dataclass(frozen=True)
class Arrival:
    """A request as the handler saw it, with `time.perf_counter()` on its entry."""

    at: float
    path: str
    role: str | None


@dataclass
class ProviderStub:
    url: str = ""
    arrivals: list[Arrival] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> list[Arrival]:
        with self.lock:
            taken, self.arrivals = self.arrivals, []
        return taken


def stub_handler(stub: ProviderStub) -> type[BaseHTTPRequestHandler]:
    body = json.dumps(FINAL_REPLY).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            arrival = Arrival(time.perf_counter(), self.path, self.headers.get("X-SDD-Role"))
            with stub.lock:
                stub.arrivals.append(arrival)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class StubServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up early
            super().handle_error(request, client_address)


@contextmanager
def provider_stub() -> Iterator[ProviderStub]:
    """An OpenAI-compatible server on an ephemeral 127.0.0.1 port that always answers "Done."."""
    stub = ProviderStub()
    server = StubServer(("127.0.0.1", 0), stub_handler(stub))
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class FirstRequestTimer:
    """Times a command from just before Popen to the stub's first request; waits for its exit."""

    def __init__(self, stub: ProviderStub) -> None:
        self.stub = stub
        self.provider_env = {
            "SDD_PROVIDER": "openai",
            "SDD_BASE_URL": stub.url,
            "SDD_MODEL": "bench",
            "SDD_API_KEY": "bench-key-123456789",
        }

    def __call__(self, case: Case, env: dict[str, str]) -> tuple[float, Completed]:
        child = {k: v for k, v in env.items() if k not in PROXY_VARIABLES}
        child.update(self.provider_env)
        self.stub.take()
        argv = list(case.argv)
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, cwd=case.cwd, env=child, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        stdout, stderr = process.communicate(timeout=120)
        done = subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)
        arrivals = self.stub.take()
        if done.returncode != 0:
            return 0.0, done
        if len(arrivals) != 1:
            raise SystemExit(
                f"benchmark case {case.name}: expected 1 provider request, got {len(arrivals)}\n"
                f"stdout:\n{stdout.decode('utf-8', 'replace')[:2000]}"
            )
        arrival = arrivals[0]
        if arrival.path != "/v1/chat/completions" or arrival.role != "builder":
            raise SystemExit(
                f"benchmark case {case.name}: unexpected request {arrival.path} "
                f"with X-SDD-Role {arrival.role!r}"
            )
        return (arrival.at - start) * 1000.0, done


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


def check_role_run(stdout: str, stderr: str) -> str | None:
    return None if "Done." in stdout else "the reply 'Done.' is not in stdout"


def build_cases(
    sdd: list[str], roots: Roots, base: Path, run_roots: RunRoots, stub: ProviderStub
) -> list[Case]:
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
        Case(
            "`sdd role run builder` to its first provider request (loopback openai)",
            [*sdd, "role", "run", "builder", "--task", "Say done"],
            run_roots.cold_start,
            goal_ms=300,
            check=check_role_run,
            timer=FirstRequestTimer(stub),
        ),
    ]


# --- running ------------------------------------------------------------------------------------


def run_once(case: Case, env: dict[str, str]) -> tuple[float, Completed]:
    if case.setup_before_each is not None:
        case.setup_before_each()
    if case.timer is not None:
        return case.timer(case, env)
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


# --- the runner's in-process rows ---------------------------------------------------------------

RUNNER_BENCH = Path(__file__).resolve().parent / "runner_bench.py"
TURN_ROW = f"runner overhead per turn, {TURNS}-turn scripted run (ms per turn)"
RULE_ROW = "`BoundaryIndex.decide`, 10,000 saved rules (µs per check)"
BUILD_ROW = "`BoundaryIndex` build, 10,000 saved rules (ms)"


@dataclass(frozen=True)
class Measured:
    """A row of the second table: values in the unit its name gives."""

    name: str
    values: list[float]
    goal: float | None = None
    digits: int = 2

    @property
    def median(self) -> float:
        return statistics.median(self.values)


def driver(env: dict[str, str], *argv: str) -> dict[str, Any]:
    """Runs runner_bench.py with this interpreter and returns the JSON object it prints."""
    command = [sys.executable, str(RUNNER_BENCH), *argv]
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        raise SystemExit(
            f"benchmark driver failed (exit {done.returncode})\n"
            f"command: {' '.join(command)}\nstderr:\n{stderr}"
        )
    data = json.loads(done.stdout)
    if not isinstance(data, dict):
        raise SystemExit(f"benchmark driver printed no JSON object: {done.stdout[:200]!r}")
    return data


def turn_ms(env: dict[str, str], roots: RunRoots) -> float:
    """One scripted run of TURNS read_file calls and a final reply; its time per provider call."""
    data = driver(env, "turns", str(roots.turns), str(roots.turns_script))
    expected = {"provider_call": TURNS + 1, "tool_call": TURNS, "tool_result": TURNS, "rejected": 0}
    counts = {name: data.get(name) for name in expected}
    if counts != expected:
        raise SystemExit(f"the {TURNS}-turn run logged {counts}, expected {expected}")
    return float(data["elapsed_s"]) * 1000.0 / (TURNS + 1)


def measure_runner(env: dict[str, str], roots: RunRoots, only: list[str]) -> list[Measured]:
    def wanted(name: str) -> bool:
        return not only or any(text in name for text in only)

    rows: list[Measured] = []
    if wanted(TURN_ROW):
        turn_ms(env, roots)  # untimed warm-up, like the command rows
        per_turn = [turn_ms(env, roots) for _ in range(TURN_RUNS)]
        rows.append(Measured(TURN_ROW, per_turn, goal=5))
    if wanted(RULE_ROW) or wanted(BUILD_ROW):
        data = driver(env, "rules", "--batches", str(RULE_BATCHES), "--checks", str(RULE_CHECKS))
        rows.append(Measured(RULE_ROW, [float(v) for v in data["us_per_check"]], goal=50))
        rows.append(Measured(BUILD_ROW, [float(v) for v in data["build_ms"]], digits=1))
    return rows


# --- the tables ---------------------------------------------------------------------------------


def within_goal(median: float, goal: float | None) -> tuple[str, str]:
    if goal is None:
        return "-", "-"
    return f"≤ {goal:g}", "yes" if median <= goal else "**no**"


def goal_cells(result: Result) -> tuple[str, str]:
    return within_goal(result.median, result.case.goal_ms)


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


def runner_table(rows: list[Measured]) -> str:
    lines = [
        "| case | median | min | max | goal | within goal |",
        "| --- | ---: | ---: | ---: | ---: | :---: |",
    ]
    for row in rows:
        goal, within = within_goal(row.median, row.goal)
        d = row.digits
        lines.append(
            f"| {row.name} | {row.median:.{d}f} | {min(row.values):.{d}f} "
            f"| {max(row.values):.{d}f} | {goal} | {within} |"
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
    print(
        f"runner rows: {TURN_RUNS} scripted runs of {TURNS + 1} provider calls (after one "
        f"untimed); {RULE_BATCHES} batches of {RULE_CHECKS:,} boundary checks"
    )
    print(f"bytecode: {compile_package()}")
    with tempfile.TemporaryDirectory(prefix="sdd-bench-") as tmp, provider_stub() as stub:
        base = Path(tmp).resolve()
        roots = build_roots(base, sdd, env)
        run_roots = build_run_roots(base, sdd, env)
        os.sync()  # let the writeback of thousands of new files finish before anything is timed
        # sdd caches a parsed file only once it is 2 s old (sdd_git/parsecache.py), as a person's
        # files are: wait that long so the warm rows measure a warm cache.
        time.sleep(2.1)
        cases = build_cases(sdd, roots, base, run_roots, stub)
        if args.case:
            cases = [c for c in cases if any(text in c.name for text in args.case)]
        results = measure(cases, args.runs, env)
        runner_rows = measure_runner(env, run_roots, args.case)
    if results:
        print()
        print(table(results))
    if runner_rows:
        print()
        print(runner_table(runner_rows))
    if not args.case or any(text in CACHE_ROWS for text in args.case):
        print()
        print(cache_table(env, args.quick))
    return 0


# --- what a run pays for its input (tokens, not time) --------------------------------------------

CACHE_BENCH = Path(__file__).resolve().parent / "cache_bench.py"
CACHE_ROWS = "prompt cache: billed input of a long run, before and after (cache_bench.py)"


def cache_table(env: dict[str, str], quick: bool) -> str:
    """cache_bench.py's table as it prints it; --quick replays 10 turns instead of 30."""
    command = [sys.executable, str(CACHE_BENCH), *(["--quick"] if quick else [])]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"cache_bench.py failed (exit {done.returncode}):\n{done.stderr}")
    return done.stdout.rstrip()


if __name__ == "__main__":
    sys.exit(main())
