"""Her whole journey in a real browser: Chromium from the system packages, driven by Selenium,
against `sdd page` served by uvicorn on a free loopback port, on the scripted provider (the
demo's recorded replies). Each step saves a screenshot; the page's first paint and a stop's
round trip are measured in the browser and written to timings.json beside them: in docs/page/
with SDD_PAGE_DOCS=1 (the README shows those; nothing here asserts a time), else in a temporary
folder."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git.demo import SCRIPTS, WORDS, WORDS_2

webdriver = pytest.importorskip("selenium.webdriver")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from selenium.common.exceptions import (  # noqa: E402
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# The screenshots and timings the README shows. Written there only when asked
# (SDD_PAGE_DOCS=1), so that running the tests leaves the checkout as it was; otherwise they
# go to a folder of their own under the system's temporary folder.
DOCS = (
    Path(__file__).resolve().parents[2] / "docs" / "page"
    if os.environ.get("SDD_PAGE_DOCS")
    else Path(tempfile.gettempdir()) / f"sdd-page-docs-{os.getuid()}"
)
DEADLINE = 20  # seconds a step may take before the test fails (a deadline, not a measurement)

# In .ci/run (SDD_REQUIRE_BROWSER=1) a missing browser fails the test; elsewhere it is a said skip.
if os.environ.get("SDD_REQUIRE_BROWSER") and not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    raise AssertionError(f"SDD_REQUIRE_BROWSER is set and {CHROMIUM} or {CHROMEDRIVER} is missing")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="needs the system's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver)",
)


@pytest.fixture
def replies(tmp_path: Path) -> Path:
    """The scripted provider's file; each step copies the demo's recorded replies into it."""
    return tmp_path / "replies.yaml"


@pytest.fixture
def page_url(tmp_path: Path, replies: Path) -> Iterator[str]:
    """`sdd page --folder DIR --no-browser` in its own process, stopped by its pid at the end."""
    env = {**os.environ, "SDD_PROVIDER": f"script:{replies}", "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sdd_git",
            "page",
            "--folder",
            str(tmp_path / "expenses"),
            "--no-browser",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), server.stderr.read() if server.stderr else url
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager never downloads a browser
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1000,1400",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


class Walk:
    """One browser, one journey: small verbs for her steps, a screenshot per step."""

    def __init__(self, driver: WebDriver, replies: Path) -> None:
        self.driver = driver
        self.replies = replies
        self.step = 0
        self.paints: list[dict[str, Any]] = []
        self.round_trips: list[dict[str, Any]] = []
        DOCS.mkdir(parents=True, exist_ok=True)

    def wait_for(self, element_id: str) -> Any:
        try:
            return WebDriverWait(self.driver, DEADLINE).until(
                seen.presence_of_element_located((By.ID, element_id))
            )
        except TimeoutException:
            # What the page showed instead, so a failure says why.
            source = self.driver.page_source[:3000]
            where = self.driver.current_url
            raise AssertionError(f"no #{element_id} on {where}:\n{source}") from None

    def text(self, element_id: str) -> str:
        # A page that refreshes itself (a run's progress) can replace the element between
        # finding and reading it: read it again from the new page.
        for _ in range(20):
            try:
                return str(self.wait_for(element_id).text)
            except StaleElementReferenceException:
                continue
        return str(self.wait_for(element_id).text)

    def click(self, element_id: str) -> None:
        """Click, and when the click loads another page (a form's answer), wait until the old
        page is gone, so that what is read next is the new page's."""
        for _ in range(20):
            self.driver.execute_script("window.sddOldPage = true;")
            try:
                self.wait_for(element_id).click()
                break
            except StaleElementReferenceException:
                continue  # the page refreshed itself under the click: find it again
        with contextlib.suppress(TimeoutException):  # a click that loads nothing
            WebDriverWait(self.driver, 3).until(self._new_page)

    def _new_page(self, driver: WebDriver) -> bool:
        # A mark on the old page's window, not a reference to one of its elements: asking about
        # an element mid-navigation can fail with errors other than "stale".
        try:
            return bool(driver.execute_script("return !window.sddOldPage;"))
        except WebDriverException:
            return False

    def type(self, element_id: str, text: str) -> None:
        field = self.wait_for(element_id)
        field.clear()
        field.send_keys(text)

    def shot(self, name: str) -> None:
        self.step += 1
        self.driver.save_screenshot(str(DOCS / f"{self.step:02d}-{name}.png"))

    def recorded(self, script: str) -> None:
        shutil.copyfile(SCRIPTS / script, self.replies)

    def first_paint(self) -> None:
        """Wait (with a deadline) until the browser has reported the page's first paint. Headless
        Chromium does not report one for every navigation; then the figure stays null."""
        with contextlib.suppress(TimeoutException):
            WebDriverWait(self.driver, 3).until(
                lambda d: d.execute_script(
                    "return performance.getEntriesByType('paint')"
                    ".some(e => e.name === 'first-contentful-paint');"
                )
            )

    def paint(self, what: str) -> None:
        """The current page's first contentful paint and load, from the browser's own timing."""
        self.first_paint()
        timing = self.driver.execute_script(
            "const nav = performance.getEntriesByType('navigation')[0];"
            "const fcp = performance.getEntriesByType('paint')"
            "  .find(e => e.name === 'first-contentful-paint');"
            "return {fcp: fcp ? fcp.startTime : null, response_end: nav.responseEnd,"
            "        dom_content_loaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd};"
        )
        self.paints.append({"page": what, **timing})

    def follow_job(self) -> str:
        """On a job's page: wait for what came of it; return where it leads."""
        WebDriverWait(self.driver, DEADLINE).until(
            seen.presence_of_element_located((By.ID, "outcome-text"))
        )
        return str(self.wait_for("next").get_attribute("href"))

    def answer_stop(self, choice: str, what: str) -> None:
        """Click a stop's choice. The round trip: from her click to the page showing her answer
        taken (the answer comes back once the run has logged it); and, beside it, from her click
        to what the role did next (shown with that page, or streamed into it afterwards)."""
        # The moment of her click, as the page itself sees it (the click event), kept across the
        # navigation; WebDriver's own command time before the event is not hers.
        self.driver.execute_script(
            "sessionStorage.removeItem('clicked');"
            "document.addEventListener('click', () => sessionStorage.setItem('clicked',"
            "  String(performance.timeOrigin + performance.now())), {capture: true, once: true});"
        )
        self.click(f"choice-{choice}")
        assert "You chose" in self.text("answer-taken")
        WebDriverWait(self.driver, DEADLINE).until(
            seen.presence_of_element_located((By.ID, "outcome-text"))
        )
        self.first_paint()
        timing = self.driver.execute_script(
            "const fcp = performance.getEntriesByType('paint')"
            "  .find(e => e.name === 'first-contentful-paint');"
            "const streamed = performance.getEntriesByName('sdd-outcome')[0];"
            "const nav = performance.getEntriesByType('navigation')[0];"
            "return {origin: performance.timeOrigin, nav: nav.toJSON(),"
            "        clicked: Number(sessionStorage.getItem('clicked')) || null,"
            "        fcp: fcp ? fcp.startTime : null,"
            "        streamed: streamed ? streamed.startTime : null};"
        )
        since_click = timing["origin"] - timing["clicked"] if timing["clicked"] else None
        answer = timing["fcp"]
        outcome = timing["streamed"] if timing["streamed"] is not None else answer
        self.round_trips.append(
            {
                "stop": what,
                "click_to_answer_paint_ms": (
                    since_click + answer if since_click is not None and answer else None
                ),
                "click_to_outcome_ms": (
                    since_click + outcome if since_click is not None and outcome else None
                ),
                "outcome_streamed": timing["streamed"] is not None,
                # Where the time goes, in the new page's own clock (0 = its navigation start;
                # the click came `click_before_navigation_ms` earlier).
                "click_before_navigation_ms": since_click,
                "navigation": {
                    key: round(float(timing["nav"][key]), 1)
                    for key in (
                        "redirectStart",
                        "redirectEnd",
                        "requestStart",
                        "responseStart",
                        "responseEnd",
                        "domInteractive",
                    )
                },
                "first_contentful_paint": timing["fcp"],
            }
        )


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

    # The reading: the spec-steward drafts it, live; she accepts it.
    walk.recorded("spec-steward.yaml")
    walk.click("ask-reading")
    browser.get(walk.follow_job())
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
    browser.get(walk.follow_job())
    assert "qa-author" in walk.text("stop-action")
    walk.shot("draft-stop")
    walk.answer_stop("allow_once", "the builder's draft")
    browser.get(walk.follow_job())
    assert "def search(expenses, month, merchant)" in walk.text("stop-content")
    assert walk.text("stop-sandbox")
    walk.shot("builder-stop")
    walk.answer_stop("allow_once", "a file write")
    walk.shot("allowed-once")
    assert (folder / "src" / "expenses" / "search.py").is_file()
    browser.get(walk.follow_job())
    assert "Commit src/expenses/search.py" in walk.text("stop-action")
    walk.answer_stop("allow_once", "a commit")
    assert "committed as you allowed" in walk.text("outcome-text")
    browser.get(walk.follow_job())

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
    assert f"> {WORDS}" in walk.text("notes-R-0001")
    walk.shot("release")

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
    browser.get(walk.follow_job())
    assert "Nobody writes until you accept it" in walk.text("plan-state")
    assert not (folder / "src" / "reimbursed.py").exists()
    walk.shot("plan")
    walk.click("accept-plan")
    assert "You accepted the plan" in walk.text("notice")
    walk.click("work")
    browser.get(walk.follow_job())
    assert "src/reimbursed.py" in walk.text("stop-action")
    walk.shot("network-stop")
    walk.answer_stop("allow_once", "a network node's file write")
    browser.get(walk.follow_job())
    walk.click("work")
    browser.get(walk.follow_job())
    assert "SC-1" in walk.text("scenarios")

    # A failing required scenario blocks the release until she accepts the failure.
    walk.click("accept-SC-1")
    walk.click("try-SC-1")
    walk.click("result-fail")
    walk.type("result-words", "The March taxi line does not say reimbursed yet.")
    walk.click("record-result")
    assert "failed and its failure is not accepted" in walk.text("release-blocked")
    walk.click("choose-release")
    assert "SC-1" in walk.text("error")
    assert not (folder / "memory" / "releases" / "R-0002.md").exists()
    walk.shot("release-blocked")
    walk.type("failure-words-SC-1", "Billing shows it next month; release the rest now.")
    walk.click("accept-failure-SC-1")
    assert "The reading stays the same" in walk.text("notice")
    walk.click("choose-release")
    assert f"> {WORDS_2}" in walk.text("notes-R-0002")
    walk.shot("release-after-failure-accepted")

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
        assert "Open the address" not in browser.page_source
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
    assert "qa-author" in walk.text("stop-action")
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
    browser.get(page_url.split("?")[0] + "roles/qa-author")
    said = walk.text("main")
    assert "march.log" in said and "the March server log" in said
