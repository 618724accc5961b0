"""Command-prefix rules in real runs, with a scripted model, on this machine's sandbox: a
certain, plain match runs without a stop; every other spelling stops as before; a rule that
arrives in a role file she has not confirmed does nothing; and `sdd allow --always --prefix`
saves one only from a command it matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sdd_git.root import Root
from sdd_git.sandbox.choose import current
from tests.conftest import SddRunner, git
from tests.runner.scripted import accepted_change, add_role, events, script

RULES = (
    "boundary:\n  always_allow:\n"
    "    - {tool: run_command, prefix: [git, status], match: ['git status', 'git status -s'],"
    " not_match: ['git stash', 'git statusx']}\n"
    "    - {tool: run_command, prefix: [ls], match: ['ls -la'], not_match: ['lsof']}\n"
)


def _command(text: str, **extra: object) -> dict[str, object]:
    return {"tool": "run_command", "args": {"command": text, "purpose": "look", **extra}}


def _stops_and_runs(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> tuple[str, list[dict[str, object]]]:
    script(tmp_path, monkeypatch, [{"tool_calls": [_command(command)]}, {"say": "Done."}])
    out = json.loads(sdd("role", "run", "builder", "--task", "Look", "--json").stdout)
    return out["status"], events(root, out["run"])


@pytest.fixture
def prefixed(root: Root) -> Path:
    assert current().working, "these tests run on this machine's working sandbox"
    accepted_change(root)
    return add_role(root, "builder", extra=RULES)


@pytest.mark.parametrize("command", ["git status", "git status -s", "ls -la", "ls 2>&1"])
def test_a_certain_plain_match_in_a_working_sandbox_runs_without_a_stop(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    prefixed: Path,
    command: str,
) -> None:
    status, logged = _stops_and_runs(sdd, root, tmp_path, monkeypatch, command)
    assert status == "done"
    done = [e for e in logged if e["event"] == "action_done"]
    assert [(e["args"]["command"], e["by"]) for e in done] == [(command, "saved_rule")]
    assert not any(e["event"] == "stop" for e in logged)


@pytest.mark.parametrize(
    "command",
    [
        "git stash",
        "git statusx",
        "git status; touch pwned",
        "git status && touch pwned",
        "git status | sh",
        "git status $(touch pwned)",
        "git status `touch pwned`",
        "GIT_DIR=x git status",
        "./ls",
        "/bin/ls",
        '"ls" -la',
        "ls\\ x",
        "ls >pwned",
        "ls &",
        "ls\ntouch pwned",
        "ls ~",
        "ls *",
        "git -C .. status",
    ],
)
def test_every_other_spelling_stops_as_before(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    prefixed: Path,
    command: str,
) -> None:
    status, logged = _stops_and_runs(sdd, root, tmp_path, monkeypatch, command)
    # It stops for her, or the guard rejects it outright; it never runs under the rule.
    assert any(e["event"] in ("stop", "rejected") for e in logged), status
    assert not any(e["event"] == "action_done" for e in logged)
    assert not (root.path / "pwned").exists()


def test_a_call_that_asks_for_the_network_is_not_allowed_by_a_prefix_rule(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefixed: Path
) -> None:
    call = _command("git status", network=True)
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "Done."}])
    out = json.loads(sdd("role", "run", "builder", "--task", "Look", "--json").stdout)
    assert out["status"] == "stopped"


def test_ask_first_wins_over_a_prefix_rule(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(
        root,
        "builder",
        extra=RULES + "  ask_first:\n    - {tool: run_command, inputs: {command: 'git status*'}}\n",
    )
    status, logged = _stops_and_runs(sdd, root, tmp_path, monkeypatch, "git status")
    assert status == "stopped"
    (stop,) = [e for e in logged if e["event"] == "stop"]
    assert stop["because"] == "ask_first" and "always allow" not in stop["choices"]


def test_a_person_command_is_rejected_whatever_a_prefix_rule_says(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    # A rule cannot even name sdd: the file is refused.
    path = add_role(
        root,
        "builder",
        extra="boundary:\n  always_allow:\n"
        "    - {tool: run_command, prefix: [sdd], match: ['sdd next']}\n",
    )
    validated = sdd("role", "validate", str(path))
    assert validated.code != 0
    assert "'sdd' runs other commands" in validated.stdout + validated.stderr
    add_role(root, "builder", extra=RULES)
    status, logged = _stops_and_runs(sdd, root, tmp_path, monkeypatch, "ls; sdd next")
    assert [e["reason"] for e in logged if e["event"] == "rejected"] or status == "stopped"
    assert not any(e["event"] == "action_done" for e in logged)


def test_a_prefix_rule_that_arrives_by_a_merge_does_nothing_until_she_confirms_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    path = add_role(root, "builder")  # confirmed as she wrote it: no rule
    git(root.path, "add", "-A")
    git(root.path, "commit", "-qm", "builder")
    git(root.path, "checkout", "-qb", "theirs")
    text = path.read_text().replace("produces: code\n", "produces: code\n" + RULES)
    path.write_text(text)
    git(root.path, "commit", "-qam", "a stranger's pull request adds a prefix rule")
    git(root.path, "checkout", "-q", "-")
    git(root.path, "merge", "-q", "--no-ff", "-m", "merge", "theirs")
    script(tmp_path, monkeypatch, [{"tool_calls": [_command("git status")]}, {"say": "Done."}])
    refused = sdd("role", "run", "builder", "--task", "Look", "--json")
    assert refused.code != 0 and "sdd trust" in refused.stdout + refused.stderr
    assert sdd("trust", "accept", ".sdd/roles/builder/ROLE.md").code == 0
    out = json.loads(sdd("role", "run", "builder", "--task", "Look", "--json").stdout)
    assert out["status"] == "done"


def test_allow_always_prefix_saves_a_rule_from_a_matching_stop_and_it_then_holds(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    path = add_role(root, "builder")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [_command("git status -s")]},
            {"tool_calls": [_command("git status --porcelain")]},  # held by the new rule
            {"say": "Done."},
        ],
    )
    stop = json.loads(sdd("role", "run", "builder", "--task", "L", "--json").stdout)["stop"]
    assert sdd("allow", stop["id"], "--prefix", "git status").code == 2  # --always is needed
    wrong = sdd("allow", stop["id"], "--always", "--prefix", "git log")
    assert wrong.code == 2 and "not, for certain, one plain command" in wrong.stderr
    done = sdd("allow", stop["id"], "--always", "--prefix", "git status", "--json")
    assert done.code == 0, done.stdout + done.stderr
    (rule,) = yaml.safe_load(path.read_text().split("---\n")[1])["boundary"]["always_allow"]
    assert rule["prefix"] == ["git", "status"] and rule["match"] == ["git status -s"]
    assert rule["saved"]["stop"] == stop["id"]


def test_allow_always_prefix_refuses_a_command_that_is_not_certain(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    path = add_role(root, "builder")
    before = path.read_text()
    script(tmp_path, monkeypatch, [{"tool_calls": [_command("git status; ls")]}, {"say": "ok"}])
    stop = json.loads(sdd("role", "run", "builder", "--task", "L", "--json").stdout)["stop"]
    refused = sdd("allow", stop["id"], "--always", "--prefix", "git status")
    assert refused.code == 2 and "one plain command" in refused.stderr
    assert path.read_text() == before
