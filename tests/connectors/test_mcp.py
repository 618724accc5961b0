"""The MCP connector against real MCP servers written on the official SDK's server API
(tests/connectors/mcp_servers/): over stdio, a child process per call, and over streamable
HTTP, a server this module starts on 127.0.0.1 and stops by its handle.

A tool is a read only when the config declares it one; annotations are shown, never obeyed; the
forbidden rules reach every tool; errors land in the connector family; the server's child gets
none of sdd's secrets and nothing it started outlives the call."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from sdd_git.connectors.base import (
    ACT,
    FORBIDDEN,
    READ,
    ConnectorError,
    Missing,
    NotSignedIn,
    Refused,
    Session,
    Unavailable,
)
from sdd_git.connectors.mcp import CHILD_ENV, McpConnector, McpTool, operation_of
from sdd_git.connectors.operations import classify
from sdd_git.root import Root
from sdd_git.sandbox.server import ADDED_ENV

pytest.importorskip("mcp")
MCP_MAJOR = int(version("mcp").split(".")[0])

SERVERS = Path(__file__).parent / "mcp_servers"
STDIO_SERVER = SERVERS / "stdio_server.py"
HTTP_SERVER = SERVERS / "http_server.py"
LEAKED = "ghp_" + "Zq8RmYx4Lk2Vb7Nc1Td5Wf9Hg3Jp6Ms0Qa4E"  # as toolset.py returns it
HTTP_TOKEN = "mcp-test-token-5Rk2Wq8Zt4Ln"
READS = ["search_docs", "get_page"]
# The tools the tests call that are not reads: each listed under `acts`, as she offers them.
ACTS = ["page_stats", "rename_page", "delete_page", "create_release", "run_job", "show_env",
        "working_folder", "fail", "find_record", "lookup", "sleep", "picture", "leak",
        "spawn_sleeper"]  # fmt: skip


def session(
    settings: Mapping[str, Any],
    token: str | None = None,
    masked: Callable[[str], str] = str,
    name: str = "docs",
) -> Session:
    return Session(name, "", token, dict(settings), masked)


def stdio(pid_file: Path | None = None, **more: Any) -> dict[str, Any]:
    command = [sys.executable, str(STDIO_SERVER)]
    if pid_file is not None:
        # A server in the sandbox cannot write the test's folder, and its pid there would be
        # its pid namespace's: the reaping of a server that runs as her is tested here, the
        # sandboxed one in test_mcp_sandbox.py.
        command += ["--pid-file", str(pid_file)]
        more = {"sandbox": "off", **more}
    return {"command": command, "reads": READS, "acts": ACTS, "timeout": 20, **more}


def alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie no one reaped yet does not run)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_within(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture(scope="module")
def listed() -> dict[str, Any]:
    """The server's tools and operations, listed once for the classification tests."""
    connector = McpConnector(session(stdio()))
    return {"tools": {tool.name: tool for tool in connector.tools(session(stdio()))},
            "operations": dict(connector.operations())}  # fmt: skip


# -- listing and classification --------------------------------------------------------------


def test_the_servers_tools_are_listed_with_their_annotations(listed: dict[str, Any]) -> None:
    tools: dict[str, McpTool] = listed["tools"]
    assert {"search_docs", "get_page", "page_stats", "rename_page", "delete_page"} <= set(tools)
    assert tools["search_docs"].read_only_hint is True
    assert tools["delete_page"].read_only_hint is False
    assert tools["delete_page"].destructive_hint is True
    assert (tools["get_page"].read_only_hint, tools["get_page"].destructive_hint) == (None, None)
    assert tools["rename_page"].required == ("page", "to")
    assert tools["search_docs"].description == "Search the team's docs."


def test_a_declared_read_is_a_read_whatever_its_hints(listed: dict[str, Any]) -> None:
    operations = listed["operations"]
    assert operations["search_docs"].kind == READ
    assert operations["get_page"].kind == READ  # declared, though the server gives no hints
    assert "the server gives no hints" in operations["get_page"].words
    assert operations["get_page"].record  # a read names what a missing answer was


def test_a_read_only_hint_listed_as_an_act_is_an_act(listed: dict[str, Any]) -> None:
    stats = listed["operations"]["page_stats"]
    assert stats.kind == ACT
    assert "the server says it only reads" in stats.words
    assert "an act in the config" in stats.words


def test_an_unannotated_tool_listed_as_an_act_is_an_act(listed: dict[str, Any]) -> None:
    rename = listed["operations"]["rename_page"]
    assert rename.kind == ACT
    assert "the server gives no hints" in rename.words
    assert rename.words.format(page="Setup", to="Install").startswith(
        "run rename_page of MCP server docs with page=Setup, to=Install as you"
    )


def test_a_destructive_hint_is_an_act_that_says_so(listed: dict[str, Any]) -> None:
    delete = listed["operations"]["delete_page"]
    assert delete.kind == ACT
    assert "may delete or overwrite" in delete.words


def test_annotations_never_decide_the_class_of_a_call() -> None:
    hinted = McpTool("page_stats", read_only_hint=True)
    as_act = operation_of(hinted, "docs", acts=["page_stats"])
    as_read = operation_of(hinted, "docs", reads=["page_stats"])
    assert as_act is not None and as_act.kind == ACT
    assert as_read is not None and as_read.kind == READ
    assert operation_of(hinted, "docs") is None  # listed nowhere: not offered at all
    # The table's class of a call: whether the tool is offered at all, the guard and the
    # call decide from reads and acts (tests/connectors/test_mcp_offered.py).
    assert classify("mcp", "page_stats", {"page": "x"}, ("search_docs",)).kind == ACT
    assert classify("mcp", "not_listed_anywhere", {}).kind == ACT
    assert classify("mcp", "search_docs", {"query": "x"}, ("search_docs",)).kind == READ


def test_forbidden_tools_are_forbidden_even_when_declared_reads(listed: dict[str, Any]) -> None:
    assert listed["operations"]["create_release"].kind == FORBIDDEN
    assert "release" in listed["operations"]["create_release"].why
    declared = ("create_release", "run_job")
    assert classify("mcp", "create_release", {"tag": "v1"}, declared).kind == FORBIDDEN
    job = {"job": "deploy", "parameters": {"CMD": "sdd complete CH-0001"}}
    verdict = classify("mcp", "run_job", job, declared)
    assert verdict.kind == FORBIDDEN and "sdd complete" in verdict.why
    assert classify("mcp", "run_job", {"job": "lint", "parameters": {}}, declared).kind == READ


def test_call_refuses_a_forbidden_tool_before_the_server_starts(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    connector = McpConnector()
    with pytest.raises(Refused, match="release"):
        connector.call(session(stdio(pid_file)), "create_release", {"tag": "v1"})
    job = {"job": "deploy", "parameters": {"CMD": "sdd complete CH-0001"}}
    with pytest.raises(Refused, match="sdd complete"):
        connector.call(session(stdio(pid_file)), "run_job", job)
    assert not pid_file.exists()


def test_a_connector_built_bare_knows_no_operations_until_it_has_a_server() -> None:
    assert McpConnector().operations() == {}
    assert McpConnector.name == "mcp" and McpConnector.needs_token is False


# -- calls over stdio ------------------------------------------------------------------------


def test_a_declared_read_runs_and_returns_the_servers_text() -> None:
    result = McpConnector().call(session(stdio()), "search_docs", {"query": "setup"})
    assert result.text == "3 pages match 'setup': intro, setup, faq"
    assert result.data == {"server": "docs", "tool": "search_docs", "content": ["text"]}


def test_images_and_resources_are_said_by_type_and_size() -> None:
    result = McpConnector().call(session(stdio()), "picture", {})
    assert result.text.splitlines() == [
        "the build's screenshot:",
        "[image: image/png, 100 bytes]",
        "[resource file:///report.pdf: application/pdf, 2048 bytes]",
    ]
    assert result.data["content"] == ["text", "image", "resource"]


def test_is_error_is_refused_with_the_servers_words_masked() -> None:
    hide = lambda text: text.replace(LEAKED, "[secret]")  # noqa: E731 - the session's mask
    with pytest.raises(Refused) as refused:
        McpConnector().call(session(stdio(), masked=hide), "fail", {"why": "no quota"})
    assert "cannot do that: no quota" in str(refused.value)
    assert "[secret]" in str(refused.value) and LEAKED not in str(refused.value)


@pytest.mark.skipif(
    MCP_MAJOR < 2,
    reason="FastMCP 1 turns every error a tool raises into isError: a v1 test server cannot "
    "answer with MCP's resource-not-found error",
)
def test_a_clear_not_found_is_missing_naming_the_server() -> None:
    with pytest.raises(Missing) as missing:
        McpConnector().call(session(stdio()), "find_record", {"key": "EXP-9"})
    assert missing.value.source == "find_record of MCP server docs"
    assert "Resource not found: EXP-9" in missing.value.why


def test_words_that_say_not_found_stay_the_servers_words() -> None:
    said = McpConnector().call(session(stdio()), "lookup", {"key": "EXP-9"})
    assert said.text == "no record named EXP-9 was found"  # not Missing: only a clear not-found is


def test_a_listed_tool_the_server_does_not_list_is_refused_before_the_call() -> None:
    with pytest.raises(Refused, match="the MCP server docs lists no tool 'no_such_tool'"):
        McpConnector().call(session(stdio(acts=[*ACTS, "no_such_tool"])), "no_such_tool", {})


def test_the_server_child_gets_no_secret_of_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "fake-api-key-value-9d8c7b6a")
    monkeypatch.setenv("DOCS_SOURCE", "docs-token-named-in-config-1234")
    settings = stdio(env={"DOCS_LEVEL": "debug", "DOCS_TOKEN": "$DOCS_SOURCE"}, token_as="SIGNED")
    result = McpConnector().call(session(settings, token="keyring-token-5678"), "show_env", {})
    env = json.loads(result.text)
    assert "FAKE_API_KEY" not in env and "fake-api-key-value" not in result.text
    assert env["DOCS_TOKEN"] == "docs-token-named-in-config-1234"
    assert env["SIGNED"] == "keyring-token-5678"
    assert env["DOCS_LEVEL"] == "debug"
    coerced = {"LC_CTYPE"}  # Python sets it itself when LANG is absent (PEP 538)
    coerced |= set(ADDED_ENV)  # the sandbox's own: TMPDIR (its private /tmp), PWD
    assert set(env) - coerced == {*(n for n in CHILD_ENV if n in os.environ), "DOCS_LEVEL",
                                  "DOCS_TOKEN", "SIGNED"}  # fmt: skip


def test_a_relative_command_inside_the_repository_is_refused_before_it_starts(
    tmp_path: Path,
) -> None:
    # The server runs with the person's rights outside the sandbox, and a role can write the
    # repository's files: a launcher there is never run (tests/attack/ has the other shapes).
    ran = tmp_path / "ran"
    launcher = tmp_path / "bin" / "docs-mcp"
    launcher.parent.mkdir()
    launcher.write_text(f"#!/bin/sh\ntouch '{ran}'\nexec '{sys.executable}' '{STDIO_SERVER}'\n")
    launcher.chmod(0o755)
    settings = {"command": ["bin/docs-mcp"], "root": str(tmp_path), "acts": ["working_folder"]}
    with pytest.raises(ConnectorError, match="runs a file inside the product"):
        McpConnector().call(session(settings), "working_folder", {})
    assert not ran.exists()


def test_a_command_outside_the_repository_runs_in_a_folder_of_its_own_with_listed_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_SOURCE", "passed-on-as-it-is")
    monkeypatch.setenv("FAKE_API_KEY", "fake-api-key-value-9d8c7b6a")
    product = tmp_path / "product"
    product.mkdir()
    settings = {**stdio(), "root": str(product), "env": ["DOCS_SOURCE"]}
    connector = McpConnector()
    folder = connector.call(session(settings), "working_folder", {}).text
    assert not Path(folder).resolve().is_relative_to(product.resolve())
    env = json.loads(connector.call(session(settings), "show_env", {}).text)
    assert env["DOCS_SOURCE"] == "passed-on-as-it-is" and "FAKE_API_KEY" not in env


def test_a_secret_written_into_the_env_config_is_refused(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(ConnectorError, match=r"env\.DOCS_TOKEN would put a secret"):
        McpConnector().call(session(stdio(pid_file, env={"DOCS_TOKEN": "abc"})), "show_env", {})
    with pytest.raises(NotSignedIn, match=r"\$NOT_SET_ANYWHERE, which is not set"):
        McpConnector().call(session(stdio(env={"DOCS_TOKEN": "$NOT_SET_ANYWHERE"})), "show_env", {})
    assert not pid_file.exists()


def test_the_server_process_is_gone_after_a_call(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    McpConnector().call(session(stdio(pid_file)), "search_docs", {"query": "x"})
    pid = int(pid_file.read_text())
    assert gone_within(pid)


def test_the_server_process_is_gone_after_a_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # 5 s: the whole call's deadline covers the server's start, which takes about 1 s on a
    # loaded machine; the sleep is what must time out.
    with pytest.raises(Unavailable, match="did not run sleep within 5 s; it was stopped"):
        McpConnector().call(session(stdio(pid_file, timeout=5)), "sleep", {"seconds": 120})
    assert gone_within(int(pid_file.read_text()))


def test_a_child_the_server_leaves_running_is_ended_with_it(tmp_path: Path) -> None:
    sleeper = tmp_path / "sleeper"
    settings = stdio(sandbox="off")  # the sleeper's pid file is in the test's folder
    said = McpConnector().call(session(settings), "spawn_sleeper", {"pid_file": str(sleeper)})
    pid = int(sleeper.read_text())
    assert said.text.endswith(f"left {pid} running")
    assert gone_within(pid)


def test_a_secret_the_server_returns_is_masked_by_the_core_masker() -> None:
    # The connector returns the server's text as it is; the core masks every result before a
    # role reads it (masking.returned.mask_returned, then the session's masker).
    from sdd_git.masking.returned import mask_returned

    result = McpConnector().call(session(stdio()), "leak", {})
    assert LEAKED in result.text
    assert LEAKED not in mask_returned(result.text)
    assert mask_returned(result.text) == "deploy key for staging: [secret]"


def test_a_server_that_dies_at_start_is_unavailable_with_its_stderr() -> None:
    crash = "import sys; sys.stderr.write('boom: DOCS_TOKEN is not set\\n'); sys.exit(3)"
    settings = {"command": [sys.executable, "-c", crash], "reads": READS}
    with pytest.raises(Unavailable, match="did not start a session") as failed:
        McpConnector().call(session(settings), "search_docs", {"query": "x"})
    assert "its stderr ends: boom: DOCS_TOKEN is not set" in str(failed.value)


def test_a_command_not_on_path_is_unavailable_before_anything_starts() -> None:
    with pytest.raises(Unavailable, match="'no-such-mcp-server' is not a program") as failed:
        McpConnector().call(session({"command": ["no-such-mcp-server"], "reads": ["x"]}), "x", {})
    assert failed.value.hint and "full/path" in failed.value.hint


def test_settings_without_command_or_url_say_what_to_write() -> None:
    with pytest.raises(ConnectorError, match="needs command") as failed:
        McpConnector().call(session({"reads": ["x"]}), "x", {})
    assert failed.value.hint and "kind: mcp" in failed.value.hint
    with pytest.raises(ConnectorError, match="timeout must be a number"):
        McpConnector().call(session(stdio(timeout="soon")), "search_docs", {})
    with pytest.raises(ConnectorError, match="url holds a sign-in"):
        signed = {"url": "https://me:pw@mcp.example.com/mcp", "reads": ["x"]}
        McpConnector().call(session(signed), "x", {})


def test_without_the_mcp_package_a_call_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(Unavailable, match="not installed") as failed:
        McpConnector().call(session(stdio()), "search_docs", {"query": "x"})
    assert failed.value.hint == "pip install 'sdd-git[mcp]'"


def test_a_call_from_inside_an_event_loop_runs_in_a_thread_of_its_own() -> None:
    async def caller() -> str:
        return McpConnector().call(session(stdio()), "search_docs", {"query": "x"}).text

    assert asyncio.run(caller()).startswith("3 pages match")


# -- streamable HTTP -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1, a port the system picked; it wants
    `Authorization: Bearer HTTP_TOKEN`. Stopped by its handle when the module is done."""
    port_file = tmp_path_factory.mktemp("mcp-http") / "port"
    env = {**os.environ, "MCP_TEST_TOKEN": HTTP_TOKEN}
    server = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), str(port_file)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert server.poll() is None, "the HTTP test server exited"
            assert time.monotonic() < deadline, "the HTTP test server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port_file.read_text().strip()}/mcp"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


def test_streamable_http_lists_and_calls_with_the_bearer_token(http_url: str) -> None:
    remote = session(
        {"url": http_url, "reads": ["search_docs"], "acts": ["delete_page", "fail"]},
        token=HTTP_TOKEN,
    )
    connector = McpConnector(remote)
    operations = connector.operations()
    assert operations["search_docs"].kind == READ
    assert operations["delete_page"].kind == ACT
    assert connector.call(remote, "search_docs", {"query": "x"}).text.startswith("3 pages")
    with pytest.raises(Refused, match="cannot do that: over HTTP"):
        connector.call(remote, "fail", {"why": "over HTTP"})


def test_streamable_http_without_the_token_is_not_signed_in(http_url: str) -> None:
    for token in (None, "not-the-token-12345678"):
        with pytest.raises(NotSignedIn, match=r"did not accept the sign-in \(401\)") as failed:
            listed = {"url": http_url, "reads": READS}
            McpConnector().call(session(listed, token=token), "search_docs", {})
        assert failed.value.hint and "sdd connect docs" in failed.value.hint
        assert "not-the-token" not in str(failed.value)


def test_an_http_server_that_is_not_there_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    with pytest.raises(Unavailable, match="cannot reach the MCP server"):
        McpConnector().call(session({"url": url, "timeout": 10, "reads": READS}), "search_docs", {})


# -- import cost -----------------------------------------------------------------------------


def _imported(args: list[str], cwd: Path) -> list[str]:
    """The modules `python -X importtime -m sdd_git ARGS` imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sdd_git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    ]


def test_sdd_help_and_role_list_do_not_import_mcp(root: Root) -> None:
    (root.path / ".sdd" / "config.yaml").write_text(
        "connectors:\n  docs: {kind: mcp, command: [docs-mcp], reads: [search_docs]}\n",
        encoding="utf-8",
    )
    for args in (["--help"], ["role", "list"]):
        modules = _imported(args, root.path)
        assert "sdd_git.cli.main" in modules
        assert [m for m in modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))] == []


def test_importing_the_mcp_connector_does_not_import_mcp(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from sdd_git.connectors.mcp import McpConnector\n"
        "from sdd_git.connectors.registry import make_connector\n"
        "assert make_connector('mcp').operations() == {}\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
