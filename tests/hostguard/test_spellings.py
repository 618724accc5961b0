"""Every spelling of the table, fed to a real `sdd guard --host claude` process exactly as Claude
Code's PreToolUse hook feeds a Bash call: refused (exit 2, the reason on stderr), asked about
(exit 0, `permissionDecision: ask`) or let through (exit 0, nothing printed), as the table says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostguard.guardrun import ALLOW, DENY, bash
from tests.hostguard.spellings import ALL, PERSON, READS, UNCERTAIN, WRITES, Spelling


@pytest.mark.parametrize("spelling", ALL, ids=[f"{s.expect}: {s.id}" for s in ALL])
def test_the_guard_answers_each_spelling_as_the_table_says(
    product: Path, spelling: Spelling
) -> None:
    answered = bash(spelling.command, product)
    assert answered.decision == spelling.expect, (spelling.command, answered)
    assert "Traceback" not in answered.stderr


def test_the_table_is_an_adversarial_suite_worth_the_name() -> None:
    refused = [s for s in ALL if s.expect == DENY]
    assert len(refused) >= 60
    assert len(PERSON) >= 40 and len(WRITES) >= 25
    assert len(READS) >= 15 and len(UNCERTAIN) >= 5
    assert len({s.command for s in ALL}) == len(ALL)  # no spelling counted twice


def test_a_refusal_names_what_she_runs_instead(product: Path) -> None:
    answered = bash("cd src && sdd -C .. accept reading CH-0001", product)
    assert answered.decision == DENY
    assert "`sdd accept` is the person's own command" in answered.reason
    assert "sdd -C .. accept reading CH-0001" in answered.reason


def test_a_write_refusal_names_the_path_and_why(product: Path) -> None:
    answered = bash("echo x > records/decisions.yaml", product)
    assert answered.decision == DENY
    assert "records/decisions.yaml" in answered.reason
    assert "person's record" in answered.reason


def test_an_ask_says_what_could_not_be_checked(product: Path) -> None:
    answered = bash('eval "$X"', product)
    assert "cannot check this command with certainty" in answered.reason
    assert "eval" in answered.reason


def test_the_agent_may_work_from_a_subfolder_and_still_cannot_reach_the_record(
    product: Path,
) -> None:
    src = product / "src"
    assert bash("echo x > ../memory/decisions.yaml", src).decision == DENY
    assert bash("cp app.py ../.sdd/config.yaml", src).decision == DENY
    assert bash("echo x > new.py", src).decision == ALLOW


def test_a_command_run_outside_the_product_is_checked_where_it_writes(
    product: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = product / "memory" / "decisions.yaml"
    assert bash(f"echo x > {target}", elsewhere).decision == DENY
    assert bash(f"cd {product} && echo x > memory/decisions.yaml", elsewhere).decision == DENY
    assert bash("echo x > notes.txt", elsewhere).decision == ALLOW
