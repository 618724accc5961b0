"""`sdd role rules NAME`: a role's saved rules numbered from 1, in words, with when and from
which stop each was saved and whether it counts; `--revoke N` takes one out, as her own write
recorded in her trust ledger, and is refused inside a run or for a rule that is not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sdd_git.root import Root
from sdd_git.trust import ledger
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, script

RULES = (
    "boundary:\n  always_allow:\n"
    "    - {tool: run_command, prefix: [git, status], match: ['git status']}\n"
    "    - {tool: read_file, inputs: {path: a.txt}}\n"
    "  ask_first:\n    - {tool: git_push}\n"
)


def _rules(sdd: SddRunner, name: str = "builder") -> list[dict[str, object]]:
    listed = sdd("role", "rules", name, "--json")
    assert listed.code == 0, listed.stderr
    return list(json.loads(listed.stdout)["rules"])


def test_rules_are_listed_numbered_with_where_they_came_from(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "builder", extra=RULES)
    command = {"tool": "run_command", "args": {"command": "ls -la", "purpose": "look"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [command]}, {"say": "ok"}])
    stop = json.loads(sdd("role", "run", "builder", "--task", "L", "--json").stdout)["stop"]
    assert sdd("allow", stop["id"], "--always").code == 0
    listed = _rules(sdd)
    assert [(r["number"], r["section"]) for r in listed] == [
        (1, "always_allow"),
        (2, "always_allow"),
        (3, "always_allow"),
        (4, "ask_first"),
    ]
    assert all(r["counts"] for r in listed)
    assert [r["written_by_hand"] for r in listed] == [True, True, False, True]
    assert listed[2]["saved_from"] == stop["id"] and listed[2]["saved_at"]
    shown = sdd("role", "rules", "builder")
    assert "1. always allow: run_command with a command that is exactly one plain" in shown.stdout
    assert f"from {stop['id']}" in shown.stdout and "written by hand" in shown.stdout


def test_revoke_takes_one_rule_out_as_her_write(sdd: SddRunner, root: Root) -> None:
    path = add_role(root, "builder", extra=RULES)
    revoked = sdd("role", "rules", "builder", "--revoke", "2")
    assert revoked.code == 0 and 'read_file with path "a.txt"' in revoked.stderr
    front = yaml.safe_load(path.read_text().split("---\n")[1])
    assert front["boundary"]["always_allow"] == [
        {"tool": "run_command", "prefix": ["git", "status"], "match": ["git status"]}
    ]
    assert front["boundary"]["ask_first"] == [{"tool": "git_push"}]
    assert "role: builder  # the builder" in path.read_text()  # her comment survives
    # Recorded in her ledger: what the file grants now still counts.
    entry = ledger.read(root).entries[".sdd/roles/builder/ROLE.md"]
    assert "revoke" in entry.how
    assert all(r["counts"] for r in _rules(sdd))


@pytest.mark.parametrize("number", ["0", "5", "-1"])
def test_revoking_a_rule_that_is_not_there_exits_2_and_changes_nothing(
    sdd: SddRunner, root: Root, number: str
) -> None:
    path = add_role(root, "builder", extra=RULES)
    before = path.read_text()
    refused = sdd("role", "rules", "builder", "--revoke", number)
    assert refused.code == 2 and "numbered 1 to 3" in refused.stderr
    assert path.read_text() == before


def test_revoke_is_refused_inside_a_run(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = add_role(root, "builder", extra=RULES)
    before = path.read_text()
    monkeypatch.setenv("SDD_RUN_ID", "run-20261207-000000-abcdef")
    refused = sdd("role", "rules", "builder", "--revoke", "1")
    assert refused.code != 0 and "inside a role run" in refused.stderr
    assert path.read_text() == before


def test_a_rule_in_a_file_she_has_not_confirmed_is_listed_as_not_counting(
    sdd: SddRunner, root: Root
) -> None:
    path = add_role(root, "builder")
    path.write_text(path.read_text().replace("produces: code\n", "produces: code\n" + RULES))
    listed = _rules(sdd)
    assert [r["counts"] for r in listed] == [False, False, True]
    assert "does not count until you confirm" in sdd("role", "rules", "builder").stdout
