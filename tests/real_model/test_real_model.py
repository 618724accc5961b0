"""Every shipped role against a real model nobody scripted (issue 11). Only the runner's
invariants are asserted, never the quality of the model's work:

- each run ends in a known state (done, stopped, failed with a clear `error:`, no-spec) within a
  bound, with no traceback, and its log parses and ends with `run_ended`;
- a stopped run resumes when the stop is answered (allow, allow --always and deny in turn);
- every consequential action that ran was allowed by her answer to its own stop or by a rule
  she saved, and nothing ran after a deny;
- the person's record is byte-identical, and no commit appeared that no allowed stop named;
- each request the server received carried exactly one role id, of a role in the run;
- no secret from the environment or the product's `.env` reached the server, though the product
  files the model reads contain them.

Needs a server: `python3 .ci/model-server start`, then `SDD_REAL_MODEL_URL=<printed url>`.
With `-s`, a figure per run is printed.
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

from sdd_git.tools.catalog import TOOL_CLASSES
from tests.conftest import commit_all, git
from tests.real_model.conftest import RecordingProxy

URL = os.environ.get("SDD_REAL_MODEL_URL", "")  # read before the autouse fixture clears SDD_*

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(
        not URL, reason="no real model server configured (run: python3 .ci/model-server start)"
    ),
]

PROCESS_BOUND = 600  # seconds for one `sdd` process: a run, or the rest of it after an answer
# Stops answered per run before the test leaves the last one pending: four answer each kind
# (allow, allow --always, deny) at least once. Each answer is another process that sends the
# whole conversation again; on two cores one such request of the qa-author took 23 s in CI.
MAX_ANSWERS = int(os.environ.get("SDD_REAL_MODEL_MAX_ANSWERS", "4"))
ANSWERS = (("allow",), ("allow", "--always"), ("deny",))
KNOWN_EXITS = {0, 1, 3, 4}
CONTEXT = os.environ.get("SDD_REAL_MODEL_CONTEXT", "4096")  # the server's n_ctx
# A reply cap keeps CI in its time bound: at ~45 tokens a second on two cores, an uncapped reply
# of a small model that never stops talking takes minutes. Greedy decoding makes runs repeatable.
MAX_TOKENS = os.environ.get("SDD_REAL_MODEL_MAX_TOKENS", "256")
CONFIG = (
    "provider: {kind: openai, model: smollm2, base_url: null, api_key_env: none, "
    f"context: {CONTEXT}, max_tokens: {MAX_TOKENS}, timeout: 300, temperature: 0}}\n"
)
# Secrets within the run's reach. The product's own files contain them too (a README that pastes
# a token, a data file with the database password): the masker must keep them from the model.
CANARIES = {
    "GITHUB_TOKEN": "ghp_Canary7Q2xWm4Lp9Rt6Yb3Nk8Hs1Vd5Zc0",
    "AWS_SECRET_ACCESS_KEY": "wJalrCanaryXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE",
    "ANTHROPIC_API_KEY": "sk-ant-api03-CanaryAnthropicKey0123456789abcdef",
    "OPENAI_API_KEY": "sk-proj-CanaryOpenAIKey0123456789abcdefABCDEF",
}
DOTENV_PASSWORD = "Canary-db-pass-4417-zq"
CONSEQUENTIAL = {name for name, kind in TOOL_CLASSES.items() if kind == "consequential"}


@dataclass
class Figure:
    """What one scenario did, printed with -s: the figures in the README come from these."""

    name: str
    exits: list[int] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    ended: str = ""
    seconds: float = 0.0

    def show(self, product: Path, proxy: RecordingProxy) -> None:
        counts: collections.Counter[str] = collections.Counter()
        rejected: collections.Counter[str] = collections.Counter()
        ended = []
        for log in run_logs(product).values():
            for event in log:
                counts[str(event["event"])] += 1
                if event["event"] == "rejected":
                    rejected[str(event.get("reason"))] += 1
                if event["event"] == "run_ended":
                    ended.append(str(event.get("status")))
        posts = [x for x in proxy.exchanges if x.method == "POST"]
        prompt = [int((x.reply().get("usage") or {}).get("prompt_tokens") or 0) for x in posts]
        print(
            f"\n[real model] {self.name}: {len(run_logs(product))} run(s), "
            f"{len(posts)} requests (largest prompt {max(prompt, default=0)} tokens), "
            f"{counts['tool_call']} tool calls, {rejected['bad_arguments']} malformed, "
            f"rejected {dict(rejected) or 'none'}, {counts['stop']} stops, "
            f"{counts['action_done']} actions done, {counts['action_failed']} failed, "
            f"answers {self.answers or 'none'}, exits {self.exits}, run_ended {ended}, "
            f"{self.seconds:.0f} s\n  last: {self.ended}"
        )


@dataclass(frozen=True)
class Scene:
    product: Path
    proxy: RecordingProxy


def sdd(product: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m sdd_git ARGS` as a real child process, against the server through the proxy."""
    env = {
        **os.environ,
        **CANARIES,
        "SDD_PROVIDER": "openai",
        "SDD_BASE_URL": url,
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


def person(scene: Scene, *args: str) -> str:
    result = sdd(scene.product, scene.proxy.url, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def run_logs(product: Path) -> dict[str, list[dict[str, Any]]]:
    """Every run log, parsed line by line (a line that does not parse fails the test)."""
    logs = {}
    for path in sorted((product / ".sdd" / "role-runs").glob("*.jsonl")):
        logs[path.stem] = [json.loads(line) for line in path.read_text().splitlines() if line]
    return logs


def last_events(product: Path, count: int = 6) -> list[dict[str, Any]]:
    tail = []
    for path in sorted((product / ".sdd" / "role-runs").glob("*.jsonl")):
        tail.extend(path.read_text().splitlines()[-count:])
    return [json.loads(line) for line in tail[-count:] if line.strip()]


def ended_cleanly(product: Path, result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """A known exit, no traceback, a clean `error:` line on 1, one JSON document on stdout."""
    where = f"exit {result.returncode}; stderr:\n{result.stderr}\nlast: {last_events(product)}"
    assert result.returncode in KNOWN_EXITS, where
    assert "Traceback" not in result.stderr + result.stdout, where
    if result.returncode == 1:
        assert re.search(r"^error: \S", result.stderr, re.M), where
    outcome: dict[str, Any] = json.loads(result.stdout)
    return outcome


def record(product: Path, spec_without_reading: str | None = None) -> dict[str, str]:
    """Hashes of the person's record: memory/ and changes/ (decisions included). For a run that
    may draft the reading, the reading section of that spec is left out: it is the role's draft."""
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


def assert_no_commit_unnamed(product: Path, before: list[str]) -> None:
    """A new commit only where an allowed git_commit stop named its exact message."""
    allowed = {
        str(e.get("stop"))
        for log in run_logs(product).values()
        for e in log
        if e["event"] == "decision" and e.get("choice") in ("allow_once", "always_allow")
    }
    named = [
        str((e.get("args") or {}).get("message", "")).strip()
        for log in run_logs(product).values()
        for e in log
        if e["event"] == "stop" and e.get("tool") == "git_commit" and e["stop"] in allowed
    ]
    for sha in set(commits(product)) - set(before):
        message = git(product, "log", "-1", "--format=%B", sha).strip()
        assert message in named, (sha, message, named)
        named.remove(message)


def assert_only_allowed_actions_ran(product: Path) -> None:
    """Each consequential action that ran follows her allow of its own stop (same tool and
    arguments), or a rule she saved with --always in this product; nothing runs after a deny."""
    logs = run_logs(product)
    saved = any(
        e["event"] == "decision" and e.get("choice") == "always_allow"
        for log in logs.values()
        for e in log
    )
    for run, log in logs.items():
        stops = {e["stop"]: e for e in log if e["event"] == "stop"}
        previous: dict[str, Any] = {}
        for event in log:
            kind = event["event"]
            if kind in ("action_done", "action_failed"):
                assert event["tool"] in CONSEQUENTIAL, (run, event)
                by = event.get("by")
                if by in ("allow_once", "always_allow"):
                    assert previous.get("event") == "decision", (run, previous, event)
                    assert previous.get("choice") == by, (run, previous, event)
                    asked = stops[str(previous["stop"])]
                    assert (asked["tool"], asked["args"]) == (event["tool"], event["args"])
                else:
                    assert by == "saved_rule" and saved, (run, event)
                    assert previous.get("event") == "tool_call", (run, previous, event)
                    assert previous.get("tool") == event["tool"], (run, previous, event)
            if kind == "decision" and previous.get("event") == "run_resumed":
                assert previous.get("stop") == event.get("stop"), (run, previous, event)
            if previous.get("event") == "decision" and previous.get("choice") == "deny":
                assert kind not in ("action_done", "action_failed"), (run, previous, event)
            if kind not in ("progress",):
                previous = event


def assert_requests_clean(proxy: RecordingProxy, roles: set[str]) -> None:
    """One role id per request, of a role in the run; no secret in anything the server got."""
    posts = [x for x in proxy.exchanges if x.method == "POST"]
    assert posts, "the server received no request"
    secrets = [*CANARIES.values(), DOTENV_PASSWORD]
    for exchange in posts:
        assert len(exchange.headers.get("x-sdd-role", [])) == 1, exchange.headers
        assert exchange.headers["x-sdd-role"][0] in roles, exchange.headers
        assert len(exchange.headers.get("x-sdd-run", [])) == 1, exchange.headers
        assert "authorization" not in exchange.headers  # the config names no key for this server
        seen = exchange.body.decode("utf-8", "replace") + json.dumps(exchange.headers)
        for secret in secrets:
            assert secret not in seen, f"a secret reached the server in {exchange.path}"


def drive(scene: Scene, figure: Figure, *run_args: str) -> None:
    """One run, every stop answered with allow, allow --always and deny in turn, then every
    invariant the run must keep, whatever the model proposed."""
    product = scene.product
    began = time.monotonic()
    result = sdd(product, scene.proxy.url, "role", "run", *run_args, "--json")
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
        result = sdd(product, scene.proxy.url, answer[0], stop["id"], *answer[1:], "--json")
        figure.exits.append(result.returncode)
        outcome = ended_cleanly(product, result)
        resumed = [e for e in run_logs(product)[stop["run"]] if e["event"] == "run_resumed"]
        assert any(e.get("stop") == stop["id"] for e in resumed), "the run did not resume"
    figure.ended = f"exit {result.returncode}, {outcome.get('status')}: {outcome.get('message')}"
    figure.seconds = time.monotonic() - began
    figure.show(product, scene.proxy)
    logs = run_logs(product)
    assert logs, "no run log was written"
    for run, log in logs.items():
        assert log[-1]["event"] == "run_ended", (run, log[-3:])
    assert_only_allowed_actions_ran(product)


@pytest.fixture
def scene(tmp_path: Path, proxy: RecordingProxy) -> Scene:
    folder = tmp_path / "product"
    folder.mkdir()
    made = Scene(folder, proxy)
    person(made, "init", "--product", "Expenses")
    config = folder / ".sdd" / "config.yaml"
    config.write_text(re.sub(r"(?m)^provider:.*\n", CONFIG, config.read_text()))
    # She edited her settings by hand; she confirms them, as `sdd` asks her to (CONTRACT §13).
    person(made, "trust", "accept", ".sdd/config.yaml")
    (folder / "README.md").write_text(
        "# Expenses\n\nA list of expenses, one a line: date, what, amount.\n\n"
        f"Deploy: GITHUB_TOKEN={CANARIES['GITHUB_TOKEN']} ./deploy.sh\n"
    )
    (folder / "expenses.txt").write_text(
        f"2026-10-03 hotel 120\n2026-11-02 taxi 14\n# db: postgres://app:{DOTENV_PASSWORD}@db\n"
    )
    (folder / ".env").write_text(f"DB_PASSWORD={DOTENV_PASSWORD}\n")
    commit_all(folder, "start")
    return made


def new_change(scene: Scene, accepted: bool) -> str:
    change = person(scene, "change", "new", "I can never find last month's hotel charge.")
    change = change.split()[0]
    if accepted:
        reading = "Search by month.\n\n- C1: Searching hotel lists it.\n- C2: No match says so."
        person(scene, "correct", "reading", change, reading)
        person(scene, "accept", "reading", change)
    commit_all(scene.product, "the change")
    return change


def check_after(scene: Scene, roles: set[str], before: dict[str, str], head: list[str]) -> None:
    assert_no_commit_unnamed(scene.product, head)
    assert_requests_clean(scene.proxy, roles)
    spec = next((scene.product / "memory" / "specs").glob("SPEC-*.md")).name
    reading_may_change = "spec-steward" in roles
    assert record(scene.product, spec if reading_may_change else None) == before


def run_role(scene: Scene, name: str, role: str, task: str, *extra: str, accepted: bool) -> None:
    change = new_change(scene, accepted)
    spec = next((scene.product / "memory" / "specs").glob("SPEC-*.md")).name
    before = record(scene.product, spec if role == "spec-steward" else None)
    head = commits(scene.product)
    drive(
        scene, Figure(name), role, "--task", task.format(change=change), "--change", change, *extra
    )
    critic = {extra[1]} if extra[:1] == ("--with",) else set()
    check_after(scene, {role} | critic, before, head)


def test_the_spec_steward_drafts_a_reading(scene: Scene) -> None:
    task = "Draft the reading of {change}: what does the person mean?"
    run_role(scene, "spec-steward, reading", "spec-steward", task, accepted=False)


def test_the_builder_works_on_an_accepted_section(scene: Scene) -> None:
    task = "Add a search by month to the product, as the accepted reading of {change} says."
    run_role(scene, "builder, accepted section", "builder", task, accepted=True)


def test_the_qa_author_drafts_scenarios(scene: Scene) -> None:
    task = "Draft scenarios that try each check of {change}."
    run_role(scene, "qa-author, scenarios", "qa-author", task, accepted=True)


def test_the_builder_with_the_qa_author_runs_the_accuracy_loop(scene: Scene) -> None:
    task = "Implement the accepted reading of {change}."
    extra = ("--with", "qa-author")
    run_role(scene, "builder --with qa-author", "builder", task, *extra, accepted=True)


def test_the_release_editor_drafts_release_notes(scene: Scene) -> None:
    task = "Draft the release notes for {change}, quoting the person's words."
    run_role(scene, "release-editor, notes", "release-editor", task, accepted=True)
