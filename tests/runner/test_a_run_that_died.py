"""A run whose process died shows "ended unexpectedly", not "running" (issue 22, 3): a SIGKILLed
`sdd role run` never writes `run_ended`, and its log alone would say `running` forever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def _statuses(sdd: SddRunner) -> list[str]:
    listed = sdd("role", "runs", "--json")
    assert listed.code == 0, listed.stderr
    return [r["status"] for r in json.loads(listed.stdout)]


def test_a_sigkilled_run_shows_ended_unexpectedly_not_running(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    # A slow model: the run waits on its first provider call until it is killed.
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Hi"}}]}, delay=120)
    env = {
        **os.environ,
        "SDD_PROVIDER": "openai",
        "SDD_BASE_URL": f"{server.url}/v1",
        "SDD_MODEL": "slow",
        "SDD_API_KEY": "sk-local-0123456789abcdef",
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "role", "run", "builder", "--task", "Say hi"],
        cwd=root.path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not server.requests and child.poll() is None:
            time.sleep(0.05)
        if not server.requests:
            child.kill()
            pytest.fail(f"the run never called its model: {child.communicate()[1]!r}")
        assert _statuses(sdd) == ["running"]  # alive: it is running
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)

    assert _statuses(sdd) == ["ended-unexpectedly"]
    table = sdd("role", "runs")
    assert "ended unexpectedly" in table.stdout and "running" not in table.stdout
    # Her way out is the one the lock's hint names: close it.
    closed = sdd("role", "stop", "builder")
    assert closed.code == 0, closed.stderr
    assert _statuses(sdd) == ["stopped-now"]
