"""Issue 21, "drafts that cross changes": a run on one change overwrote another change's reading
(and her own correction with it). A draft writes only its run's own change, and a role's draft
never replaces her correction of a reading: it is kept beside it as a proposal she may take."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sdd_git.records import changes
from sdd_git.records.spec import read_spec
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, events, script

WORDS = "I can never find last month's hotel charge."


def reading(root: Root, change: str) -> str:
    pack = changes.load(root, change)
    return read_spec(root.spec_file(pack.spec)).section("S1").body


def draft(change: str, text: str) -> dict[str, Any]:
    return {
        "role": "spec-steward",
        "tool_calls": [
            {
                "tool": "draft_reading",
                "args": {"change": change, "text": text, "checks": ["It is found."]},
            }
        ],
    }


def rejections(root: Root, run_id: str) -> list[str]:
    return [str(e.get("reason")) for e in events(root, run_id) if e["event"] == "rejected"]


def test_a_run_on_one_change_cannot_draft_the_reading_or_scenarios_of_another(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = accepted_change(root)
    sdd("change", "new", "Totals per month.")
    assert sdd("correct", "reading", "CH-0002", "Totals, a line a month.").code == 0
    before = reading(root, "CH-0002")
    folder = root.path / "changes" / "CH-0002"
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    scenarios = {
        "role": "qa-author",
        "tool_calls": [
            {
                "tool": "draft_scenarios",
                "args": {
                    "change": "CH-0002",
                    "scenarios": [{"title": "t", "steps": "s", "expected": "e"}],
                },
            }
        ],
    }
    runs = []
    for role, calls in (
        ("spec-steward", draft("CH-0002", "Something else.")),
        ("qa-author", scenarios),
    ):
        script(tmp_path, monkeypatch, [calls, {"role": role, "say": "Done."}], role)
        done = sdd("role", "run", role, "--change", first, "--task", "Draft", "--json")
        assert done.code in (0, 3), done.stdout
        runs.append(json.loads(done.stdout)["run"])
    assert [rejections(root, run) for run in runs] == [["other_change"], ["other_change"]]
    assert reading(root, "CH-0002") == before
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == files


def test_a_drafted_reading_never_replaces_her_correction_and_she_may_take_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdd("change", "new", WORDS)
    assert sdd("correct", "reading", "CH-0001", "My own words: search by month.").code == 0
    script(
        tmp_path,
        monkeypatch,
        [draft("CH-0001", "The role's reading."), {"role": "spec-steward", "say": "Done."}],
    )
    done = sdd("role", "run", "spec-steward", "--change", "CH-0001", "--task", "Draft", "--json")
    assert done.code in (0, 3), done.stderr
    assert reading(root, "CH-0001") == "My own words: search by month."
    proposal = root.path / "changes" / "CH-0001" / "reading-proposal.md"
    assert proposal.read_text() == "The role's reading.\n\n- C1: It is found.\n"
    shown = sdd("change", "show", "CH-0001").stdout
    assert "a role proposed another reading" in shown and "The role's reading." in shown
    assert "sdd correct reading CH-0001 --proposal --hash " in shown

    # Her words stay the reading until she chooses; taking the proposal is her choice, and she
    # takes only the text she read.
    stale = sdd("correct", "reading", "CH-0001", "--proposal", "--hash", "0" * 64)
    assert stale.code == 1 and "changed while you read it" in stale.stderr
    assert reading(root, "CH-0001") == "My own words: search by month."
    digest = hashlib.sha256(proposal.read_bytes()).hexdigest()
    taken = sdd("correct", "reading", "CH-0001", "--proposal", "--hash", digest)
    assert taken.code == 0, taken.stderr
    assert "The role's reading." in taken.stderr  # the text it took, said to her
    assert reading(root, "CH-0001") == "The role's reading.\n\n- C1: It is found."
    assert not proposal.exists()
    assert not changes.load(root, "CH-0001").corrected

    # The reading is no longer her own words, so a later draft replaces it as before.
    script(
        tmp_path,
        monkeypatch,
        [draft("CH-0001", "A second reading."), {"role": "spec-steward", "say": "ok"}],
        "t",
    )
    sdd("role", "run", "spec-steward", "--change", "CH-0001", "--task", "Again", "--json")
    assert reading(root, "CH-0001").startswith("A second reading.")


def test_taking_a_proposal_when_there_is_none_says_so(sdd: SddRunner) -> None:
    sdd("change", "new", WORDS)
    refused = sdd("correct", "reading", "CH-0001", "--proposal")
    assert refused.code != 0
    assert "no role has proposed another reading of CH-0001" in refused.stderr
    both = sdd("correct", "reading", "CH-0001", "words", "--proposal")
    assert both.code == 2 and "give your words, or --proposal" in both.stderr
