"""`sdd usage`: the tokens real runs logged (a loopback model server that reports usage, in
OpenAI's and Anthropic's shapes), summed by role, day and change, checked against the logs."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner.history import Usage, reply_usage
from sdd_git.runner.runlog import read_events
from tests.conftest import SddRunner
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change, add_role

KEY = "sk-local-usage-0123456789"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def _openai(monkeypatch: pytest.MonkeyPatch, server: Loopback) -> None:
    monkeypatch.setenv("SDD_PROVIDER", "openai")
    monkeypatch.setenv("SDD_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("SDD_MODEL", "gpt-test")
    monkeypatch.setenv("SDD_API_KEY", KEY)


def _anthropic(monkeypatch: pytest.MonkeyPatch, server: Loopback) -> None:
    monkeypatch.setenv("SDD_PROVIDER", "anthropic")
    monkeypatch.setenv("SDD_BASE_URL", server.url)
    monkeypatch.setenv("SDD_MODEL", "claude-test")
    monkeypatch.setenv("SDD_API_KEY", KEY)


def _from_logs(root: Root, by: str) -> dict[Any, Usage]:
    """The same sums, read from the logs by hand."""
    sums: dict[Any, Usage] = defaultdict(Usage)
    for log in (root.sdd / "role-runs").glob("run-*.jsonl"):
        events = read_events(log)
        change = events[0].get("change")
        for event in events:
            if event["event"] == "reply" and reply_usage(event["usage"]).calls:
                key = {"role": event["role"], "day": event["ts"][:10], "change": change}[by]
                sums[key] += reply_usage(event["usage"])
    return dict(sums)


def test_usage_sums_what_the_logs_say_by_role_day_and_change(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = accepted_change(root)
    _openai(monkeypatch, server)
    server.reply(body={
        "choices": [{"message": {"role": "assistant", "content": "Done."}}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 30,
                  "prompt_tokens_details": {"cached_tokens": 1024}},
    })  # fmt: skip
    assert sdd("role", "run", "builder", "--task", "One").code == 0
    second = accepted_change(root)
    add_role(root, "auditor", produces="review")
    _anthropic(monkeypatch, server)
    for spent in (
        {"input_tokens": 40, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 2500,
         "output_tokens": 12},
        {"input_tokens": 7, "output_tokens": 3},
    ):  # fmt: skip
        server.reply(body={"content": [{"type": "text", "text": "Fine."}], "usage": spent})
    assert sdd("role", "run", "builder", "--task", "Two", "--change", second).code == 0
    assert sdd("role", "run", "auditor", "--task", "Three", "--change", second).code == 0

    for by in ("role", "day", "change"):
        shown = sdd("usage", "--by", by, "--json")
        assert shown.code == 0, shown.stderr
        got = {row[by]: row for row in json.loads(shown.stdout)}
        expected = _from_logs(root, by)
        assert {k: Usage(**{f: v for f, v in row.items() if f not in (by, "runs")})
                for k, row in got.items()} == expected, by  # fmt: skip
    by_change = {
        row["change"]: row for row in json.loads(sdd("usage", "--by", "change", "--json").stdout)
    }
    assert (
        by_change[first]["input_tokens"] == 1200 and by_change[first]["cached_input_tokens"] == 1024
    )
    assert by_change[second] == {
        "change": second, "runs": 2, "calls": 2, "input_tokens": 2840 + 7,
        "cached_input_tokens": 2500, "cache_write_input_tokens": 300, "output_tokens": 15,
    }  # fmt: skip
    table = sdd("usage").stdout.splitlines()
    assert table[0].split() == [
        "ROLE",
        "RUNS",
        "CALLS",
        "INPUT",
        "CACHE",
        "READ",
        "CACHE",
        "WRITE",
        "OUTPUT",
    ]
    assert table[1].split()[:4] == ["auditor", "1", "1", "7"]
    assert table[2].split()[:4] == ["builder", "2", "2", "4,040"]
    assert table[-1].split() == ["total", "3", "4,047", "3,524", "300", "45"]


def test_usage_with_nothing_logged_says_so_and_json_is_an_empty_list(sdd: SddRunner) -> None:
    assert sdd("usage", "--json").stdout.strip() == "[]"
    said = sdd("usage")
    assert said.code == 0 and "no run has logged token usage yet" in said.stderr


def test_usage_refuses_a_wrong_by_or_since_with_exit_2(sdd: SddRunner) -> None:
    wrong = sdd("usage", "--by", "week")
    assert wrong.code == 2 and wrong.stderr.startswith("error:") and "hint:" in wrong.stderr
    since = sdd("usage", "--since", "last tuesday")
    assert since.code == 2 and "--since takes an age" in since.stderr and "hint:" in since.stderr
