"""Her whole journey in a real browser: Chromium from the system packages, driven by Selenium,
against `sdd page` served by uvicorn on a free loopback port, on the scripted provider (the
demo's recorded replies). Each step saves a screenshot; the page's first paint and a stop's
round trip are measured in the browser and written to timings.json beside them: in docs/page/
with SDD_PAGE_DOCS=1 (the README shows those; nothing here asserts a time), else in a temporary
folder."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from sdd_git.demo import WORDS, WORDS_2

pytest.importorskip("selenium.webdriver")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from tests.page.browser import DOCS, NEEDS_BROWSER, Walk

pytestmark = NEEDS_BROWSER


def test_her_whole_journey_in_a_real_browser(
    browser: WebDriver, page_url: str, replies: Path, tmp_path: Path
) -> None:
    walk = Walk(browser, replies)
    folder = tmp_path / "expenses"

    # A new product folder, from the folder chooser.
    browser.get(page_url)
    assert walk.text("folder-form")
    walk.paint("folder chooser")
    assert browser.find_element(By.ID, "folder").get_attribute("value") == str(folder)
    walk.click("kind-new")
    walk.type("product", "Expenses")
    walk.shot("folder-chooser")
    walk.click("choose-folder")
    walk.wait_for("words-form")
    walk.paint("home")
    assert (folder / ".sdd" / "config.yaml").is_file()

    # Her sentence.
    walk.type("words", WORDS)
    walk.shot("her-words")
    walk.click("start-change")
    assert walk.text("her-words") == f"“{WORDS}”"
    walk.paint("change")
    # A button whose gate does not hold says first what is missing, and cannot be pressed.
    assert walk.text("next-why") == "Accept the reading first."
    assert not walk.wait_for("next-stage").is_enabled()

    # The reading: the spec-steward drafts it, live; she accepts it.
    walk.recorded("spec-steward.yaml")
    walk.click("ask-reading")
    walk.visit(walk.follow_job())
    assert "Search expenses by month and merchant" in walk.text("reading")
    assert walk.text("reading-state") == "draft"
    walk.shot("reading")
    walk.click("accept-reading")
    assert "You accepted the reading" in walk.text("notice")
    assert walk.text("reading-state") == "accepted"
    walk.shot("reading-accepted")

    # The builder, checked by the qa-author: the draft stop, then the file, then the commit.
    walk.recorded("builder.yaml")
    browser.find_element(By.CSS_SELECTOR, "#work-h ~ details summary").click()
    Select(walk.wait_for("role-name")).select_by_value("builder")
    Select(walk.wait_for("critic")).select_by_value("qa-author")
    walk.type("task", "Implement SPEC-0001#S1 and commit it.")
    walk.click("ask-role")
    walk.visit(walk.follow_job())
    assert walk.text("stop-action") == "Let the builder go on with its plan for the work"
    assert "qa-author, a second role, checked it" in walk.text("stop-content")
    walk.shot("draft-stop")
    walk.answer_stop("allow_once", "the builder's draft")
    walk.visit(walk.follow_job())
    # The action in one short line; what the file would hold below it, whole.
    assert walk.text("stop-action") == "Create src/expenses/search.py (6 lines)"
    assert "def search(expenses, month, merchant)" in walk.text("stop-content")
    assert walk.text("stop-sandbox") == "Nothing runs: only what is shown here is done."
    assert "secondary" not in str(walk.wait_for("choice-allow_once").get_attribute("class"))
    assert "secondary" in str(walk.wait_for("choice-always_allow").get_attribute("class"))
    walk.shot("builder-stop")
    walk.answer_stop("allow_once", "a file write")
    walk.shot("allowed-once")
    assert (folder / "src" / "expenses" / "search.py").is_file()
    walk.visit(walk.follow_job())
    assert "Commit src/expenses/search.py" in walk.text("stop-action")
    walk.answer_stop("allow_once", "a commit")
    assert "committed as you allowed" in walk.text("outcome-text")
    walk.visit(walk.follow_job())

    # A scenario: written, accepted, tried, and its result recorded in her words.
    browser.find_element(By.CSS_SELECTOR, "#scen-h ~ details summary").click()
    walk.type("sc-title", "Find last month's hotel charge")
    walk.type("sc-steps", 'Open the expense list, choose last month, search "hotel".')
    walk.type("sc-expected", "The hotel charge is listed.")
    walk.click("add-scenario")
    walk.click("accept-SC-1")
    assert "as required" in walk.text("notice")
    walk.click("try-SC-1")
    assert 'search "hotel"' in walk.text("steps")
    walk.paint("try a scenario")
    walk.click("result-pass")
    walk.type("result-words", "The March hotel charge showed up first.")
    walk.shot("scenario-try")
    walk.click("record-result")
    assert "pass" in walk.text("notice")
    walk.shot("result-recorded")

    # The release, with notes in her words.
    walk.click("choose-release")
    assert "Nothing was pushed or deployed" in walk.text("notice")
    release = walk.text("notes-R-0001")
    assert release.startswith("Release R-0001\n") and WORDS in release
    assert "No git tag was asked for" in walk.text("tag-R-0001")
    assert "tag_written" not in release and "---" not in release
    walk.shot("release", at="release")

    # The second journey: two modules, no connection -> a plan she accepts before anyone writes.
    browser.get(page_url.split("?")[0] + "parts")  # her parts, named once, on the page
    for module, service, owner in (
        ("money", "expenses", "builder"),
        ("billing", "invoices", "qa-author"),
    ):
        walk.type("module-name", module)
        walk.click("add-module")
        assert walk.text("notice") == f"Module {module} added."
        walk.type("service-name", service)
        Select(walk.wait_for("service-module")).select_by_value(module)
        Select(walk.wait_for("service-owner")).select_by_value(owner)
        walk.click("add-service")
        assert walk.text("notice") == f"Service {service} added, owned by {owner}."
    browser.get(page_url.split("?")[0])
    walk.type("words", WORDS_2)
    walk.click("start-change")
    walk.type(
        "correction",
        "Billing shows reimbursements.\n\n- C1: A reimbursed expense shows on "
        "its invoice, with the date.",
    )
    walk.click("correct-reading")
    walk.click("accept-reading")
    walk.recorded("network.yaml")
    walk.click("work")
    walk.visit(walk.follow_job())
    assert "Nobody writes until you accept it" in walk.text("plan-state")
    assert not (folder / "src" / "reimbursed.py").exists()
    walk.shot("plan")
    walk.click("accept-plan")
    assert "You accepted the plan" in walk.text("notice")
    walk.click("work")
    walk.visit(walk.follow_job())
    assert "src/reimbursed.py" in walk.text("stop-action")
    walk.shot("network-stop")
    walk.answer_stop("allow_once", "a network node's file write")
    walk.visit(walk.follow_job())
    walk.click("work")
    walk.visit(walk.follow_job())
    assert "SC-1" in walk.text("scenarios")

    # A failing required scenario blocks the release until she accepts the failure.
    walk.click("accept-SC-1")
    walk.click("try-SC-1")
    walk.click("result-fail")
    walk.type("result-words", "The March taxi line does not say reimbursed yet.")
    walk.click("record-result")
    assert walk.text("release-blocked").startswith("SC-1 failed")
    assert not walk.wait_for("choose-release").is_enabled()
    assert not (folder / "memory" / "releases" / "R-0002.md").exists()
    walk.shot("release-blocked", at="release")
    walk.type("failure-words-SC-1", "Billing shows it next month; release the rest now.")
    walk.click("accept-failure-SC-1")
    assert "The reading stays the same" in walk.text("notice")
    walk.click("choose-release")
    assert WORDS_2 in walk.text("notes-R-0002")
    walk.shot("release-after-failure-accepted", at="release")

    # The rest of what she reaches from the menu, each with something on it: her roles and one
    # role's conversation, the runs, a routine (made with its command, tested on the page) and
    # its history, what waits for her confirmation, her parts, and a change's group.
    base = page_url.split("?")[0]

    def sdd_here(*args: str) -> None:
        run = [sys.executable, "-m", "sdd_git", *args]
        subprocess.run(run, cwd=folder, check=True, capture_output=True)

    sdd_here("role", "create", "watcher", "--job", "Summarise the day", "--produces=review")
    sdd_here(
        *("routine", "create", "watcher", "nightly", "--schedule", "0 9 * * 1-5", "--yes"),
        *("--input", "the day's changes", "--expected", "a short summary"),
    )
    walk.step = 15  # after 15-narrow-stop, the keyboard test's
    for path, shot in (("", None), ("roles", "roles"), ("roles/builder", "conversation")):
        walk.visit(base + path)
        if shot:
            walk.shot(shot)
    for path in ("roles/watcher", "runs", "routines"):
        walk.visit(base + path)
    replies.write_text("calls:\n  - say: 'Nothing to report today.'\n")
    walk.click("test-nightly")
    walk.visit(walk.follow_job())
    walk.visit(base + "routines/watcher/nightly/history")
    for path in ("trust", "parts", "changes/CH-0002"):
        walk.visit(base + path)
    walk.visit(base + "changes/CH-0001/group")
    walk.type("group-words", "Thank you all.")
    walk.click("group-say")
    walk.visit(base + "no-such-page")
    walk.visit(base + "stops/stop-0000")  # a stop already answered: said in words
    walk.assert_her_words(least=25)

    # Every change she made is logged as the page's.
    logged = [
        json.loads(line)
        for line in (folder / ".sdd" / "local" / "page.jsonl").read_text().splitlines()
    ]
    assert {entry["origin"] for entry in logged} == {"page"}
    assert {
        "change new",
        "accept reading",
        "allow once",
        "accept plan",
        "qa record",
        "accept failure",
        "release generate",
    } <= {entry["action"] for entry in logged}
    decisions = [
        json.loads(line)
        for log in (folder / ".sdd" / "role-runs").glob("*.jsonl")
        for line in log.read_text().splitlines()
        if '"event": "decision"' in line
    ]
    assert decisions and all(d.get("origin") == "page" for d in decisions)

    fcps = [p["fcp"] for p in walk.paints if p["fcp"] is not None]
    trips = [
        t["click_to_answer_paint_ms"]
        for t in walk.round_trips
        if t["click_to_answer_paint_ms"] is not None
    ]
    outcomes = [
        t["click_to_outcome_ms"] for t in walk.round_trips if t["click_to_outcome_ms"] is not None
    ]
    (DOCS / "timings.json").write_text(
        json.dumps(
            {
                "goals_ms": {"first_contentful_paint": 300, "stop_round_trip": 100},
                "first_contentful_paint_ms": {
                    "median": statistics.median(fcps) if fcps else None,
                    "max": max(fcps) if fcps else None,
                    "pages": walk.paints,
                },
                "stop_round_trip_ms": {
                    "median": statistics.median(trips) if trips else None,
                    "max": max(trips) if trips else None,
                    "stops": walk.round_trips,
                },
                "click_to_what_the_role_did_next_ms": {
                    "median": statistics.median(outcomes) if outcomes else None,
                    "max": max(outcomes) if outcomes else None,
                },
                "how": "headless Chromium (system package), Selenium, 127.0.0.1, scripted provider",
            },
            indent=2,
        )
        + "\n"
    )


def redraft_reading(folder: Path, reading: str) -> str:
    """S1 of CH-0001 written on disk, as a spec-steward run's draft lands there; its sha256."""
    from sdd_git.records.spec import read_spec, with_section_body

    spec = read_spec(folder / "memory" / "specs" / "SPEC-0001.md")
    spec.path.write_text(with_section_body(spec, "S1", reading), encoding="utf-8")
    return read_spec(spec.path).section("S1").hash


def test_a_reading_redrafted_while_she_reads_it_is_refused_and_shown_again_in_a_real_browser(
    browser: WebDriver, page_url: str, replies: Path, tmp_path: Path
) -> None:
    """The route: a second run redrafted S1 while her page showed the first text, and her
    click accepted the second. Her click now carries the sha256 of what the page showed."""
    import yaml

    walk = Walk(browser, replies)
    folder = tmp_path / "expenses"
    browser.get(page_url)
    walk.wait_for("folder-form")
    walk.click("kind-new")
    walk.type("product", "Expenses")
    walk.click("choose-folder")
    walk.wait_for("words-form")
    walk.type("words", WORDS)
    walk.click("start-change")
    assert walk.text("her-words") == f"“{WORDS}”"
    redraft_reading(folder, "Search expenses by month.\n\n- C1: Searching hotel lists it.")
    browser.refresh()
    assert "Search expenses by month." in walk.text("reading")

    # While she reads, a second run redrafts S1; her click is refused and the page shows it.
    second = redraft_reading(
        folder, "Delete every expense older than a month.\n\n- C1: Nothing older is kept."
    )
    walk.click("accept-reading")
    assert "changed while you read it" in walk.text("notice")
    assert "Delete every expense older than a month." in walk.text("reading")
    assert "Search expenses by month." not in walk.text("reading")
    assert walk.text("reading-state") == "draft"
    decisions = folder / "memory" / "decisions.yaml"
    assert not decisions.exists() or (yaml.safe_load(decisions.read_text()) or []) == []

    # She has read the new text now: her next click accepts exactly it.
    walk.click("accept-reading")
    assert "You accepted the reading" in walk.text("notice")
    assert walk.text("reading-state") == "accepted"
    (decision,) = yaml.safe_load(decisions.read_text())
    assert decision["kind"] == "accept-section" and decision["hash"] == second


def test_sdd_pages_opener_file_signs_her_in_in_a_real_browser(
    browser: WebDriver, page_url: str
) -> None:
    """What `sdd page` opens: her own file, which forwards to the first address, so that the
    token is on no command line. Chromium calls that navigation cross-site; she still lands
    on her page, signed in, and the address bar no longer holds the token."""
    import shutil as rm

    from sdd_git.page.serve import opener_file

    opener = opener_file(page_url)
    try:
        browser.get(opener.as_uri())
        walk = Walk(browser, Path(os.devnull))
        assert walk.text("folder-form")
        assert "token=" not in browser.current_url
        assert browser.current_url.startswith(page_url.split("?")[0])
        browser.get(page_url.split("?")[0] + "roles")  # and the cookie works from now on
        assert "Open your page again" not in browser.page_source
    finally:
        rm.rmtree(opener.parent, ignore_errors=True)


UNLABELLED = """
const named = (el) => (el.labels && el.labels.length > 0) || el.getAttribute('aria-label');
const fields = [...document.querySelectorAll('input, select, textarea')]
  .filter((el) => !['hidden', 'submit'].includes(el.type));
const buttons = [...document.querySelectorAll('button, a')];
return [
  ...fields.filter((el) => !named(el)).map((el) => 'field ' + (el.id || el.name)),
  ...buttons.filter((el) => !el.textContent.trim()).map((el) => 'unnamed ' + el.outerHTML),
  ...(document.documentElement.lang ? [] : ['no lang']),
  ...(document.querySelectorAll('h1').length === 1 ? [] : ['not one h1']),
];
"""
OVERFLOW = "return document.documentElement.scrollWidth - window.innerWidth;"


def keyboard_to(driver: WebDriver, element_id: str) -> None:
    """Tab from the top of the page until `element_id` has the focus, as she would."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    driver.execute_script("document.activeElement && document.activeElement.blur();")
    for _ in range(80):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if driver.execute_script("return document.activeElement.id;") == element_id:
            return
    raise AssertionError(f"Tab never reached #{element_id}")


def test_her_page_works_from_the_keyboard_labelled_and_in_a_narrow_window(
    browser: WebDriver, page_url: str, replies: Path, tmp_path: Path
) -> None:
    """Plain and kind: every field labelled, every button named, one h1 and a language per
    page; nothing wider than a phone's window; and the journey's steps taken with Tab, typing,
    Space and Enter alone, a stop's Allow once included."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    walk = Walk(browser, replies)
    folder = tmp_path / "expenses"
    browser.set_window_size(390, 844)

    def check(what: str) -> None:
        walk.check()  # her words, in a narrow window too
        assert browser.execute_script(UNLABELLED) == [], what
        assert browser.execute_script(OVERFLOW) <= 0, f"{what} is wider than the window"

    def keys(*sent: str) -> None:
        ActionChains(browser).send_keys(*sent).perform()

    browser.get(page_url)
    walk.wait_for("folder-form")
    check("the folder chooser")
    keyboard_to(browser, "kind-new")
    keys(Keys.SPACE)
    keyboard_to(browser, "product")
    keys("Expenses")
    keyboard_to(browser, "choose-folder")
    keys(Keys.ENTER)
    walk.wait_for("words-form")
    check("home")
    keyboard_to(browser, "words")
    keys(WORDS)
    keyboard_to(browser, "start-change")
    keys(Keys.ENTER)
    assert walk.text("her-words") == f"“{WORDS}”"
    check("a change")

    # A builder's stop, raised from the command line, answered on the page by keyboard.
    env = {**os.environ, "SDD_PROVIDER": f"script:{replies}"}

    def sdd(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "sdd_git", *args],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode in (0, 3), done.stderr

    reading = (
        "Search expenses by month and merchant, from the expense list.\n\n"
        '- C1: Searching "hotel" for last month lists the charge.\n'
        "- C2: A month with no match says that no charge was found."
    )
    sdd("correct", "reading", "CH-0001", reading)
    sdd("accept", "reading", "CH-0001")
    walk.recorded("builder.yaml")
    sdd("role", "run", "builder", "--with", "qa-author", "--task", "Implement SPEC-0001#S1.")
    browser.get(page_url.split("?")[0])
    stop = browser.find_element(By.CSS_SELECTOR, "#waiting-h ~ ul a").get_attribute("href")
    browser.get(str(stop))
    assert "qa-author" in walk.text("stop-content")
    check("a stop")
    walk.step = 14  # after the journey's 14 screenshots
    walk.shot("narrow-stop")
    keyboard_to(browser, "choice-allow_once")
    keys(Keys.ENTER)
    assert "You chose Allow once." in walk.text("answer-taken")
    walk.wait_for("outcome-text")
    check("the answer")

    # A message with a file and her words for it; a file over the limit is said at once.
    browser.get(page_url.split("?")[0] + "roles/qa-author")
    check("a role's conversation")
    big = tmp_path / "huge.log"
    big.write_bytes(b"x" * (10 * 1048576 + 1))
    walk.type("new-message", "Does this log say why?")
    walk.wait_for("attachment").send_keys(str(big))
    walk.type("attachment-what", "the March server log")
    before = browser.current_url
    walk.wait_for("send-message").click()
    assert "huge.log is larger than 10 MB" in walk.text("attachment-help")
    assert browser.current_url == before
    small = tmp_path / "march.log"
    small.write_text("2026-03-02 ERROR hotel charge missing\n")
    replies.write_text("calls:\n  - say: 'It says the hotel charge is missing.'\n")
    walk.wait_for("attachment").clear()
    walk.wait_for("attachment").send_keys(str(small))
    walk.click("send-message")
    walk.wait_for("outcome-text")
    walk.visit(page_url.split("?")[0] + "roles/qa-author")
    said = walk.text("main")
    assert "march.log" in said and "the March server log" in said
    walk.assert_her_words(least=5)
