"""The elapsed-time line while a model answers, as she sees it: `sdd role run` in a real
terminal (a pseudo-terminal) against a model server on loopback that takes its time. Without a
terminal, nothing of it is printed."""

from __future__ import annotations

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
