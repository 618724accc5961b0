"""Her page's Runs view searches her runs (`/runs?q=`) through the runs index: on `sdd page`'s
own server, signed in with the token URL's cookie as her browser is, over runs the scripted
provider really ran."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.page.test_her_page_answers_her_alone import Running, page, sign_in  # noqa: F401
from tests.page.test_safety import ask
from tests.runner.scripted import accepted_change, script, write_call


def shown(page: Running, cookie: str, path: str) -> str:  # noqa: F811
    answer = ask(page.served.port, "GET", path, {"Host": page.host, "Cookie": cookie})
    assert answer.status == 200, answer.body[:500]
    return html.unescape(answer.body.decode())


def test_the_runs_view_finds_runs_by_their_words_and_says_when_none_match(
    page: Running,  # noqa: F811
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("src/harbour.py", "TIDE = 3\n")]}])
    assert sdd("role", "run", "builder", "--task", "Map the harbour").code == 3
    script(tmp_path, monkeypatch, [{"say": "The lighthouse is fine."}], name="second")
    assert sdd("role", "run", "builder", "--task", "Check the lighthouse").code == 0
    cookie = sign_in(page)

    every = shown(page, cookie, "/runs")
    assert "Map the harbour" in every and "Check the lighthouse" in every
    assert re.search(r'<form method="get" action="/runs"[^>]*>', every)
    assert 'name="q"' in every

    found = shown(page, cookie, "/runs?q=" + quote("TIDE"))  # a tool call's argument, any case
    assert "Map the harbour" in found and "Check the lighthouse" not in found
    assert "1 run with “TIDE”" in found and 'value="TIDE"' in found

    none = shown(page, cookie, "/runs?q=" + quote("<b>zeppelin</b>"))
    assert "No run has the words “<b>zeppelin</b>”" in none
    raw = ask(
        page.served.port, "GET", "/runs?q=%3Cb%3Ezeppelin", {"Host": page.host, "Cookie": cookie}
    )
    assert b"<b>zeppelin" not in raw.body  # escaped, never markup
    assert "Map the harbour" not in none
