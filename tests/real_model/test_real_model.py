"""Roles against a real model nobody scripted (issue 11): only the runner's invariants are
asserted, never the quality of the model's work.

Needs a server: `python3 .ci/model-server start`, then `SDD_REAL_MODEL_URL=<printed url>`.
Run with `-s` to see a figure per run.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import commit_all, git

URL = os.environ.get("SDD_REAL_MODEL_URL", "")  # read before the autouse fixture clears SDD_*

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(
        not URL, reason="no real model server configured (run: python3 .ci/model-server start)"
    ),
]

PROCESS_BOUND = 900  # seconds for one `sdd` process: a run, or the rest of it after an answer
MAX_ANSWERS = 9  # stops answered per run before the test leaves the last one pending
ANSWERS = (("allow",), ("allow", "--always"), ("deny",))
KNOWN_EXITS = {0, 1, 3, 4}
CONTEXT = os.environ.get("SDD_REAL_MODEL_CONTEXT", "4096")  # the server's n_ctx
CONFIG = (
    "provider: {kind: openai, model: smollm2, base_url: null, api_key_env: none, "
    f"context: {CONTEXT}, timeout: 300}}\n"
)


@dataclass
class Figure:
    name: str
    exits: list[int] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    ended: str = ""
    seconds: float = 0.0

    def show(self, product: Path) -> None:
        logs = run_logs(product)
        counts: collections.Counter[str] = collections.Counter()
        rejected: collections.Counter[str] = collections.Counter()
        ended = []
        for log in logs.values():
            for event in log:
                counts[str(event["event"])] += 1
                if event["event"] == "rejected":
                    rejected[str(event.get("reason"))] += 1
                if event["event"] == "run_ended":
                    ended.append(str(event.get("status")))
        stops = [
            f"{e.get('kind')}: {str(e.get('action'))[:60]}"
            for log in logs.values()
            for e in log
            if e["event"] == "stop"
        ]
        print(
            f"\n[real model] {self.name}: {len(logs)} run(s), "
            f"{counts['provider_call']} provider calls, {counts['tool_call']} tool calls, "
            f"{rejected['bad_arguments']} malformed (bad_arguments), "
            f"rejected {dict(rejected) or 'none'}, stops {counts['stop']}, "
            f"answers {self.answers or 'none'}, exits {self.exits}, "
            f"run_ended {ended}, {self.seconds:.0f} s\n  stops: {stops}\n  last: {self.ended}"
        )


def sdd(product: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m sdd_git ARGS` as a real child process, against the real server."""
    env = {
        **os.environ,
        "SDD_PROVIDER": "openai",
        "SDD_BASE_URL": URL,
        "SDD_MODEL": "smollm2",
    }
    try:
        return subprocess.run(
            [sys.executable, "-m", "sdd_git", *args],
            cwd=product,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=PROCESS_BOUND,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"`sdd {' '.join(args[:3])}` did not end within {PROCESS_BOUND} s; "
            f"last events: {last_events(product)}"
        )


def person(product: Path, *args: str) -> str:
    result = sdd(product, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def run_logs(product: Path) -> dict[str, list[dict[str, Any]]]:
    """Every run log, parsed line by line (a line that does not parse fails the test)."""
    logs = {}
    for path in sorted((product / ".sdd" / "role-runs").glob("*.jsonl")):
        logs[path.stem] = [json.loads(line) for line in path.read_text().splitlines() if line]
    return logs


def last_events(product: Path, count: int = 6) -> list[dict[str, Any]]:
    with_tail = []
    for path in sorted((product / ".sdd" / "role-runs").glob("*.jsonl")):
        with_tail.extend(path.read_text().splitlines()[-count:])
    return [json.loads(line) for line in with_tail[-count:] if line.strip()]


def ended_cleanly(product: Path, result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A known exit, no traceback, a clean `error:` line on 1, one JSON document on stdout."""
    tail = last_events(product)
    where = f"exit {result.returncode}; stderr:\n{result.stderr}\nlast events: {tail}"
    assert result.returncode in KNOWN_EXITS, where
    assert "Traceback" not in result.stderr + result.stdout, where
    if result.returncode == 1:
        assert re.search(r"^error: \S", result.stderr, re.M), where
    outcome: dict[str, Any] = json.loads(result.stdout)
    return outcome


def record(product: Path, spec_without_reading: str | None = None) -> dict[str, str]:
    """Hashes of the person's record: memory/ and changes/ (decisions included)."""
    hashes = {}
    for top in ("memory", "changes"):
        for path in sorted((product / top).rglob("*")):
            if not path.is_file():
                continue
            data = path.read_bytes()
            if spec_without_reading and path.name == spec_without_reading:
                data = re.sub(rb"(?ms)^## S1 Reading\n.*?(?=^## |\Z)", b"## S1 Reading\n", data)
            hashes[str(path.relative_to(product))] = hashlib.sha256(data).hexdigest()
    return hashes


def commits(product: Path) -> list[str]:
    return git(product, "rev-list", "--all").split()


def no_commit_unnamed(product: Path, before: list[str]) -> None:
    """A new commit only where an allowed git_commit stop named its exact message."""
    allowed_stops = {
        str(e.get("stop"))
        for log in run_logs(product).values()
        for e in log
        if e["event"] == "decision" and e.get("choice") in ("allow_once", "always_allow")
    }
    named = [
        str((e.get("args") or {}).get("message", "")).strip()
        for log in run_logs(product).values()
        for e in log
        if e["event"] == "stop" and e.get("tool") == "git_commit" and e["stop"] in allowed_stops
    ]
    for sha in set(commits(product)) - set(before):
        message = git(product, "log", "-1", "--format=%B", sha).strip()
        assert message in named, (sha, message, named)
        named.remove(message)


def drive(product: Path, figure: Figure, *run_args: str) -> None:
    """One run, every stop answered with allow, allow --always and deny in turn."""
    began = time.monotonic()
    result = sdd(product, "role", "run", *run_args, "--json")
    figure.exits.append(result.returncode)
    outcome = ended_cleanly(product, result)
    while result.returncode == 3 and len(figure.answers) < MAX_ANSWERS:
        stop = outcome.get("stop") or {}
        if stop.get("kind") not in ("approval", "draft"):
            break  # a reading to accept: the person's, never answered by the test
        answer = ANSWERS[len(figure.answers) % len(ANSWERS)]
        if "--always" in answer and "always allow" not in stop.get("choices", []):
            answer = ("allow",)
        figure.answers.append(" ".join(answer))
        result = sdd(product, answer[0], stop["id"], *answer[1:], "--json")
        figure.exits.append(result.returncode)
        outcome = ended_cleanly(product, result)
    figure.ended = f"exit {result.returncode}, {outcome.get('status')}: {outcome.get('message')}"
    figure.seconds = time.monotonic() - began
    figure.show(product)
    logs = run_logs(product)
    assert logs, "no run log was written"
    for run, log in logs.items():
        assert log[-1]["event"] == "run_ended", (run, log[-3:])


@pytest.fixture
def product(tmp_path: Path) -> Path:
    folder = tmp_path / "product"
    folder.mkdir()
    person(folder, "init", "--product", "Expenses")
    config = folder / ".sdd" / "config.yaml"
    config.write_text(re.sub(r"(?m)^provider:.*\n", CONFIG, config.read_text()))
    (folder / "README.md").write_text("# Expenses\n\nA list of expenses, one a line: date, what.\n")
    (folder / "expenses.txt").write_text("2026-10-03 hotel 120\n2026-11-02 taxi 14\n")
    commit_all(folder, "start")
    return folder


def test_the_spec_steward_drafts_a_reading(product: Path) -> None:
    change = person(product, "change", "new", "I can never find last month's hotel charge.")
    change = change.split()[0]
    commit_all(product, "the change")
    spec = next((product / "memory" / "specs").glob("SPEC-*.md")).name
    before, head = record(product, spec), commits(product)
    drive(
        product,
        Figure("spec-steward, reading"),
        "spec-steward",
        "--task",
        f"Draft the reading of {change}: what does the person mean?",
        "--change",
        change,
    )
    assert record(product, spec) == before
    no_commit_unnamed(product, head)


def test_the_builder_works_on_an_accepted_section(product: Path) -> None:
    change = person(product, "change", "new", "I can never find last month's hotel charge.")
    change = change.split()[0]
    person(
        product,
        "correct",
        "reading",
        change,
        "Search by month.\n\n- C1: Searching hotel lists it.\n- C2: No match says so.",
    )
    person(product, "accept", "reading", change)
    commit_all(product, "the accepted reading")
    before, head = record(product), commits(product)
    drive(
        product,
        Figure("builder, accepted section"),
        "builder",
        "--task",
        "Add a search by month to the product, as the accepted reading says.",
        "--change",
        change,
    )
    assert record(product) == before
    no_commit_unnamed(product, head)
