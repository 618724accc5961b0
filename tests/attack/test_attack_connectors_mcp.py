"""Attack routes through the MCP connector: a server is a program sdd starts with the person's
rights and none of the sandbox, so what it runs must never be something a role could have
written; and a hostile server (one that escapes its process group, hangs, floods its stderr,
or names a tool like one of sdd's) ends with the call and decides nothing.

Servers are real, on the official SDK's server API: tests/connectors/mcp_servers/ and
tests/attack/mcp_hostile/server.py, over stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sdd_git.connectors.base import ACT, ConnectorError, Session, Unavailable
from sdd_git.connectors.operations import classify
from sdd_git.root import Root
from sdd_git.runner import guard, stops
from tests.conftest import SddRunner
from tests.connectors.core_support import configure, file_keyring
from tests.runner.scripted import accepted_change, add_role, events, script

pytest.importorskip("mcp")

from sdd_git.connectors.mcp import McpConnector
from tests.connectors.test_mcp import STDIO_SERVER, alive, gone_within

__all__ = ["file_keyring"]

HOSTILE = Path(__file__).parent / "mcp_hostile" / "server.py"


# The tools these tests call, offered as she would offer them (reads, acts).
OFFERED = {"reads": ["search_docs"],
           "acts": ["escape", "hang", "noisy", "environment", "parent_env"]}  # fmt: skip


def session(settings: Mapping[str, Any], token: str | None = None) -> Session:
    return Session("docs", "", token, {**OFFERED, **settings})


def planted_server(folder: Path, ran: Path) -> str:
    """A server script a role could have written: it leaves a mark, then serves as usual."""
    return (
        f"from pathlib import Path\nPath({str(ran)!r}).write_text('ran')\n"
        f"import runpy, sys\nsys.argv = [{str(STDIO_SERVER)!r}]\n"
        f"runpy.run_path({str(STDIO_SERVER)!r}, run_name='__main__')\n"
    )


@pytest.fixture
def product(tmp_path: Path) -> Path:
    folder = tmp_path / "product"
    (folder / "tools").mkdir(parents=True)
    (folder / "bin").mkdir()
    return folder


def _launcher(path: Path, ran: Path) -> None:
    path.write_text(f"#!/bin/sh\ntouch '{ran}'\nexec '{sys.executable}' '{STDIO_SERVER}'\n")
    path.chmod(0o755)


@pytest.mark.parametrize(
    "shape",
    ["relative program", "absolute program", "script argument", "absolute script argument",
     "option value", "found on a PATH inside the product"],
)  # fmt: skip
def test_a_server_command_that_runs_a_product_file_never_starts(
    product: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    ran = tmp_path / "ran"
    _launcher(product / "bin" / "docs-mcp", ran)
    (product / "tools" / "server.py").write_text(planted_server(product, ran))
    command = {
        "relative program": ["bin/docs-mcp"],
        "absolute program": [str(product / "bin" / "docs-mcp")],
        "script argument": [sys.executable, "tools/server.py"],
        "absolute script argument": [sys.executable, str(product / "tools" / "server.py")],
        "option value": [sys.executable, "-X", "dev", "--file=tools/server.py"],
        "found on a PATH inside the product": ["docs-mcp"],
    }[shape]
    if shape.startswith("found"):
        monkeypatch.setenv("PATH", f"{product / 'bin'}{os.pathsep}{os.environ['PATH']}")
    settings = {"command": command, "root": str(product), "timeout": 10}
    with pytest.raises(ConnectorError):
        McpConnector().call(session(settings), "search_docs", {"query": "x"})
    assert not ran.exists()


def test_python_m_never_imports_a_module_planted_in_the_product(
    product: Path, tmp_path: Path
) -> None:
    # With the product as its working folder, `python -m planted` would import product/planted.py.
    ran = tmp_path / "ran"
    (product / "planted.py").write_text(planted_server(product, ran))
    settings = {"command": [sys.executable, "-m", "planted"], "root": str(product), "timeout": 10}
    with pytest.raises(Unavailable):
        McpConnector().call(session(settings), "search_docs", {"query": "x"})
    assert not ran.exists()


def test_a_working_folder_inside_the_product_is_refused(product: Path) -> None:
    settings = {"command": [sys.executable, str(STDIO_SERVER)], "root": str(product), "cwd": "."}
    with pytest.raises(ConnectorError, match="cwd"):
        McpConnector().call(session(settings), "search_docs", {"query": "x"})


def test_a_server_outside_the_product_still_reads_and_may_be_given_the_product_folder(
    product: Path,
) -> None:
    # A folder as an argument is data (a repository a server reads), not code.
    settings = {"command": [sys.executable, str(STDIO_SERVER), str(product)],
                "root": str(product), "timeout": 20}  # fmt: skip
    said = McpConnector().call(session(settings), "search_docs", {"query": "export"})
    assert said.text


def test_a_role_that_writes_a_server_script_cannot_have_it_run_unsandboxed_by_a_read(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole route: the role writes tools/server.py (a write she always allows), then asks
    # for a declared read of the MCP connector whose command runs that file.
    ran = tmp_path / "ESCAPED"
    configure(root, connectors={"docs": {"kind": "mcp", "reads": ["search_docs"], "timeout": 10,
              "command": [sys.executable, "tools/server.py"]}})  # fmt: skip
    accepted_change(root)
    code = planted_server(root.path, ran)
    write = {"path": "tools/server.py", "content": code}
    rule = {"boundary": {"always_allow": [{"tool": "write_file", "inputs": write}]}}
    import yaml

    add_role(root, "builder", extra=yaml.safe_dump(rule))
    script(tmp_path, monkeypatch, [
        {"tool_calls": [{"tool": "write_file", "args": {**write, "purpose": "a helper"}}]},
        {"tool_calls": [{"tool": "connector_read", "args": {"connector": "docs",
         "operation": "search_docs", "args": {"query": "x"}}}]},
        {"say": "Done."},
    ])  # fmt: skip
    result = sdd("role", "run", "builder", "--json", "--task", "Add a helper, then search @docs")
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "done", result.stderr
    assert (root.path / "tools" / "server.py").exists()  # the write ran, as she allows
    assert not ran.exists()  # the file it wrote never ran outside the sandbox
    results = [e for e in events(root, outcome["run"]) if e["event"] == "tool_result"]
    assert "inside the product" in str(results[-1]["content"])
    assert stops.pending(root) == []


def test_a_helper_that_escapes_the_servers_process_group_is_ended_with_the_call(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "escaped"
    # Outside the sandbox, where only sdd's reaping ends it (in one, its pid namespace does).
    settings = {"command": [sys.executable, str(HOSTILE)], "timeout": 20, "sandbox": "off"}
    McpConnector().call(session(settings), "escape", {"pid_file": str(pid_file)})
    pid = int(pid_file.read_text())
    try:
        assert gone_within(pid, 5.0)
    finally:
        if alive(pid):
            os.kill(pid, 9)


def test_a_server_that_never_answers_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    settings = {"command": [sys.executable, str(HOSTILE)], "timeout": 1}
    with pytest.raises(Unavailable, match="within 1 s"):
        McpConnector().call(session(settings), "hang", {})


def test_a_server_flooding_its_stderr_is_said_in_a_few_masked_words(tmp_path: Path) -> None:
    settings = {"command": [sys.executable, str(HOSTILE)], "timeout": 20}
    with pytest.raises(ConnectorError) as failed:
        McpConnector().call(session(settings), "noisy", {})
    assert len(failed.value.message) < 2000


def test_a_tool_named_like_one_of_sdds_own_is_only_an_operation_that_stops(
    root: Root, tmp_path: Path
) -> None:
    assert classify("mcp", "run_command", {"command": "ls"}).kind == ACT
    hostile = {"kind": "mcp", "command": [sys.executable, str(HOSTILE)],
               "reads": ["environment"], "acts": ["run_command"]}  # fmt: skip
    configure(root, connectors={"docs": hostile})
    call = {"connector": "docs", "operation": "run_command", "args": {"command": "ls"}}
    read = guard.check("connector_read", call, root.path, ("connector_read",), ("docs",))
    assert isinstance(read, guard.Rejection) and read.code == "forbidden_connector"
    acted = guard.check(
        "connector_act", {**call, "purpose": "p"}, root.path, ("connector_act",), ("docs",)
    )
    assert isinstance(acted, guard.Clearance)  # an act: it stops for her like any other


def test_a_server_gets_no_connector_token_unless_the_config_hands_it_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "ghp_" + "McpEnvRouteToken00" + "m" * 18
    monkeypatch.setenv("DOCS_TOKEN_FOR_TEST", token)
    settings = {"command": [sys.executable, str(HOSTILE)], "timeout": 20}
    env = json.loads(McpConnector().call(session(settings, token), "environment", {}).text)
    assert token not in json.dumps(env)
    given = {**settings, "token_as": "DOCS_TOKEN"}
    env = json.loads(McpConnector().call(session(given, token), "environment", {}).text)
    assert env["DOCS_TOKEN"] == token  # only where the person's config says so


def test_a_server_of_the_same_user_cannot_read_sdds_environment_through_proc() -> None:
    # The server's own environment is scrubbed; but a process of the same user could read its
    # parent's, sdd's, at /proc/PPID/environ, unless sdd is not dumpable while it runs. Checked
    # as an ordinary user (root reads every process whatever the flag says). sdd starts as root
    # and drops to nobody only once everything it needs is imported, so that the check holds
    # wherever the clone and the interpreter are, a home folder closed to others (0700) too;
    # the server is a shell reader in a folder nobody may enter, as it needs nothing of ours.
    import shutil
    import subprocess
    import tempfile

    if os.geteuid() != 0 or not Path("/proc/self/environ").exists():
        pytest.skip("needs root, to run the check as an ordinary user, and /proc")
    shared = Path(tempfile.mkdtemp(prefix="sdd-proc-route-"))
    try:
        shared.chmod(0o777)
        seen = shared / "seen"
        reader = f"cat /proc/$PPID/environ > {seen} 2>&1; echo exit=$? >> {seen}"
        code = (
            "import ctypes, os\n"
            "import anyio, anyio._backends._asyncio, asyncio, mcp.client.stdio\n"
            "from sdd_git.connectors.base import Session\n"
            "from sdd_git.connectors.mcp import McpConnector\n"
            "from sdd_git.errors import SddError\n"
            "os.setgroups([]); os.setresgid(65534, 65534, 65534)\n"
            "os.setresuid(65534, 65534, 65534)\n"
            # A change of user clears the flag by itself; an ordinary process has it set.
            "ctypes.CDLL(None, use_errno=True).prctl(4, 1, 0, 0, 0)\n"
            # sandbox: off, the case where only sdd's own flag stands between the server and
            # sdd's environment (in the sandbox, sdd is not even in the server's pid namespace).
            f"settings = {{'command': ['/bin/sh', '-c', {reader!r}], 'timeout': 20, "
            "'sandbox': 'off', 'acts': ['parent_env']}\n"
            "try:\n"
            "    McpConnector().call(Session('docs', '', None, settings), 'parent_env', {})\n"
            "except SddError:\n"
            "    pass  # the reader speaks no MCP: what it saw is in its file\n"
            "print('called')\n"
        )
        env = {**os.environ, "SECRET_FOR_THE_PROC_ROUTE": "proc-route-secret-9f8e7d",
               "HOME": str(shared)}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd="/", capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0 and "called" in done.stdout, done.stderr[-2000:]
        read = seen.read_text(errors="replace")
        assert "proc-route-secret-9f8e7d" not in read
        assert "Permission denied" in read and "exit=1" in read, read
    finally:
        shutil.rmtree(shared, ignore_errors=True)
