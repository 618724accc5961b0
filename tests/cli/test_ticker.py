"""The elapsed-time line while a model answers, as she sees it: `sdd role run` in a real
terminal (a pseudo-terminal) against a model server on loopback that takes its time. Without a
terminal, nothing of it is printed."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from collections.abc import Iterator

import pytest

from sdd_git.root import Root
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change

SLOW = 2.6  # seconds the model takes: the line appears after 1 s and counts on


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        loopback.reply(body={"choices": [{"message": {"role": "assistant", "content": "Done."}}]},
                       delay=SLOW)  # fmt: skip
        yield loopback


def _env(server: Loopback) -> dict[str, str]:
    return {**os.environ, "SDD_PROVIDER": "openai", "SDD_BASE_URL": f"{server.url}/v1",
            "SDD_MODEL": "gpt-test", "SDD_API_KEY": "sk-test-0123456789"}  # fmt: skip


COMMAND = [sys.executable, "-m", "sdd_git", "role", "run", "builder", "--task", "Say done"]


def test_a_slow_answer_shows_the_seconds_in_her_terminal_and_the_line_goes(
    root: Root, server: Loopback
) -> None:
    accepted_change(root)
    leader, follower = pty.openpty()
    child = subprocess.Popen(COMMAND, cwd=root.path, env=_env(server), stdin=follower,
                             stdout=follower, stderr=follower, close_fds=True)  # fmt: skip
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert child.wait(timeout=30) == 0, seen.decode(errors="replace")
    os.close(leader)
    text = seen.decode(errors="replace")
    assert "· waiting for builder's model: 1 s" in text
    assert "· waiting for builder's model: 2 s" in text
    # The line is erased before the answer is shown: nothing is left half on one line.
    last_tick = text.rindex("model: 2 s")
    assert "\r\x1b[K" in text[last_tick:]
    assert "Done." in text[last_tick:]


def test_without_a_terminal_nothing_ticks(root: Root, server: Loopback) -> None:
    accepted_change(root)
    done = subprocess.run(COMMAND, cwd=root.path, env=_env(server), capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "waiting for" not in done.stderr + done.stdout
    assert "\x1b" not in done.stderr + done.stdout


def _chunk(text: str) -> bytes:
    data = {"choices": [{"index": 0, "delta": {"content": text}}]}
    return f"data: {json.dumps(data)}\n\n".encode()


def test_the_reply_streams_into_her_terminal_a_line_at_a_time_with_secrets_masked(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    accepted_change(root)
    key = "sk-test-0123456789"
    pieces = [
        _chunk("Looking at the "), _chunk("search first.\nThe key is sk-te"),
        _chunk("st-0123456789, "), _chunk("never shown.\nDone"),
        b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n',
        b"data: [DONE]\n\n",
    ]  # fmt: skip
    with serve() as slow:
        slow.reply(body=pieces, pause=0.4)
        leader, follower = pty.openpty()
        child = subprocess.Popen(COMMAND, cwd=root.path, env=_env(slow), stdin=follower,
                                 stdout=follower, stderr=follower, close_fds=True)  # fmt: skip
        os.close(follower)
        seen = b""
        while select.select([leader], [], [], 30)[0]:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        assert child.wait(timeout=30) == 0, seen.decode(errors="replace")
        os.close(leader)
        assert slow.last.body["stream"] is True
    text = seen.decode(errors="replace")
    assert "  » Looking at the search first." in text
    assert "  » The key is [secret], never shown." in text
    assert key not in text


def test_without_a_terminal_the_request_asks_for_the_whole_answer(
    root: Root, server: Loopback
) -> None:
    accepted_change(root)
    done = subprocess.run(COMMAND, cwd=root.path, env=_env(server), capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "stream" not in server.last.body
