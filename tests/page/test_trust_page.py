"""What arrives by git is not hers (CONTRACT §13), on her page: what waits for her confirmation
is said in words on the home page, she confirms it (one file, or all) or drops what waited on the
review page, a form for a file that changed since the page showed it is refused, and a run she
starts on something unconfirmed shows what waits instead of starting.

The page is driven in-process behind its real guard (TestClient, her cookie from the one-time
token, the page's own Origin on every post)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from starlette.testclient import TestClient

from sdd_git.events import confirm, waiting
from sdd_git.page.app import create_app
from sdd_git.root import Root
from sdd_git.routines.routine import Event
from tests.conftest import git
from tests.page.test_views import accepted_change, page_log

PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"
HELPER = ".sdd/roles/helper/ROLE.md"


def role_text(command: str = "pytest -q") -> str:
    return (
        "---\nrole: helper\njob: Help out\nlevel: 0\ntoolPolicy.delegation: deny\n"
        "boundary:\n"
        f"  always_allow:\n    - {{tool: run_command, inputs: {{command: {command!r}}}}}\n"
        "---\nHelp out.\n"
    )


def merged_helper(root: Root, command: str = "pytest -q") -> str:
    """A role with an always_allow rule, as a merge from Alex brings it: written by nobody's
    person command, committed by someone else. Returns the commit, short."""
    path = root.path / HELPER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(role_text(command), encoding="utf-8")
    git(root.path, "add", "-A")
    git(root.path, "commit", "-q", "--author", "Alex <alex@example.invalid>", "-m", "helper")
    return git(root.path, "log", "-1", "--format=%h").strip()


@pytest.fixture
def page(root: Root) -> TestClient:
    """Her browser, signed in to the guarded page: the cookie only the token gives, and the
    page's own Origin on what it posts."""
    browser = TestClient(
        create_app(root, "one-time-token", port=PORT),
        base_url=ORIGIN,
        client=("127.0.0.1", 50000),
        headers={"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"},
    )
    signed_in = browser.get("/?token=one-time-token")
    assert signed_in.status_code == 200 and signed_in.url.path == "/", signed_in.text
    return browser


def text_of(response: Any) -> str:
    """What she reads: the page without its tags, entities made characters again."""
    inline = re.sub(r"</?(?:a|strong|code|span|em|time)\b[^>]*>", "", response.text)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", inline)))


def form_fields(response: Any, action: str, index: int = 0) -> dict[str, str]:
    """The hidden fields of the `index`th form posting to `action`, as her browser sends them."""
    forms = re.findall(rf'<form method="post" action="{re.escape(action)}".*?</form>',
                       response.text, re.S)  # fmt: skip
    assert len(forms) > index, (action, response.text)
    return {
        html.unescape(name): html.unescape(value)
        for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', forms[index])
    }


def role_runs(root: Root) -> list[Path]:
    folder = root.sdd / "role-runs"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def say_script(root: Root, monkeypatch: pytest.MonkeyPatch) -> None:
    script = root.path.parent / "reply.yaml"
    script.write_text("calls:\n  - say: 'Noted.'\n", encoding="utf-8")
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")


def waiting_event(root: Root) -> waiting.Waiting:
    """An event kept for her, as the worker keeps one whose routine's role is unconfirmed."""
    event = Event("ev-0001", "pr-merged", "abc123", "2026-11-30T10:00:00Z", "hook")
    items = tuple(confirm.unconfirmed(root))
    return waiting.wait_event(root, event, "helper/on-merge", items)


def test_a_merged_role_with_an_always_allow_rule_waits_on_the_home_page_in_words(
    page: TestClient, root: Root
) -> None:
    commit = merged_helper(root)
    waiting_event(root)
    home = page.get("/")
    assert home.status_code == 200
    said = text_of(home)
    assert "Waiting for you" in said
    assert "None of it counts until you confirm it" in said
    assert (
        "role helper: new to you: level 0, delegation deny, produces nothing said (read and draft"
        " tools only); always-allow gains "
        '`run_command` with command "pytest -q": it may run without asking'
    ) in said
    assert f"last changed in commit {commit}, by Alex" in said
    assert "helper/on-merge for the event pr-merged abc123 waits on role helper" in said
    assert HELPER in said  # as secondary text, after the words
    for raw in ("{'", '{"', "always_allow:", "ev-0001", "waits_on"):
        assert raw not in said, raw  # no dict, YAML or internal id where a sentence will do
    assert 'href="/trust"' in home.text
    reviewed = page.get("/trust")
    assert reviewed.status_code == 200
    assert 'id="confirm-1"' in reviewed.text and 'id="confirm-all"' in reviewed.text
    assert 'id="drop-1"' in reviewed.text
    assert form_fields(reviewed, "/trust/confirm")["path"] == HELPER
    assert re.fullmatch(r"[0-9a-f]{64}", form_fields(reviewed, "/trust/confirm")["shown"])


def test_confirming_a_file_from_the_page_records_it_and_the_role_runs(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    merged_helper(root)
    shown = page.get("/trust")
    confirmed = page.post("/trust/confirm", data=form_fields(shown, "/trust/confirm"))
    assert confirmed.status_code == 200, confirmed.text
    assert "Confirmed role helper: it counts as yours from now on." in text_of(confirmed)
    assert confirm.review(root).items == ()
    assert 'id="nothing-waits"' in confirmed.text
    [logged] = [e for e in page_log(root) if e["action"] == "trust accept"]
    assert logged["origin"] == "page" and logged["args"]["paths"] == [HELPER]
    assert "role helper" not in text_of(page.get("/"))

    say_script(root, monkeypatch)
    job = page.post("/roles/helper/reply", data={"task": "Hello there."})
    assert job.status_code == 200 and job.url.path.startswith("/jobs/"), job.text
    assert "Noted." in job.text
    [log] = role_runs(root)
    started = json.loads(log.read_text().splitlines()[0])
    assert started["event"] == "run_started" and started["roles"] == ["helper"]


def test_confirm_all_confirms_what_the_page_showed_and_lets_what_waited_run(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[list[str]] = []
    monkeypatch.setattr(waiting, "_start", lambda root, argv: started.append(argv))
    merged_helper(root)
    waiting_event(root)
    shown = page.get("/trust")
    done = page.post("/trust/confirm-all", data=form_fields(shown, "/trust/confirm-all"))
    assert done.status_code == 200, done.text
    said = text_of(done)
    assert "Confirmed role helper" in said
    assert "Running again: helper/on-merge for the event pr-merged abc123." in said
    assert confirm.review(root).items == () and confirm.review(root).waiting == ()
    assert started, "the worker is started for the event that waited"
    assert page_log(root)[-1]["args"]["all"] is True


def test_a_form_for_a_file_that_changed_since_the_page_showed_it_is_refused(
    page: TestClient, root: Root
) -> None:
    merged_helper(root)
    shown = page.get("/trust")
    one, every = form_fields(shown, "/trust/confirm"), form_fields(shown, "/trust/confirm-all")
    merged_helper(root, command="rm -rf ~")  # changed after she read it
    for path, fields in (("/trust/confirm", one), ("/trust/confirm-all", every)):
        refused = page.post(path, data=fields)
        assert refused.status_code == 409, (path, refused.text)
        said = text_of(refused)
        assert "changed since this page showed it; nothing was confirmed" in said, path
        assert 'command "rm -rf ~"' in said  # shown again, as it is now
    [still] = confirm.review(root).items
    assert still.item.key == HELPER
    assert not any(e["action"] == "trust accept" for e in page_log(root))
    again = page.post("/trust/confirm", data=form_fields(page.get("/trust"), "/trust/confirm"))
    assert again.status_code == 200 and confirm.review(root).items == ()


def test_a_form_without_the_hash_or_for_a_file_that_waits_no_more_confirms_nothing(
    page: TestClient, root: Root
) -> None:
    merged_helper(root)
    assert page.post("/trust/confirm", data={"path": HELPER}).status_code == 409
    assert page.post("/trust/confirm", data={}).status_code == 400
    assert page.post("/trust/confirm-all", data={}).status_code == 409
    assert len(confirm.review(root).items) == 1
    gone = page.post("/trust/confirm", data={"path": ".sdd/config.yaml", "shown": "0" * 64})
    assert gone.status_code == 409 and "no longer waits" in text_of(gone)


def test_a_confirm_posted_from_elsewhere_is_refused_by_the_guard(
    page: TestClient, root: Root
) -> None:
    merged_helper(root)
    fields = form_fields(page.get("/trust"), "/trust/confirm")
    forged = page.post("/trust/confirm", data=fields, headers={"Origin": "http://evil.example"})
    assert forged.status_code == 403
    assert len(confirm.review(root).items) == 1


def test_dropping_what_waited_from_the_page_keeps_it_from_running(
    page: TestClient, root: Root
) -> None:
    merged_helper(root)
    waiting_event(root)
    shown = page.get("/trust")
    dropped = page.post("/trust/drop", data=form_fields(shown, "/trust/drop"))
    assert dropped.status_code == 200, dropped.text
    assert "Dropped: helper/on-merge for the event pr-merged abc123. It will not run." in (
        text_of(dropped)
    )
    assert confirm.review(root).waiting == ()
    assert len(confirm.review(root).items) == 1  # dropping confirms nothing
    logged = page_log(root)[-1]
    assert logged["action"] == "trust drop" and logged["origin"] == "page"
    again = page.post("/trust/drop", data={"id": "ev-0001"})
    assert again.status_code == 400 and "nothing waits under ev-0001" in text_of(again)


@pytest.mark.parametrize("where", ["role page", "change page"])
def test_a_run_started_on_the_page_on_an_unconfirmed_role_shows_what_waits_and_starts_nothing(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    say_script(root, monkeypatch)
    change = accepted_change(root)
    commit = merged_helper(root)
    if where == "role page":
        shown = page.post("/roles/helper/reply", data={"task": "Hello there."})
    else:
        shown = page.post(f"/changes/{change}/run", data={"role": "helper", "task": "Look."})
    assert shown.status_code == 409, shown.text
    said = text_of(shown)
    assert "Nothing ran yet: it waits for you" in said
    assert "role helper: new to you" in said and f"commit {commit}, by Alex" in said
    assert 'href="/trust"' in shown.text
    assert "Traceback" not in shown.text and "sdd trust" not in said
    assert role_runs(root) == []
    assert len(confirm.review(root).items) == 1  # nothing was confirmed by asking


def test_the_job_of_a_run_that_waits_says_so_and_leads_to_the_review(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that takes longer to refuse than the page waits is followed on its job's page:
    that page, too, says it waits and leads to the review."""
    from sdd_git.page.views_runs import outcome_of

    say_script(root, monkeypatch)
    merged_helper(root)
    site = page.app.app.state.site  # type: ignore[attr-defined]
    from sdd_git.runner.run import RunRequest, start

    job = site.jobs.start("helper", None, lambda told: start(root, RunRequest("helper", "Hi.")))
    assert job.done.wait(10)
    outcome = outcome_of(job)
    assert outcome["next"] == "/trust" and "waits for you to confirm role helper" in outcome["text"]
    shown = page.get(f"/jobs/{job.id}")
    assert shown.status_code == 200 and 'href="/trust" id="next"' in shown.text
    assert role_runs(root) == []
