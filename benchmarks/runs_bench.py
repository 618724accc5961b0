"""How long `sdd role runs` takes over 2,000 run logs, through the runs index.

Run it as `python benchmarks/runs_bench.py [--runs N] [--logs N] [--keep DIR]`. It makes a product
with `sdd init` in a temporary folder and writes N run logs (2,000 by default) straight into
`.sdd/role-runs/`, shaped as the runner writes them: `run_started` with its provider and process,
the role's standing prompt and her task as `message` events, provider calls and replies with
OpenAI- or Anthropic-shaped `usage`, `read_file` calls with 2 to 12 KB results, `write_file` and
`run_command` calls, approval stops, decisions and `action_done`, rejections, and a `run_ended`
(done, stopped, failed, stopped-now, no-spec; one in 50 never ended, as a killed run). Six roles,
60 tasks, ten changes, sizes as real logs (about 86 KB each, 170 MB in all). Every log is the same
for the same `--logs` (a fixed seed).

Each case is a fresh `sdd` process, timed from `Popen` to its exit, round-robin, after one untimed
run (which must exit 0, and a search must find runs). It prints the Python version, the machine and
a table of median, min and max in ms against the goal. Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HOST = socket.gethostname()
REPO = Path(__file__).resolve().parent.parent
ROLES = ("builder", "spec-steward", "qa-author", "release-editor", "module-lead", "reviewer")
WORDS = [
    *("expense", "hotel", "invoice", "month", "merchant", "total", "report", "receipt"),
    *("refund", "currency", "card", "tax", "budget", "approval", "export", "search"),
    *("filter", "ledger", "payment", "vendor", "account", "audit", "travel", "meal"),
]
NARROWED = ("--since", "30d", "--change", "CH-0003")
SEARCHED = "reimbursement"  # in 1 task of 20: what the search case looks for
STATUSES = ("done",) * 12 + ("stopped",) * 4 + ("failed", "stopped-now", "no-spec", "interrupted")


def sdd_command() -> list[str]:
    script = Path(sys.executable).parent / "sdd"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "sdd_git"]


PYCACHE: list[Path] = []  # the bytecode cache of the children, in the temporary folder


def child_env() -> dict[str, str]:
    """NO_COLOR, no SDD_* setting, and Python's bytecode cache on (in a folder of the bench's
    own), as an installed sdd runs: these machines set PYTHONDONTWRITEBYTECODE, and an editable
    install would otherwise compile every module on every run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SDD_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if PYCACHE:
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE[0])
    env["NO_COLOR"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _code(rng: random.Random, size: int) -> str:
    lines, total = [], 0
    while total < size:
        name, value = rng.choice(WORDS), rng.choice(WORDS)
        line = f"    {name}_{rng.randrange(999)} = {value}({rng.randrange(99)})"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def one_log(rng: random.Random, number: int, start: float) -> tuple[str, str]:
    """One run's log (its id and its JSONL), as the runner writes it."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(start))
    run = f"run-{stamp}-{number:06x}"
    roles = [rng.choice(ROLES)]
    if rng.random() < 0.2:
        roles.append(rng.choice([r for r in ROLES if r != roles[0]]))
    task = f"Task {number % 60}: {_text(rng, 8)}"
    if number % 20 == 0:
        task = f"Check the {SEARCHED} date. {task}"
    change = f"CH-{(number % 10) + 1:04d}"
    events: list[dict[str, object]] = []
    clock = start

    def add(event: str, **fields: object) -> None:
        nonlocal clock
        clock += rng.uniform(0.5, 8)
        events.append(
            {
                "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock)),
                "run": run,
                "seq": len(events) + 1,
                "event": event,
                **fields,
            }
        )

    anthropic = rng.random() < 0.5
    dead_process = {"pid": 999_999_000 + number, "host": HOST, "started": 1}
    add("run_started", roles=roles, task=task, change=change, origin="person",
        provider="anthropic" if anthropic else "openai", model="bench-model",
        process=dead_process, sandbox="bwrap")  # fmt: skip
    section = f"SPEC-0001#S{number % 9 + 1}"
    add("plan", change=change, sections=[section], checks=["C1"], decisions=["D-0001"])
    add("message", role="system", content=_text(rng, 450))
    add("message", role="user", content=task, conversation_id="M1")
    for call in range(1, rng.randrange(4, 26)):
        add("provider_call", role=roles[0], purpose="author", call=call, **{"pass": None})
        spent_in, spent_out = rng.randrange(2_000, 40_000), rng.randrange(50, 900)
        cached = rng.randrange(0, spent_in)
        usage = (
            {"input_tokens": spent_in - cached, "cache_read_input_tokens": cached,
             "cache_creation_input_tokens": 0, "output_tokens": spent_out,
             "cached_input_tokens": cached, "cache_write_input_tokens": 0}
            if anthropic
            else {"prompt_tokens": spent_in, "completion_tokens": spent_out,
                  "prompt_tokens_details": {"cached_tokens": cached},
                  "cached_input_tokens": cached, "cache_write_input_tokens": 0}
        )  # fmt: skip
        tool = rng.choice(("read_file",) * 6 + ("write_file", "run_command", "list_files"))
        args: dict[str, object] = {"path": f"src/{rng.choice(WORDS)}.py"}
        args["purpose"] = _text(rng, 6)
        if tool == "write_file":
            args["content"] = _code(rng, rng.randrange(500, 4_000))
        if tool == "run_command":
            args = {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py", "purpose": "check"}
        call_id = f"call-{call}-1"
        add("reply", role=roles[0], usage=usage,
            message={"role": "assistant", "content": _text(rng, 25),
                     "tool_calls": [{"id": call_id, "name": tool, "arguments": args}]})  # fmt: skip
        add("tool_call", role=roles[0], tool=tool, args=args, call_id=call_id)
        if tool in ("write_file", "run_command") and rng.random() < 0.5:
            stop = f"stop-{rng.randrange(16**6):06x}"
            add("stop", stop=stop, kind="approval", action=f"{tool} {args.get('path', '')}",
                tool=tool, args=args, choices=["allow once", "always allow", "deny"],
                call_id=call_id, because="not allowed", sandbox="bwrap",
                expires_at=None)  # fmt: skip
            add("run_ended", status="stopped", waiting_for=stop)
            add("run_resumed", stop=stop, process={"pid": 1, "host": HOST, "started": 1})
            add("decision", stop=stop, choice=rng.choice(("allow_once", "deny")))
            add("action_done", tool=tool, args=args, by="allow_once")
        elif rng.random() < 0.05:
            add("rejected", tool=tool, reason="protected", message="memory/ is the person's")
        result = _code(rng, rng.randrange(1_000, 8_000))
        add("tool_result", call_id=call_id, tool=tool, content=result)
    if number % 50 != 7:  # one in fifty was killed mid-way: no run_ended
        status = rng.choice(STATUSES)
        ended: dict[str, object] = {"status": status}
        if status == "stopped":
            ended["waiting_for"] = f"stop-{rng.randrange(16**6):06x}"
        add("run_ended", **ended)
    return run, "".join(json.dumps(e) + "\n" for e in events)


def build(product: Path, logs: int) -> int:
    subprocess.run([*sdd_command(), "init", "--product", "bench"], cwd=product, env=child_env(),
                   check=True, capture_output=True)  # fmt: skip
    # A product with history, as hers has: git's index then exists, as it does there.
    (product / "README.md").write_text("# bench\n")
    for command in (["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                        *command], cwd=product, check=True, capture_output=True)  # fmt: skip
    folder = product / ".sdd" / "role-runs"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    rng = random.Random(26)
    start = time.time() - 60 * 86400
    total = 0
    for number in range(logs):
        start += 60 * 86400 / logs
        run, text = one_log(rng, number, start)
        (folder / f"{run}.jsonl").write_text(text)
        total += len(text)
    return total


@dataclass(frozen=True)
class Case:
    name: str
    argv: Sequence[str]
    goal_ms: float | None
    before_each: Callable[[], None] | None = None
    expect: str | None = None  # text the warm-up's stdout must hold
    heavy: bool = False  # reads every log: timed after the others, so its I/O never precedes them


def timed(argv: Sequence[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    began = time.perf_counter()
    done = subprocess.run(list(argv), cwd=cwd, env=child_env(), capture_output=True, check=False)
    return (time.perf_counter() - began) * 1000, done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per case")
    parser.add_argument("--logs", type=int, default=2000, help="run logs to write")
    parser.add_argument("--keep", type=Path, help="make the product here, and keep it")
    options = parser.parse_args(argv)
    base = options.keep or Path(tempfile.mkdtemp(prefix="sdd-runs-bench-"))
    product = base / "product"
    product.mkdir(parents=True, exist_ok=True)
    PYCACHE.append(base / "pycache")
    try:
        size = build(product, options.logs)
        sdd = sdd_command()
        index = product / ".sdd" / "local" / "runs.sqlite3"
        extra = product / ".sdd" / "role-runs" / "run-29991231-235959-ffffff.jsonl"
        rng = random.Random(7)
        _, fresh_log = one_log(rng, 9_999_999, time.time())

        def forget_index() -> None:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{index}{suffix}").unlink(missing_ok=True)

        def reindexed() -> None:
            subprocess.run([*sdd, "role", "runs", "--reindex", "-n", "1"], cwd=product,
                           env=child_env(), check=True, capture_output=True)  # fmt: skip

        def one_more_log() -> None:
            extra.write_text(fresh_log + fresh_log.splitlines(keepends=True)[0])

        cases = [
            Case("floor: python -c pass", [sys.executable, "-c", "pass"], None),
            Case("reference: sdd --help", [*sdd, "--help"], None, expect="Commands"),
            Case("reference: sdd role show builder", [*sdd, "role", "show", "builder"], None),
            Case("sdd role runs -n 20", [*sdd, "role", "runs", "-n", "20"], 100, expect="RUN"),
            Case(
                f"sdd role runs --search {SEARCHED}",
                [*sdd, "role", "runs", "--search", SEARCHED],
                100,
                expect=SEARCHED,
            ),
            Case(
                "sdd role runs -n 20 --status failed --since 30d --change CH-0003",
                [*sdd, "role", "runs", "-n", "20", "--status", "failed", *NARROWED],
                100,
                expect="RUN",
            ),
            Case("sdd usage --by day", [*sdd, "usage", "--by", "day"], 100, expect="total"),
            Case(
                "sdd role runs -n 20, first query after --reindex",
                [*sdd, "role", "runs", "-n", "20"],
                100,
                reindexed,
                expect="RUN",
            ),
            Case(
                "sdd role runs -n 20, one log changed since the last query",
                [*sdd, "role", "runs", "-n", "20"],
                100,
                one_more_log,
                expect="RUN",
            ),
            Case(
                "sdd role runs --reindex -n 20 (reads every log)",
                [*sdd, "role", "runs", "--reindex", "-n", "20"],
                None,
                expect="RUN",
                heavy=True,
            ),
            Case(
                "sdd role runs -n 20 with no index yet (built from every log)",
                [*sdd, "role", "runs", "-n", "20"],
                None,
                forget_index,
                expect="RUN",
                heavy=True,
            ),
        ]
        times: dict[str, list[float]] = {c.name: [] for c in cases}
        for case in cases:  # warm-up, checked
            if case.before_each:
                case.before_each()
            _, done = timed(case.argv, product)
            out = done.stdout.decode()
            if done.returncode != 0 or (case.expect and case.expect not in out):
                sys.stderr.write(f"{case.name}: exit {done.returncode}\n{done.stderr.decode()}\n")
                return 1
        light, heavy = [c for c in cases if not c.heavy], [c for c in cases if c.heavy]
        for group, runs in ((light, options.runs), (heavy, max(3, options.runs // 5))):
            for _ in range(runs):
                for case in group:
                    if case.before_each:
                        case.before_each()
                    elapsed, _ = timed(case.argv, product)
                    times[case.name].append(elapsed)
        machine = f"{platform.machine()}, {os.cpu_count()} cores"
        print(
            f"Python {platform.python_version()} on {machine}; {options.logs:,} run logs, "
            f"{size / 1e6:.0f} MB; {options.runs} runs per case; "
            f"index {index.stat().st_size / 1e6:.0f} MB"
        )
        print()
        print("| case | runs | median ms | min | max | goal | within goal |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for case in cases:
            values = times[case.name]
            goal = f"≤ {case.goal_ms:.0f}" if case.goal_ms else "-"
            met = (
                "-"
                if not case.goal_ms
                else ("yes" if statistics.median(values) <= case.goal_ms else "**no**")
            )
            spread = f"{statistics.median(values):.0f} | {min(values):.0f} | {max(values):.0f}"
            print(f"| {case.name} | {len(values)} | {spread} | {goal} | {met} |")
        return 0
    finally:
        if options.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
