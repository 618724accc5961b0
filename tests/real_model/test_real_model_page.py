"""Her page against a real model nobody scripted: a role asked from the page, its stops
answered on the page (Allow once, Always allow, Deny in turn), to the end. Asserted, whatever the
model sends: every answer of the page is a page (never a 500 or a traceback), the run ends in a
known state, only what she allowed ran, her answers are logged as the page's, her record is
untouched and no secret reached the server. A real model is slow: her answer comes back before
the role's next step, and the page follows the rest.

Needs a server, like tests/real_model/test_real_model.py (`python3 .ci/model-server start`).
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import pytest

pytest.importorskip("starlette")

from tests.real_model.test_real_model import (
    CANARIES,
    MAX_ANSWERS,
    PROCESS_BOUND,
    URL,
    Scene,
    assert_only_allowed_actions_ran,
    check_after,
    commits,
    new_change,
    record,
    run_logs,
    scene,
)

__all__ = ["scene"]  # the fixture, used by name

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(
        not URL, reason="no real model server configured (run: python3 .ci/model-server start)"
    ),
]

CHOICES = ("allow_once", "always_allow", "deny")


@dataclass
class Page:
    port: int
    cookie: str
    seen: list[tuple[str, int]]

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def ask(
        self, method: str, path: str, form: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        """One request as her browser sends it; answers status, Location and the page."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=PROCESS_BOUND)
        headers = {"Host": self.host, "Cookie": self.cookie}
        body = urlencode(form or {}).encode()
        if method == "POST":
            headers |= {
                "Origin": f"http://{self.host}",
                "Sec-Fetch-Site": "same-origin",
                "Content-Type": "application/x-www-form-urlencoded",
                "Content-Length": str(len(body)),
            }
        try:
            conn.request(method, path, body=body if method == "POST" else None, headers=headers)
            answer = conn.getresponse()
            text = answer.read().decode("utf-8", "replace")
            status, location = answer.status, answer.getheader("location") or ""
        finally:
            conn.close()
        self.seen.append((f"{method} {path}", status))
        assert status < 500 and "Traceback" not in text, (method, path, status, text[:2000])
        return status, location, text

    def follow(self, job: str) -> str:
        """The job's page once it shows what came of the work."""
        deadline = time.monotonic() + PROCESS_BOUND
        while True:
            _, _, text = self.ask("GET", job)
            if 'id="outcome-text"' in text:
                return text
            assert time.monotonic() < deadline, f"{job} showed no outcome in {PROCESS_BOUND} s"
            time.sleep(0.5)


@pytest.fixture
def page(scene: Scene) -> Iterator[Page]:
    """`sdd page` in its own process, on the real model through the recording proxy."""
    env = {
        **os.environ,
        **CANARIES,
        "SDD_PROVIDER": "openai",
        "SDD_BASE_URL": scene.proxy.url,
        "SDD_MODEL": "smollm2",
        "PYTHONUNBUFFERED": "1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "page", "--no-browser"],
        cwd=scene.product,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        port = int(urlsplit(url).port or 0)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request(
            "GET",
            urlsplit(url).path + "?" + urlsplit(url).query,
            headers={"Host": f"127.0.0.1:{port}"},
        )
        signed = conn.getresponse()
        cookie = (signed.getheader("set-cookie") or "").split(";")[0]
        conn.close()
        assert signed.status == 303 and cookie, signed.status
        yield Page(port, cookie, [])
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_a_role_asked_and_answered_on_her_page_ends_cleanly(scene: Scene, page: Page) -> None:
    change = new_change(scene, accepted=True)
    before, head = record(scene.product, None), commits(scene.product)
    began = time.monotonic()
    task = f"Add a search by month to the product, as the accepted reading of {change} says."
    status, location, _ = page.ask(
        "POST",
        f"/changes/{change}/run",
        {
            "role": "builder",
            "critic": "",
            "task": task,
        },
    )
    assert status == 303 and location.startswith("/jobs/"), (status, location)
    shown = page.follow(location)
    answers: list[str] = []
    while len(answers) < MAX_ANSWERS:
        found = re.search(r'href="(/stops/stop-[0-9a-f]+)" id="next"', shown)
        if found is None:
            break
        choice = CHOICES[len(answers) % len(CHOICES)]
        _, _, stop_page = page.ask("GET", found.group(1))
        if f'id="choice-{choice}"' not in stop_page:
            choice = "allow_once"  # this stop cannot be always allowed
        answers.append(choice)
        status, location, _ = page.ask("POST", found.group(1), {"choice": choice})
        assert status == 303 and location.startswith("/jobs/"), (status, location)
        taken = page.ask("GET", location)[2]
        assert 'id="answer-taken"' in taken or 'id="outcome-text"' in taken, taken[:2000]
        shown = page.follow(location)
    outcome = re.search(r'id="outcome-text">(.*?)</p>', shown, re.S)
    print(
        f"\n[real model] page, builder: answers {answers}, "
        f"{len([x for x in scene.proxy.exchanges if x.method == 'POST'])} requests, "
        f"{time.monotonic() - began:.0f} s\n  last: {outcome.group(1).strip() if outcome else '?'}"
    )

    logs = run_logs(scene.product)
    assert logs, "no run log was written"
    for run, log in logs.items():
        assert log[-1]["event"] == "run_ended", (run, log[-3:])
        started = log[0]
        assert started["origin"] == "person" and started["via"] == "page", started
        for event in log:
            if event["event"] == "decision" and event.get("choice") in CHOICES:
                assert event.get("origin") == "page", event
    assert_only_allowed_actions_ran(scene.product)
    check_after(scene, {"builder"}, before, head)
