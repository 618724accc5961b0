"""Her page in her words (issue 22, part 2), view by view over HTTP: progress as sentences, a
stop's action in one line, the main button and the secondary ones, a gate that says what is
missing, the release as a document, her product's name, her decisions as sentences, and no
terminal command or internal id. The same words in a real browser, on every page of her
journey: test_journey_browser.py."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from starlette.testclient import TestClient

from sdd_git.demo import SCRIPTS, WORDS
from sdd_git.page.app import build_app, create_app
from sdd_git.page.progress import Sentences
from sdd_git.records import acceptance, changes, releases
from sdd_git.root import Root
from tests.conftest import git
from tests.page.test_views import accepted_change, answered, builder_stopped, next_link

DEVELOPER = ("route=", "stop-", "run-2", "{'", ": null", "yaml", "sdd ", "accept-section")


@pytest.fixture
def page(root: Root) -> TestClient:
    return TestClient(build_app(root))


def said(response: Any) -> str:
    """What she reads: the page's text, without its tags, its head, or what a closed
    <details> hides."""
    body = response.text.split("<body>", 1)[-1]
    body = re.sub(r"<details>.*?</details>", " ", body, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def developer_words(text: str) -> list[str]:
    return [word for word in DEVELOPER if word in text.lower()]


def test_her_progress_is_sentences_and_the_raw_log_is_one_click_away(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'spec-steward.yaml'}")
    page.post("/changes", data={"words": WORDS})
    job = page.post("/changes/CH-0001/work")
    shown = said(job)
    assert "The spec steward drafts the reading." in shown
    assert "Nothing is accepted yet, so the spec steward drafts a short reading" in shown
    assert "The reading is drafted: it waits for you to read it." in shown
    assert developer_words(shown) == [], shown
    for raw in ("route:", "tool call", "provider call", "STOP", "[reading]"):
        assert raw not in shown, raw
    log = re.search(r'<a href="(/runs/run-[^"]+)" id="raw-log">', job.text)
    assert log, job.text
    assert "route=reading" in page.get(log.group(1)).text  # the raw log itself, whole


def test_progress_names_what_the_role_reads_and_what_it_waits_for() -> None:
    sentence = Sentences(None, {"builder": "Builder"}.get)
    events = [
        {"event": "run_started", "roles": ["builder"], "task": "Implement S1."},
        {"event": "tool_call", "role": "builder", "tool": "read_file", "args": {"path": "a.py"}},
        {"event": "provider_call", "role": "builder", "purpose": "author", "call": 2},
        {
            "event": "stop",
            "stop": "stop-f0ca0a",
            "kind": "approval",
            "tool": "write_file",
            "args": {"path": "src/search.py", "content": "a = 1\nb = 2\n"},
            "action": "Write the file src/search.py (sdd allow stop-f0ca0a)",
        },
        {"event": "run_resumed", "stop": "stop-f0ca0a", "process": {"pid": 1}},
        {"event": "decision", "stop": "stop-f0ca0a", "choice": "allow_once"},
        {"event": "action_done", "tool": "write_file", "args": {"path": "src/search.py"}},
        {"event": "run_ended", "status": "done"},
    ]
    assert [sentence(e) for e in events] == [
        "The builder starts: “Implement S1.”",
        "The builder is reading a.py.",
        None,
        "The builder wants to write src/search.py (2 lines): waiting for you.",
        None,
        "You allowed it, this once.",
        "The builder wrote src/search.py.",
        "The builder is done.",
    ]


def test_a_stops_heading_is_its_action_in_one_line_with_the_file_below(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = page.get(builder_stopped(page, root, monkeypatch))
    heading = re.search(r'<h1 class="action" id="stop-action">(.*?)</h1>', shown.text, re.S)
    assert heading and heading.group(1) == "Create src/expenses/search.py (6 lines)"
    assert "def search(expenses, month, merchant):" in shown.text.split("</h1>", 1)[1]
    assert "Nothing runs: only what is shown here is done." in said(shown)
    assert "bwrap" not in shown.text and "Where it runs" not in shown.text


def test_a_stop_for_a_write_that_replaces_a_file_says_so_with_old_and_new_sizes(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    (root.path / "src" / "expenses").mkdir(parents=True)
    (root.path / "src" / "expenses" / "search.py").write_text("a\nb\nc\n")
    shown = page.get(stop)
    assert "Replace src/expenses/search.py: 3 lines become 6" in shown.text
    home = page.get("/")
    assert "The builder asks: Replace src/expenses/search.py: 3 lines become 6" in said(home)


def test_a_command_stop_says_it_runs_fenced_off_or_warns_plainly(
    page: TestClient, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.runner import stops

    accepted_change(root)
    for sandbox, words in (
        ("bwrap+landlock", "It runs fenced off from the rest of your computer"),
        ("none: no sandbox here", "this command would run with all your rights"),
    ):
        stop = stops.Stop(
            id=stops.new_stop_id(), run="run-1", role="builder", kind="approval",
            action="Run the command", choices=stops.APPROVAL_CHOICES, origin="person",
            created_at=0.0, expires_at=None, tool="run_command",
            args={"command": "pytest -q", "purpose": "to check"}, sandbox=sandbox,
        )  # fmt: skip
        stops.save(root, stop)
        shown = said(page.get(f"/stops/{stop.id}"))
        assert words in shown
        assert "bwrap" not in shown and "landlock" not in shown and "sandbox" not in shown


def test_allow_once_is_the_main_button_and_always_allow_a_secondary_one(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = page.get(builder_stopped(page, root, monkeypatch)).text
    buttons = dict(re.findall(r'<button type="submit" name="choice" value="(\w+)"[^>]*?'
                              r'(class="\w+")?>', shown))  # fmt: skip
    assert buttons["allow_once"] == ""
    assert buttons["always_allow"] == 'class="secondary"'
    assert buttons["deny"] == 'class="secondary"'


def test_a_button_whose_gate_does_not_hold_says_first_what_is_missing(
    page: TestClient, root: Root
) -> None:
    page.post("/changes", data={"words": WORDS})
    shown = page.get("/changes/CH-0001").text
    stage = shown.split('id="stage-h"', 1)[1]
    assert stage.index("Accept the reading first.") < stage.index('id="next-stage"')
    assert re.search(r'id="next-stage" disabled', stage), stage
    assert "sdd accept" not in shown
    # The gate is the command's: posting anyway is refused as `sdd next` refuses it.
    assert page.post("/changes/CH-0001/next").status_code == 400


def test_the_release_reads_as_a_document_with_whether_its_tag_was_written(
    page: TestClient, root: Root
) -> None:
    change = accepted_change(root)
    git(root.path, "commit", "-q", "--allow-empty", "-m", "first")
    made = releases.generate(root, [change], "v1.0")
    assert made.tag.written
    shown = page.get(f"/changes/{change}")
    document = said(shown).split("The release", 1)[1]
    assert "Release R-0001" in document and f"“{WORDS}”" in document
    assert f"{change}: {changes.load(root, change).title}" in document
    assert "The git tag v1.0 was written. Nothing was pushed or deployed." in document
    for raw in ("---", "tag_commit", "tag_written", "decision:", "changes:", "> "):
        assert raw not in document, raw


def test_the_title_is_her_products_name_not_the_folders(page: TestClient, root: Root) -> None:
    assert root.path.name == "product"  # the fixture's folder; her product is "Expenses"
    home = page.get("/").text
    assert "<title>Home · Expenses</title>" in home and "<h1>Expenses</h1>" in home
    change = accepted_change(root)
    assert "· Expenses</title>" in page.get(f"/changes/{change}").text


def test_her_decisions_read_as_sentences_with_their_day(page: TestClient, root: Root) -> None:
    from sdd_git.page.herwords import on_day
    from sdd_git.records import decisions

    change = accepted_change(root)
    day = on_day(decisions.load(root).entries[0].at)
    shown = said(page.get(f"/changes/{change}"))
    assert f"You accepted the reading {day}, in your words: “{WORDS}”" in shown
    assert f"It is accepted (you accepted it {day})" in shown
    assert "D-0001" not in shown and "accept-section" not in shown


def test_a_stop_already_answered_is_said_in_words_without_its_id(
    page: TestClient, root: Root
) -> None:
    shown = page.get("/stops/stop-0a0b0c")
    assert shown.status_code == 404
    text = said(shown)
    assert "This no longer waits for you" in text
    assert developer_words(text) == [], text


def test_errors_and_hints_on_the_page_name_no_terminal_command(
    page: TestClient, root: Root
) -> None:
    change = accepted_change(root)
    acceptance.add_scenario(root, change, "Find it", "Search hotel", "Listed.")
    scenario = page.get(f"/changes/{change}").text
    from tests.page.forms import form_fields

    page.post(f"/changes/{change}/scenarios/SC-1/accept", data=form_fields(scenario, "accept-SC-1"))
    page.post(f"/changes/{change}/scenarios/SC-1/result", data={"result": "fail", "words": "No."})
    refused = page.post(f"/changes/{change}/release", data={"tag": ""})
    text = said(refused)
    assert "cannot release" in text and "record a pass or accept the failure" in text
    assert developer_words(text) == [], text


def test_the_sign_in_page_says_what_to_do_without_a_terminal(root: Root) -> None:
    page = TestClient(
        create_app(root, "one-time-token", port=8321),
        base_url="http://127.0.0.1:8321",
        client=("127.0.0.1", 50000),
    )
    shown = page.get("/")
    assert shown.status_code == 401
    text = said(shown)
    assert "open the shortcut again" in text
    assert "sdd page" not in shown.text and "Ctrl-C" not in shown.text


def test_the_built_in_roles_say_what_they_are_for(page: TestClient, root: Root) -> None:
    shown = said(page.get("/roles"))
    assert "Executor : Does one task itself, start to finish" in shown  # a link, then its job
    assert "leaf of the work" not in shown and "Decompose" not in shown


def test_line_breaks_she_types_stay_line_breaks(page: TestClient, root: Root) -> None:
    """A browser sends a text box's line breaks as CRLF; her reading keeps them as she typed
    them, never as a control character shown as `\\x0d`."""
    page.post("/changes", data={"words": WORDS})
    page.post(
        "/changes/CH-0001/reading",
        data={"choice": "correct", "words": "Search by month.\r\n\r\n- C1: Hotel is listed."},
    )
    shown = page.get("/changes/CH-0001")
    assert "\\x0d" not in shown.text and "Search by month.\n\n- C1: Hotel is listed." in shown.text


def test_an_answer_to_a_stop_follows_the_role_in_sentences(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = answered(page, builder_stopped(page, root, monkeypatch), "allow_once")
    text = said(job)
    assert "You allowed it, this once." in text
    assert "The builder wrote src/expenses/search.py." in text
    assert "The builder wants to commit src/expenses/search.py" in text
    assert developer_words(text) == [], text
    assert next_link(job).startswith("/stops/")
