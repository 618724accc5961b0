"""She accepts what she saw (CONTRACT §12): every accept form on her page carries the sha256 of
the text it showed; a text that changed since is refused with "it changed while you read it",
nothing is recorded, and the page shows the new text. The route found: a second run redrafted
S1 (or the plan) while her page showed the first text, and her click accepted the second.

Over HTTP, in-process (Starlette's TestClient); the same route in a real browser is in
test_journey_browser.py."""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from starlette.testclient import TestClient

from sdd_git.page.app import build_app
from sdd_git.records import acceptance, changes
from sdd_git.records.spec import read_spec, section_hash, with_section_body
from sdd_git.root import Root
from tests.page.forms import form_fields
from tests.page.test_views import notice, page_log

WORDS = "I can never find last month's hotel charge."
FIRST = "Search expenses by month.\n\n- C1: Searching hotel lists the charge."
SECOND = "Delete every expense older than a month.\n\n- C1: Nothing older is kept."
PLAN = "nodes:\n  - {id: N1, scope: expenses, task: Search by month, returns: commit}\n"
REDRAFTED = "nodes:\n  - {id: N1, scope: expenses, task: Delete old expenses, returns: commit}\n"
CHANGED = "changed while you read it"


@pytest.fixture
def page(root: Root) -> TestClient:
    return TestClient(build_app(root))


def decisions_of(root: Root, kind: str) -> list[dict[str, Any]]:
    import yaml

    if not root.decisions.exists():
        return []
    loaded = yaml.safe_load(root.decisions.read_text()) or []
    return [d for d in loaded if d["kind"] == kind]


def drafted(root: Root, change: str, reading: str) -> None:
    """S1 written on disk, as a spec-steward run's draft lands there."""
    spec = read_spec(root.spec_file(changes.load(root, change).spec))
    spec.path.write_text(with_section_body(spec, "S1", reading), encoding="utf-8")


def s1_hash(root: Root) -> str:
    return read_spec(root.spec_file("SPEC-0001")).section("S1").hash


def test_the_reading_form_carries_the_sha256_of_the_reading_it_shows(
    page: TestClient, root: Root
) -> None:
    pack = changes.create(root, WORDS)
    drafted(root, pack.id, FIRST)
    shown = page.get(f"/changes/{pack.id}")
    fields = form_fields(shown.text, "accept-reading")
    assert fields == {"choice": "accept", "shown": s1_hash(root)}
    assert fields["shown"] == section_hash("## S1 Reading\n" + FIRST)


def test_a_reading_redrafted_while_she_read_it_is_refused_shown_again_then_accepted(
    page: TestClient, root: Root
) -> None:
    pack = changes.create(root, WORDS)
    drafted(root, pack.id, FIRST)
    seen = form_fields(page.get(f"/changes/{pack.id}").text, "accept-reading")
    drafted(root, pack.id, SECOND)  # a second run, while her page shows the first text
    refused = page.post(f"/changes/{pack.id}/reading", data=seen)
    assert refused.status_code == 200
    assert CHANGED in notice(refused) and "Nothing was accepted" in notice(refused)
    assert "Delete every expense older than a month." in html.unescape(refused.text)
    assert "Search expenses by month." not in html.unescape(refused.text)
    assert 'id="reading-state">draft' in refused.text
    assert decisions_of(root, "accept-section") == []
    assert "accept reading" not in [e["action"] for e in page_log(root)]
    again = form_fields(refused.text, "accept-reading")  # what the page shows now
    accepted = page.post(f"/changes/{pack.id}/reading", data=again)
    assert "You accepted the reading" in notice(accepted)
    (decision,) = decisions_of(root, "accept-section")
    assert decision["hash"] == s1_hash(root) == again["shown"]


def test_an_accept_without_the_hash_of_what_she_saw_accepts_nothing(
    page: TestClient, root: Root
) -> None:
    pack = changes.create(root, WORDS)
    drafted(root, pack.id, FIRST)
    (root.change_dir(pack.id) / "plan.yaml").write_text(PLAN, encoding="utf-8")
    acceptance.add_scenario(root, pack.id, "Find it", "Search hotel", "Listed.")
    before = root.decisions.read_bytes()
    for path, fields in (
        (f"/changes/{pack.id}/reading", {"choice": "accept"}),
        (f"/changes/{pack.id}/plan", {}),
        (f"/changes/{pack.id}/scenarios/SC-1/accept", {"shown": ""}),
    ):
        answer = page.post(path, data=fields)
        assert "did not say which text you read" in notice(answer), path
    assert root.decisions.read_bytes() == before
    assert page_log(root) == []


def test_a_plan_redrafted_while_she_read_it_is_refused_shown_again_then_accepted(
    page: TestClient, root: Root
) -> None:
    pack = changes.create(root, WORDS)
    plan = root.change_dir(pack.id) / "plan.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    shown = page.get(f"/changes/{pack.id}")
    seen = form_fields(shown.text, "accept-plan")
    assert seen == {"shown": hashlib.sha256(PLAN.encode()).hexdigest()}
    assert "Search by month" in re.sub(r"\s+", " ", html.unescape(shown.text))
    plan.write_text(REDRAFTED, encoding="utf-8")  # a lead's second run redrafts it
    refused = page.post(f"/changes/{pack.id}/plan", data=seen)
    assert CHANGED in notice(refused)
    shown_now = re.search(r'<pre id="plan-text">(.*?)</pre>', refused.text, re.S)
    assert shown_now and html.unescape(shown_now.group(1)) == REDRAFTED
    assert decisions_of(root, "accept-plan") == []
    again = form_fields(refused.text, "accept-plan")
    accepted = page.post(f"/changes/{pack.id}/plan", data=again)
    assert "You accepted the plan" in notice(accepted)
    (decision,) = decisions_of(root, "accept-plan")
    assert decision["hash"] == hashlib.sha256(REDRAFTED.encode()).hexdigest() == again["shown"]


def test_a_scenario_rewritten_while_she_read_it_is_refused_and_its_new_words_shown(
    page: TestClient, root: Root
) -> None:
    pack = changes.create(root, WORDS)
    acceptance.add_scenario(root, pack.id, "Find it", "Search hotel", "Listed.")
    shown = page.get(f"/changes/{pack.id}")
    assert "Search hotel" in shown.text and "Listed." in shown.text  # what the hash covers
    seen = form_fields(shown.text, "accept-SC-1")
    path = root.change_dir(pack.id) / "scenarios.yaml"
    path.write_text(path.read_text().replace("Listed.", "Nothing is listed."), encoding="utf-8")
    refused = page.post(f"/changes/{pack.id}/scenarios/SC-1/accept", data=seen)
    assert "the scenario SC-1 changed while you read it" in notice(refused)
    assert "Nothing is listed." in refused.text
    assert decisions_of(root, "accept-scenario") == []
    accepted = page.post(
        f"/changes/{pack.id}/scenarios/SC-1/accept", data=form_fields(refused.text, "accept-SC-1")
    )
    assert "as required" in notice(accepted)
    assert len(decisions_of(root, "accept-scenario")) == 1


def test_a_role_reading_beside_her_correction_is_shown_and_taken_only_as_she_saw_it(
    page: TestClient, root: Root
) -> None:
    """Issue 21: a run's draft replaced her own correction. Now her words stay the reading; the
    role's draft is shown beside them, and she takes it only as the page showed it."""
    pack = changes.create(root, WORDS)
    acceptance.correct_reading(root, pack.id, FIRST)
    proposal = root.path / "changes" / pack.id / "reading-proposal.md"
    proposal.write_text("A role's reading.\n")  # as draft_reading keeps it (tests/runner)
    shown = page.get(f"/changes/{pack.id}")
    assert "A role proposed another reading" in shown.text
    assert "A role's reading." in html.unescape(shown.text)
    seen = form_fields(shown.text, "take-proposal")
    assert seen == {"choice": "take", "shown": hashlib.sha256(b"A role's reading.\n").hexdigest()}
    proposal.write_text("Delete everything.\n")  # a second run, while she reads the first
    refused = page.post(f"/changes/{pack.id}/reading", data=seen)
    assert "changed while you read it" in notice(refused)
    assert read_spec(root.spec_file(pack.spec)).section("S1").body == FIRST
    taken = page.post(
        f"/changes/{pack.id}/reading", data=form_fields(refused.text, "take-proposal")
    )
    assert "holds the role's proposal" in html.unescape(notice(taken))
    assert read_spec(root.spec_file(pack.spec)).section("S1").body == "Delete everything."
    assert not proposal.exists()
    assert "take proposed reading" in [e["action"] for e in page_log(root)]
