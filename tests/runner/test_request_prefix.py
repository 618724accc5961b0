"""A run's requests start with the previous request, byte for byte: the system prompt, the tool
schemas and the earlier turns never change between calls, across a stop and its answer too. Only
then can a provider read the prefix from its prompt cache. Each wire is checked on the bytes a
real HTTP server on loopback received."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change, events

KEY = "sk-live-SECRET-abcdef0123456789"
# A breakpoint moves to the newest turn on each call; Anthropic's cache matches the prompt, not
# the marker, so the prefix is compared without it (the fixed ones are compared as sent).
MARKER = b', "cache_control": {"type": "ephemeral"}'
READS = [("README.md", {}), ("src/app.py", {}), ("list_files", {"path": "src"})]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def product(root: Root) -> None:
    accepted_change(root)
    (root.path / "README.md").write_text("# Expenses\n\n" + "Search by month. " * 40 + "\n")
    (root.path / "src").mkdir()
    (root.path / "src" / "app.py").write_text("def search(month):\n    return []\n" * 30)


def end_of_messages(raw: bytes) -> int:
    """Where the request's last message ends in its bytes (the `]` of the list comes next)."""
    last = json.dumps(json.loads(raw)["messages"][-1]).encode()
    at = raw.rindex(last) + len(last)
    assert raw[at : at + 1] == b"]", "the messages are not where the request grows"
    return at


def assert_each_request_starts_with_the_last(raws: list[bytes]) -> None:
    for number, (before, after) in enumerate(pairwise(raws), start=1):
        cut = end_of_messages(before)
        if after[:cut] != before[:cut]:
            at = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
            pytest.fail(
                f"request {number + 1} differs from request {number} at byte {at} of {cut}: "
                f"{before[at - 60 : at + 60]!r} became {after[at - 60 : at + 60]!r}"
            )
        assert 0 < before.index(b'"tools"') < before.index(b'"messages"') < cut


def run_with_a_stop(sdd: SddRunner, root: Root, server: Loopback, replies: list[Any]) -> str:
    for body in replies:
        server.reply(body=body)
    first = sdd("role", "run", "builder", "--task", "Find the month search, then note it", "--json")
    assert first.code == 3, first.stderr  # the write stops for her
    stop = json.loads(first.stdout)["stop"]
    done = sdd("allow", stop["id"])  # another process goes on from the log
    assert done.code == 0, done.stderr
    assert len(server.requests) == len(replies)
    return str(stop["run"])


def openai_call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def openai_reply(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": text,
        **({"tool_calls": list(calls)} if calls else {}),
    }
    return {
        "choices": [{"message": message}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }


def test_openai_requests_start_with_the_previous_request_byte_for_byte(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    product(root)
    monkeypatch.setenv("SDD_PROVIDER", "openai")
    monkeypatch.setenv("SDD_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("SDD_MODEL", "gpt-test")
    monkeypatch.setenv("SDD_API_KEY", KEY)
    run_with_a_stop(
        sdd,
        root,
        server,
        [
            openai_reply(
                openai_call(1, "read_file", {"path": "README.md"}),
                openai_call(2, "list_files", {"path": "src"}),
                text="Looking first.",
            ),
            openai_reply(openai_call(3, "read_file", {"path": "src/app.py"})),
            openai_reply(
                openai_call(4, "write_file", {"path": "a.txt", "content": "hi\n", "purpose": "C1"})
            ),
            openai_reply(openai_call(5, "read_file", {"path": "a.txt"})),
            openai_reply(text="Noted."),
        ],
    )
    raws = [r.raw for r in server.requests]
    assert_each_request_starts_with_the_last(raws)
    assert len(raws[0]) > 5000  # the system prompt and the tool schemas: the part worth caching


def anthropic_reply(*blocks: dict[str, Any], cached: int = 0) -> dict[str, Any]:
    usage = {
        "input_tokens": 50,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": cached,
        "output_tokens": 10,
    }
    return {"content": list(blocks), "stop_reason": "tool_use", "usage": usage}


def use(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": args}


def test_anthropic_requests_start_with_the_previous_request_byte_for_byte(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    product(root)
    monkeypatch.setenv("SDD_PROVIDER", "anthropic")
    monkeypatch.setenv("SDD_BASE_URL", server.url)
    monkeypatch.setenv("SDD_MODEL", "claude-test")
    monkeypatch.setenv("SDD_API_KEY", KEY)
    thinking = {"type": "thinking", "thinking": "Read first.", "signature": "sig-abc=="}
    run_id = run_with_a_stop(
        sdd,
        root,
        server,
        [
            anthropic_reply(
                thinking,
                {"type": "text", "text": "Looking first."},
                use(1, "read_file", {"path": "README.md"}),
                use(2, "list_files", {"path": "src"}),
            ),
            anthropic_reply(use(3, "read_file", {"path": "src/app.py"}), cached=2400),
            anthropic_reply(
                use(4, "write_file", {"path": "a.txt", "content": "hi\n", "purpose": "C1"}),
                cached=2600,
            ),
            anthropic_reply(use(5, "read_file", {"path": "a.txt"}), cached=2800),
            anthropic_reply({"type": "text", "text": "Noted."}, cached=2900),
        ],
    )
    raws = [r.raw for r in server.requests]
    # Everything up to the messages (tools, system, their breakpoints) is sent identically.
    fixed = raws[0][: raws[0].index(b'"messages"')]
    assert b'"cache_control"' in fixed
    assert all(raw.startswith(fixed) for raw in raws)
    assert_each_request_starts_with_the_last([raw.replace(MARKER, b"") for raw in raws])
    assert all(raw.count(b'"cache_control"') <= 4 for raw in raws)
    assert raws[-1].count(b'"cache_control"') == 4
    # What the server said it cached is in the run log, beside its own figures.
    usages = [e["usage"] for e in events(root, run_id) if e["event"] == "reply"]
    assert [u["cached_input_tokens"] for u in usages] == [0, 2400, 2600, 2800, 2900]
    assert {u["cache_write_input_tokens"] for u in usages} == {200}
    assert all(u["cache_read_input_tokens"] == u["cached_input_tokens"] for u in usages)
    # ...and summed where a run is shown.
    words = "usage: 5 provider call(s), 11,950 input tokens (10,700 read from the provider's "
    words += "cache, 1,000 written to it), 50 output tokens"
    assert sdd("role", "log", run_id).stdout.splitlines()[-1] == words
    listed = json.loads(sdd("role", "runs", "--json").stdout)
    assert listed[0]["usage"] == {
        "calls": 5,
        "input_tokens": 11950,
        "cached_input_tokens": 10700,
        "cache_write_input_tokens": 1000,
        "output_tokens": 50,
    }
