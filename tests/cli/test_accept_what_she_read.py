"""She accepts what she read (CONTRACT §4, §9): `sdd change show CH` prints the sha256 of each
text she can accept (the reading, each scenario, the plan); `sdd accept reading|plan|scenario
--hash H` accepts only that text, refusing one that changed since H, and says the text it
accepted. The route found: a second spec-steward run redrafted S1 while she read the first
text, and her accept took the second (the same happened to a plan)."""

from __future__ import annotations

import hashlib
import json
import re

import yaml

from sdd_git.records import changes
from sdd_git.records.spec import read_spec, with_section_body
from sdd_git.root import Root
from tests.conftest import SddRunner

WORDS = "I can never find last month's hotel charge."
FIRST = "Search expenses by month.\n\n- C1: Searching hotel lists the charge."
SECOND = "Delete every expense older than a month.\n\n- C1: Nothing older is kept."
PLAN = "nodes:\n  - {id: N1, scope: expenses, task: Search by month, returns: commit}\n"
REDRAFTED = "nodes:\n  - {id: N1, scope: expenses, task: Delete old expenses, returns: commit}\n"


def decisions(root: Root) -> list[dict[str, object]]:
    return yaml.safe_load(root.decisions.read_text()) or []


def drafted(root: Root, reading: str) -> None:
    """S1 written on disk, as a spec-steward run's draft lands there."""
    pack = changes.load(root, "CH-0001")
    spec = read_spec(root.spec_file(pack.spec))
    spec.path.write_text(with_section_body(spec, "S1", reading), encoding="utf-8")


def shown_hashes(sdd: SddRunner) -> list[str]:
    """The sha256 values `sdd change show` prints, in order: sections, scenarios, the plan."""
    shown = sdd("change", "show", "CH-0001")
    assert shown.code == 0, shown.stderr
    return re.findall(r"^ +sha256: ([0-9a-f]{64})$", shown.stdout, re.MULTILINE)


def said_accepted(stderr: str) -> str:
    """The text `sdd accept` says it accepted (its lines after 'the text accepted:')."""
    lines = stderr.splitlines()
    start = lines.index("the text accepted:") + 1
    return "\n".join(line[2:] for line in lines[start:])


def s1_text(root: Root) -> str:
    return read_spec(root.spec_file("SPEC-0001")).section("S1").text


def test_accept_reading_with_the_hash_of_a_text_redrafted_since_is_refused_and_records_nothing(
    sdd: SddRunner, root: Root
) -> None:
    assert sdd("change", "new", WORDS).code == 0
    drafted(root, FIRST)
    (read,) = shown_hashes(sdd)
    drafted(root, SECOND)  # a second run redrafts S1 while she reads the first
    result = sdd("accept", "reading", "CH-0001", "--hash", read)
    assert result.code == 1
    assert "it changed while you read it" in result.stderr
    assert f"you read the text with sha256 {read}" in result.stderr
    assert "hint: read it again with sdd change show CH-0001" in result.stderr
    assert result.stdout == ""
    assert decisions(root) == []


def test_accept_reading_with_the_hash_change_show_printed_is_accepted_and_says_that_text(
    sdd: SddRunner, root: Root
) -> None:
    assert sdd("change", "new", WORDS).code == 0
    drafted(root, FIRST)
    (read,) = shown_hashes(sdd)
    result = sdd("accept", "reading", "CH-0001", "--hash", read)
    assert result.code == 0, result.stderr
    assert result.stdout == "D-0001\n"  # the decision id, first and alone on stdout
    assert result.stderr.splitlines()[0].startswith(
        "accepted the reading of CH-0001: decision D-0001"
    )
    assert said_accepted(result.stderr) == s1_text(root)
    (entry,) = decisions(root)
    assert entry["hash"] == read


def test_accept_reading_without_hash_still_says_the_text_it_accepted(
    sdd: SddRunner, root: Root
) -> None:
    assert sdd("change", "new", WORDS).code == 0
    drafted(root, SECOND)
    result = sdd("accept", "reading", "CH-0001")
    assert result.code == 0 and result.stdout == "D-0001\n"
    assert said_accepted(result.stderr) == s1_text(root)
    assert "Delete every expense older than a month." in said_accepted(result.stderr)


def test_a_hash_that_is_not_a_sha256_is_a_usage_error_and_records_nothing(
    sdd: SddRunner, root: Root
) -> None:
    assert sdd("change", "new", WORDS).code == 0
    drafted(root, FIRST)
    result = sdd("accept", "reading", "CH-0001", "--hash", "68e5113")
    assert result.code == 2
    assert "error: '68e5113' is not a sha256 (64 hex digits)" in result.stderr
    assert decisions(root) == []


def test_accept_plan_with_the_hash_of_a_plan_redrafted_since_is_refused_then_the_new_one_taken(
    sdd: SddRunner, root: Root
) -> None:
    assert sdd("change", "new", WORDS).code == 0
    plan = root.change_dir("CH-0001") / "plan.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    *_, read = shown_hashes(sdd)
    assert read == hashlib.sha256(PLAN.encode()).hexdigest()
    plan.write_text(REDRAFTED, encoding="utf-8")  # a lead's second run redrafts it
    refused = sdd("accept", "plan", "CH-0001", "--hash", read)
    assert refused.code == 1
    assert "the plan of CH-0001: it changed while you read it" in refused.stderr
    assert "changes/CH-0001/plan.yaml" in refused.stderr  # where she reads it again
    assert decisions(root) == []
    *_, again = shown_hashes(sdd)
    taken = sdd("accept", "plan", "CH-0001", "--hash", again)
    assert taken.code == 0, taken.stderr
    assert taken.stdout == "D-0001\n"
    assert said_accepted(taken.stderr) == REDRAFTED.rstrip("\n")
    (entry,) = decisions(root)
    assert entry["kind"] == "accept-plan" and entry["hash"] == again


def test_accept_scenario_with_the_hash_of_a_scenario_rewritten_since_is_refused(
    sdd: SddRunner, root: Root
) -> None:
    assert sdd("change", "new", WORDS).code == 0
    made = sdd(
        "scenario", "add", "CH-0001", "--title", "Find it",
        "--steps", "Open the list\nSearch hotel", "--expected", "Listed.",
    )  # fmt: skip
    assert made.code == 0, made.stderr
    _s1, read = shown_hashes(sdd)
    path = root.change_dir("CH-0001") / "scenarios.yaml"
    path.write_text(path.read_text().replace("Listed.", "Nothing is listed."), encoding="utf-8")
    refused = sdd("accept", "scenario", "CH-0001/SC-1", "--hash", read)
    assert refused.code == 1
    assert "scenario CH-0001/SC-1: it changed while you read it" in refused.stderr
    assert [d for d in decisions(root) if d["kind"] == "accept-scenario"] == []
    _s1, again = shown_hashes(sdd)
    taken = sdd("accept", "scenario", "CH-0001/SC-1", "--hash", again)
    assert taken.code == 0, taken.stderr
    assert taken.stdout == "D-0001\n"
    assert said_accepted(taken.stderr) == (
        "title: Find it\nsteps: Open the list\n  Search hotel\nexpected: Nothing is listed."
    )


def test_change_show_json_carries_the_hash_each_acceptance_records(
    sdd: SddRunner, root: Root
) -> None:
    assert sdd("change", "new", WORDS).code == 0
    drafted(root, FIRST)
    sdd("scenario", "add", "CH-0001", "--title", "T", "--steps", "S", "--expected", "E")
    (root.change_dir("CH-0001") / "plan.yaml").write_text(PLAN, encoding="utf-8")
    shown = json.loads(sdd("change", "show", "CH-0001", "--json").stdout)
    assert sdd("accept", "reading", "CH-0001").code == 0
    assert sdd("accept", "scenario", "CH-0001/SC-1").code == 0
    assert sdd("accept", "plan", "CH-0001").code == 0
    recorded = [d["hash"] for d in decisions(root)]
    assert recorded == [
        shown["sections"][0]["hash"],
        shown["scenarios"][0]["hash"],
        shown["plan"]["hash"],
    ]
    after = json.loads(sdd("change", "show", "CH-0001", "--json").stdout)
    assert after["plan"] == {
        "file": "changes/CH-0001/plan.yaml",
        "hash": shown["plan"]["hash"],
        "accepted_by": "D-0003",
    }
