"""Her page offers "Allow for this run" on an approval stop, and lists a role's saved rules
with a Revoke button each (a POST under the page's session rules, logged `origin: page`)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

import yaml
from starlette.testclient import TestClient

from sdd_git.root import Root
from tests.page.test_views import answered, builder_stopped, notice, page_log, run_events
from tests.runner.scripted import add_role


@pytest.fixture
def page(root: Root) -> TestClient:
    from sdd_git.page.app import build_app

    return TestClient(build_app(root))


def test_an_approval_stop_offers_allow_for_this_run(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    shown = page.get(stop)
    assert "Allow for this run" in shown.text
    answered(page, stop, "allow_for_run")
    assert "allow_for_run" in [e["choice"] for e in run_events(root, "decision")]


def test_her_page_lists_a_roles_rules_and_revokes_one(page: TestClient, root: Root) -> None:
    path = add_role(
        root,
        "helper",
        extra="boundary:\n  always_allow:\n"
        "    - {tool: run_command, prefix: [git, status], match: ['git status']}\n"
        "    - {tool: read_file, inputs: {path: a.txt}, saved: {at: '2026-12-07T10:00:00Z',"
        " stop: stop-abc123}}\n",
    )
    shown = page.get("/roles/helper")
    assert 'id="revoke-1"' in shown.text and 'id="revoke-2"' in shown.text
    assert "from stop-abc123" in shown.text and "written by hand" in shown.text
    revoked = page.post("/roles/helper/revoke", data={"number": "2"})
    assert "Revoked rule 2 of helper" in notice(revoked)
    rules = yaml.safe_load(path.read_text().split("---\n")[1])["boundary"]["always_allow"]
    assert [r["tool"] for r in rules] == ["run_command"]
    entry = page_log(root)[-1]
    assert entry["action"] == "role rules revoke" and entry["origin"] == "page"
    bad = page.post("/roles/helper/revoke", data={"number": "7"})
    assert bad.status_code == 400 and "has no rule 7" in bad.text
