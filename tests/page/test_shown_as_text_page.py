"""Issue 21, "bidirectional text", on her page: a stop's command and a drafted reading showed
U+202E raw. Every value a template prints is made visible before it is HTML-escaped, so control,
bidirectional and zero-width characters reach her browser written out (`\\u202e`), newlines kept.
Fetched from a real uvicorn server on 127.0.0.1, signed in as her browser is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from sdd_git.page.security import loopback_socket
from sdd_git.root import Root
from sdd_git.runner import stops
from tests.conftest import SddRunner
from tests.page.test_attack_page import Browser, open_page
from tests.page.test_safety import Switch, served
from tests.runner.scripted import accepted_change, script

RAW = ("\u202e", "\u200b", "\u2066")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[int, Switch]]:
    sock = loopback_socket(0)
    port = int(sock.getsockname()[1])
    switch = Switch()
    with served(switch, sock):
        yield port, switch


@pytest.fixture
def browser(server: tuple[int, Switch], root: Root) -> Browser:
    return open_page(server, root)


def page_text(browser: Browser, path: str) -> str:
    answer = browser.get(path)
    assert answer.status == 200, (answer.status, answer.body[:500])
    text = answer.body.decode("utf-8")
    for char in RAW:
        assert char not in text, f"{char!r} reached the page raw"
    return text


def test_a_stop_whose_command_holds_a_bidi_override_is_shown_escaped_on_the_page(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    browser: Browser,
) -> None:
    accepted_change(root)
    command = "echo harmless \u202e#gpj.exe\necho second\u2066 line"
    call = {"tool": "run_command", "args": {"command": command, "purpose": "try\u200b it"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "ok"}])
    assert sdd("role", "run", "builder", "--task", "Try it").code == 3
    [stop] = stops.pending(root)
    shown = page_text(browser, f"/stops/{stop.id}")
    # The command whole, in its <pre>, with its two lines kept.
    assert "echo harmless \\u202e#gpj.exe\necho second\\u2066 line</pre>" in shown
    assert "try\\u200b it" in shown


def test_a_drafted_reading_holding_bidi_and_zero_width_is_shown_escaped_on_the_change_page(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    browser: Browser,
) -> None:
    assert sdd("change", "new", "Totals per\u2066 month.").code == 0
    reading = "Search by month\u202e and merchant\u200b, from the list."
    draft = {
        "tool": "draft_reading",
        "args": {"change": "CH-0001", "text": reading, "checks": ["It is\u200b found."]},
    }
    calls = [{"role": "spec-steward", "tool_calls": [draft]}, {"role": "spec-steward", "say": "ok"}]
    script(tmp_path, monkeypatch, calls)
    assert sdd("role", "run", "spec-steward", "--task", "Draft the reading").code == 3
    shown = page_text(browser, "/changes/CH-0001")
    assert "Search by month\\u202e and merchant\\u200b, from the list." in shown
    assert "It is\\u200b found." in shown
    assert "Totals per\\u2066 month." in shown
    assert "Totals per\\u2066 month." in page_text(browser, "/")
