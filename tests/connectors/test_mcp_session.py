"""One MCP session per run (issue 25), against a real server that counts its own starts
(tests/connectors/mcp_servers/session_server.py), over stdio and streamable HTTP.

- Two calls in one run start the server once; later calls reuse the initialized session.
- When the run ends (done, stopped for her, raised, Ctrl-C), the server's process is gone, by
  pid; `sdd allow` resumes with a session of its own.
- The cleanup after a role's command leaves a kept server alone.
- A server killed between two calls is started again once by the next call, and the call says
  so; one that cannot be started again says both, plainly.
- The refusal still reads the description the server lists now: a tool reworded mid-session
  into a release is refused, in the same kept session.
- Outside a run (a person command) nothing is kept: each call starts and ends its server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git import reaper
from sdd_git.connectors.base import Refused, Session, Unavailable, run_lifetime
from sdd_git.root import Root
from sdd_git.runner import run as run_module
from tests.conftest import SddRunner
from tests.connectors.core_support import configure, file_keyring
from tests.runner.scripted import accepted_change, add_role, events, script

pytest.importorskip("mcp")

from sdd_git.connectors.mcp import McpConnector
from tests.connectors.test_mcp import SERVERS, gone_within

__all__ = ["file_keyring"]

SESSION_SERVER = SERVERS / "session_server.py"
READS = ["search_docs", "sessions_seen"]
ACTS = ["queue_note", "rewrite_notes"]


def command(starts: Path, *more: str) -> list[str]:
    return [sys.executable, str(SESSION_SERVER), "--starts", str(starts), *more]


def settings(starts: Path, *more: str, **extra: Any) -> dict[str, Any]:
    # sandbox off: a sandboxed server could not write its starts into the test's folder, and
    # its pid there would be its namespace's (the sandboxed server's lifetime is the same code).
    return {"command": command(starts, *more), "sandbox": "off", "reads": READS, "acts": ACTS,
            "timeout": 20, **extra}  # fmt: skip


def session(starts: Path, *more: str, **extra: Any) -> Session:
    return Session("docs", "", None, settings(starts, *more, **extra))


def started(starts: Path) -> list[int]:
    return [int(pid) for pid in starts.read_text().split()] if starts.exists() else []


def read(operation: str, **args: Any) -> dict[str, Any]:
    return {"tool": "connector_read",
            "args": {"connector": "docs", "operation": operation, "args": args}}  # fmt: skip


def act(operation: str, **args: Any) -> dict[str, Any]:
    return {"tool": "connector_act", "args": {"connector": "docs", "operation": operation,
            "args": args, "purpose": "the team asked"}}  # fmt: skip


def tool_results(root: Root, run_id: str) -> list[str]:
    return [str(e["content"]) for e in events(root, run_id) if e["event"] == "tool_result"]


@pytest.fixture
def builder(root: Root) -> Root:
    accepted_change(root)
    add_role(root, "builder")
    return root


def configure_docs(root: Root, starts: Path, *more: str) -> None:
    entry = {"kind": "mcp", **settings(starts, *more)}
    configure(root, connectors={"docs": entry})


# -- in a run ---------------------------------------------------------------------------------


def test_two_calls_in_one_run_start_the_server_once_and_it_is_gone_after(
    sdd: SddRunner, builder: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts = tmp_path / "starts"
    configure_docs(builder, starts)
    script(tmp_path, monkeypatch, [
        {"tool_calls": [read("search_docs", query="hotel")]},
        {"tool_calls": [read("sessions_seen"), read("search_docs", query="month")]},
        {"say": "Found it."},
    ])  # fmt: skip
    ran = sdd("role", "run", "builder", "--json", "--task", "Look it up in @docs")
    outcome = json.loads(ran.stdout)
    assert outcome["status"] == "done", ran.stderr
    [pid] = started(starts)  # three calls, one start
    said = tool_results(builder, outcome["run"])
    assert "3 pages match 'hotel'" in said[0]
    assert f"1 session(s) in process {pid}" in said[1]
    assert "3 pages match 'month'" in said[2]
    assert gone_within(pid)  # the run has ended: so has its server


def test_a_run_that_stops_for_her_ends_its_server_and_the_answer_starts_its_own(
    sdd: SddRunner, builder: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts, marker = tmp_path / "starts", tmp_path / "queued"
    configure_docs(builder, starts)
    script(tmp_path, monkeypatch, [
        {"tool_calls": [read("search_docs", query="x")]},
        {"tool_calls": [act("queue_note", marker=str(marker))]},
        {"tool_calls": [read("search_docs", query="y")]},
        {"say": "Queued."},
    ])  # fmt: skip
    ran = sdd("role", "run", "builder", "--json", "--task", "Note it in @docs")
    stopped = json.loads(ran.stdout)
    assert stopped["exit_code"] == 3
    # The guard listed the act's tool before the stop, on the run's session: one start.
    [first] = started(starts)
    assert gone_within(first)  # a stop ends the run, and the server with it
    assert not marker.exists()
    allowed = sdd("allow", stopped["stop"]["id"])
    assert allowed.code == 0, allowed.stderr
    assert marker.read_text() == "called"
    assert len(started(starts)) == 2  # the resumed run: a session of its own, for both calls
    assert gone_within(started(starts)[1])


def test_a_run_that_raises_ends_its_server(
    sdd: SddRunner, builder: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts = tmp_path / "starts"
    configure_docs(builder, starts)
    script(tmp_path, monkeypatch, [
        {"tool_calls": [read("search_docs", query="x")]},
        {"say": "Done."},
    ])  # fmt: skip
    add_message = run_module.conversation.add_message

    def failing_disk(*args: Any, **fields: Any) -> Any:
        if fields.get("from") != "person":  # the role's reply, after the MCP call
            raise OSError(28, "No space left on device")
        return add_message(*args, **fields)

    monkeypatch.setattr(run_module.conversation, "add_message", failing_disk)
    ran = sdd("role", "run", "builder", "--json", "--task", "Look it up in @docs")
    assert ran.code != 0
    assert "No space left on device" in ran.stderr
    [pid] = started(starts)
    assert gone_within(pid)


# -- the lifetime itself ----------------------------------------------------------------------


def test_a_run_lifetime_keeps_one_session_and_ends_it_when_it_ends(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    connector = McpConnector()
    with run_lifetime():
        for query in ("a", "b", "c"):
            connector.call(session(starts), "search_docs", {"query": query})
        tools = connector.tools(session(starts))  # the guard's listing: the same session
        assert "queue_note" in {tool.name for tool in tools}
        [pid] = started(starts)
        assert not gone_within(pid, 0.2)  # kept between the calls
    assert gone_within(pid)


def test_a_sandboxed_server_is_kept_for_the_run_and_ended_with_it() -> None:
    # In the machine's sandbox the server cannot write a starts file of the test's: it is seen
    # as sdd's child instead (bubblewrap's outer process, or the server itself).
    from tests.connectors.test_mcp import session as docs
    from tests.connectors.test_mcp import stdio

    before = set(reaper.children_of({os.getpid()}))
    connector = McpConnector()
    with run_lifetime():
        connector.call(docs(stdio()), "search_docs", {"query": "x"})
        [kept] = set(reaper.children_of({os.getpid()})) - before
        said = connector.call(docs(stdio()), "search_docs", {"query": "y"})
        assert "3 pages match 'y'" in said.text
        assert set(reaper.children_of({os.getpid()})) - before == {kept}  # no second start
    assert gone_within(kept)


def test_ctrl_c_in_a_run_ends_its_server(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    with pytest.raises(KeyboardInterrupt), run_lifetime():
        McpConnector().call(session(starts), "search_docs", {"query": "x"})
        raise KeyboardInterrupt
    [pid] = started(starts)
    assert gone_within(pid)


def test_at_interpreter_exit_a_lifetime_left_open_still_ends_its_server(tmp_path: Path) -> None:
    # A run whose `finally` never comes (its thread dies with the process): the last resort.
    starts = tmp_path / "starts"
    program = (
        "import sys\n"
        "from sdd_git.connectors.base import Session, run_lifetime\n"
        "from sdd_git.connectors.mcp import McpConnector\n"
        f"settings = {settings(starts)!r}\n"
        "run = run_lifetime()\n"
        "run.__enter__()\n"
        "McpConnector().call(Session('docs', '', None, settings), 'search_docs', {'query': 'x'})\n"
        "sys.exit(0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    [pid] = started(starts)
    assert gone_within(pid)


def test_a_command_cleanup_during_the_run_leaves_the_kept_server_alone(tmp_path: Path) -> None:
    from sdd_git.childenv import CHILD_ENV
    from sdd_git.sandbox.execute import run as run_command

    starts, product = tmp_path / "starts", tmp_path / "product"
    product.mkdir()
    env = {name: os.environ[name] for name in CHILD_ENV if name in os.environ}
    connector = McpConnector()
    with run_lifetime():
        connector.call(session(starts), "search_docs", {"query": "x"})
        finished = run_command(product, "sleep 0.1", env, network=False, timeout=20)
        assert finished.code == 0
        reaper.end_descendants()  # what every command's cleanup calls
        said = connector.call(session(starts), "sessions_seen", {})
        [pid] = started(starts)
        assert f"1 session(s) in process {pid}" in said.text
        assert "started again" not in said.text
    assert gone_within(pid)


def test_a_server_killed_between_two_calls_is_started_again_once(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    connector = McpConnector()
    with run_lifetime():
        connector.call(session(starts), "search_docs", {"query": "x"})
        [first] = started(starts)
        os.kill(first, signal.SIGKILL)
        assert gone_within(first)
        said = connector.call(session(starts), "sessions_seen", {})
        assert said.text.startswith(
            "[note: the MCP server docs had stopped since the last call (its process had "
            "exited) and was started again for this one]"
        )
        assert said.data["restarted"] is True
        first_again, second = started(starts)
        assert first_again == first
        assert f"in process {second}" in said.text
        again = connector.call(session(starts), "search_docs", {"query": "y"})
        assert "started again" not in again.text  # the new session is kept in turn
        assert len(started(starts)) == 2
    assert gone_within(second)


def test_a_server_that_cannot_be_started_again_says_both_plainly(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    connector = McpConnector()
    with run_lifetime():
        connector.call(session(starts, "--fail-from", "2"), "search_docs", {"query": "x"})
        [first] = started(starts)
        os.kill(first, signal.SIGKILL)
        assert gone_within(first)
        with pytest.raises(Unavailable) as failed:
            connector.call(session(starts, "--fail-from", "2"), "search_docs", {"query": "y"})
    words = str(failed.value)
    assert words.startswith(
        "docs: the MCP server had stopped since the last call of this run (its process had "
        "exited) and was started again once, which failed too: "
    )
    assert "start 2: the license server is unreachable" in words  # its own stderr
    assert len(started(starts)) == 2  # once: never a loop of starts
    assert all(gone_within(pid) for pid in started(starts))


def test_a_description_reworded_mid_session_is_read_before_the_next_call(tmp_path: Path) -> None:
    starts, marker = tmp_path / "starts", tmp_path / "queued"
    connector = McpConnector()
    with run_lifetime():
        connector.call(session(starts), "queue_note", {"marker": str(marker)})
        marker.unlink()
        connector.call(session(starts), "rewrite_notes", {})
        with pytest.raises(Refused, match="release, as its own description says"):
            connector.call(session(starts), "queue_note", {"marker": str(marker)})
        assert len(started(starts)) == 1  # the same session: its listing, read again
    assert not marker.exists()  # the reworded tool was never called


def test_a_changed_config_mid_run_ends_the_old_session(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    connector = McpConnector()
    with run_lifetime():
        connector.call(session(starts), "search_docs", {"query": "x"})
        [first] = started(starts)
        connector.call(session(starts, env={"LOG_LEVEL": "debug"}), "search_docs", {"query": "y"})
        assert gone_within(first)  # not the server she configures now
        assert len(started(starts)) == 2


def test_outside_a_run_each_call_starts_and_ends_its_server(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    connector = McpConnector()
    connector.call(session(starts), "search_docs", {"query": "x"})
    assert gone_within(started(starts)[0])
    connector.call(session(starts), "search_docs", {"query": "y"})
    assert len(started(starts)) == 2
    assert gone_within(started(starts)[1])


def test_a_call_that_times_out_ends_the_session_and_the_next_starts_anew(tmp_path: Path) -> None:
    from tests.connectors.test_mcp import STDIO_SERVER

    pid_file = tmp_path / "pid"
    slow = {"command": [sys.executable, str(STDIO_SERVER), "--pid-file", str(pid_file)],
            "sandbox": "off", "reads": ["search_docs"], "acts": ["sleep"],
            "timeout": 3}  # fmt: skip
    connector = McpConnector()
    with run_lifetime():
        with pytest.raises(Unavailable, match="did not run sleep within 3 s; it was stopped"):
            connector.call(Session("docs", "", None, slow), "sleep", {"seconds": 60})
        first = int(pid_file.read_text())
        assert gone_within(first)
        said = connector.call(Session("docs", "", None, slow), "search_docs", {"query": "x"})
        assert "started again" not in said.text  # dropped on purpose, not found dead
        second = int(pid_file.read_text())
        assert second != first
    assert gone_within(second)


# -- streamable HTTP ----------------------------------------------------------------------------


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port_file = tmp_path / "port"
    process = subprocess.Popen(command(tmp_path / "http-starts", "--http", str(port_file)))
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            assert process.poll() is None, "the HTTP test server did not start"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text()}/mcp"
    finally:
        process.kill()
        process.wait()


def test_over_streamable_http_a_run_keeps_one_session(http_server: str) -> None:
    docs = Session("docs", "", None, {"url": http_server, "reads": READS, "timeout": 20})
    connector = McpConnector()
    with run_lifetime():
        for _ in range(3):
            said = connector.call(docs, "sessions_seen", {})
        assert said.text.startswith("1 session(s)")
    # Outside a run, a session per call: the same server counts a new one.
    assert McpConnector().call(docs, "sessions_seen", {}).text.startswith("2 session(s)")
