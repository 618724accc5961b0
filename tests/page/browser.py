"""What the browser tests of her page share (their fixtures are in conftest.py): Chromium from
the system packages, driven by Selenium, against `sdd page` served by uvicorn on a free loopback
port, on the scripted provider (the demo's recorded replies); and `Walk`, one journey's small
verbs, a screenshot per step, and a check of her words on every page it shows
(DEVELOPER_WORDS)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import (
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as seen
from selenium.webdriver.support.ui import WebDriverWait

from sdd_git.demo import SCRIPTS

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
# Words of a developer, never of hers: none may be in the visible text of any page she reaches
# (its body's innerText). A link's address, or a field's value she has not opened, is not seen.
# One page is exempt: a run's raw log (/runs/RUN), one click away from her progress, is the log
# itself, for whoever wants it; `Walk.check` is never called on it.
DEVELOPER_WORDS = (
    "route=",
    "stop-",
    "run-2",
    "{'",
    ": null",
    "bwrap",
    "landlock",
    "yaml",
    "sdd ",
    "traceback",
    "accept-section",
)
RAW_LOG = "/runs/"

# In .ci/run (SDD_REQUIRE_BROWSER=1) a missing browser fails the test; elsewhere it is a said skip.
if os.environ.get("SDD_REQUIRE_BROWSER") and not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    raise AssertionError(f"SDD_REQUIRE_BROWSER is set and {CHROMIUM} or {CHROMEDRIVER} is missing")
NEEDS_BROWSER = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="needs the system's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver)",
)


class Walk:
    """One browser, one journey: small verbs for her steps, a screenshot per step."""

    def __init__(self, driver: WebDriver, replies: Path) -> None:
        self.driver = driver
        self.replies = replies
        self.step = 0
        self.paints: list[dict[str, Any]] = []
        self.round_trips: list[dict[str, Any]] = []
        self.checked: dict[str, str] = {}  # each page's address, and its visible text
        self.developer_words: list[str] = []  # "ADDRESS: WORD in “...”"
        DOCS.mkdir(parents=True, exist_ok=True)

    def check(self) -> None:
        """The page shown now, in her words: each developer word in its visible text is kept
        (`developer_words`), to be said all at once at the end of the walk. The raw log is the
        one page exempt (see DEVELOPER_WORDS)."""
        for _ in range(5):
            try:
                where = str(self.driver.current_url)
                text = str(self.driver.execute_script("return document.body.innerText;"))
                break
            except WebDriverException:  # between two pages: read the one that is there
                continue
        else:
            return
        path = "/" + where.split("/", 3)[-1] if where.count("/") >= 3 else where
        if path.startswith(RAW_LOG) and path != RAW_LOG.rstrip("/"):
            return
        self.checked[path] = text
        lowered = text.lower()
        for word in DEVELOPER_WORDS:
            at = lowered.find(word)
            while at >= 0:
                seen_here = " ".join(text[max(0, at - 50) : at + 50].split())
                found = f"{path}: {word!r} in “{seen_here}”"
                if found not in self.developer_words:
                    self.developer_words.append(found)
                at = lowered.find(word, at + 1)

    def visit(self, url: str) -> None:
        """Open a page by its address, as she would from a bookmark, and check its words."""
        self.driver.get(url)
        self.check()

    def assert_her_words(self, least: int = 1) -> None:
        """No page of the walk said a developer word (all of them said at once), and the walk
        saw at least `least` pages."""
        assert len(self.checked) >= least, sorted(self.checked)
        assert not self.developer_words, "developer words on her pages:\n" + "\n".join(
            self.developer_words
        )

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
            self.check()

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

    def shot(self, name: str, at: str | None = None) -> None:
        """A screenshot of the window; `at`: scrolled first to the element with that id."""
        self.step += 1
        if at is not None:
            self.driver.execute_script("arguments[0].scrollIntoView();", self.wait_for(at))
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
        self.check()  # her progress, whole, and what came of it
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
