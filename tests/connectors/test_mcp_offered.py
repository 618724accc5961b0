"""MCP tools she listed, and none that is hers alone (issue 21, part 9), against the real test
MCP server (tests/connectors/mcp_servers/) over stdio.

- A tool is offered only when her confirmed config lists it under `reads:` or `acts:`; one in
  neither is not offered, and a call that names it is refused as an unknown operation.
- A listed act whose name (`gh_rel_new`) or own description ("Publish a new version") says it
  makes a release is `forbidden_connector`: the run does not stop for her, and the server never
  receives the call (the tools leave a mark when called; the server runs with `sandbox: off`
  so that mark would be seen).
- A server command that runs a file of the product through `sh -c`, `env`, `nice`, `timeout`
  or `exec` is refused before it starts."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import guard, stops
from tests.conftest import SddRunner
from tests.connectors.core_support import configure, file_keyring
from tests.runner.scripted import accepted_change, add_role, events, script, transcript

pytest.importorskip("mcp")

from sdd_git.connectors.base import ConnectorError, Refused, Session
from sdd_git.connectors.mcp import McpConnector
from tests.connectors.test_mcp import READS, STDIO_SERVER, session, stdio

__all__ = ["file_keyring"]

SERVER = [sys.executable, str(STDIO_SERVER)]


def docs(**more: Any) -> dict[str, Any]:
    """The docs server as she configures it: sandbox off, so a mark a tool leaves is seen."""
    return {"kind": "mcp", "command": SERVER, "timeout": 20, "sandbox": "off", **more}


def act(operation: str, **args: Any) -> dict[str, Any]:
    return {"connector": "docs", "operation": operation, "args": args, "purpose": "ship it"}


# --- offered only where she listed it ------------------------------------------------------------


def test_a_tool_her_config_does_not_list_is_not_offered(tmp_path: Path) -> None:
    settings = stdio(acts=["rename_page"])
    operations = McpConnector(session(settings)).operations()
    assert set(operations) == {*READS, "rename_page"}  # the server lists 18 tools
    pid_file = tmp_path / "pid"
    with pytest.raises(Refused) as refused:
        McpConnector().call(session(stdio(pid_file, acts=["rename_page"])), "delete_page", {})
    assert "offers only the tools .sdd/config.yaml lists under connectors.docs.reads" in str(
        refused.value
    )
    assert not pid_file.exists()  # the server was never started


def test_calling_a_tool_she_did_not_list_is_rejected_as_an_unknown_operation(root: Root) -> None:
    configure(root, connectors={"docs": docs(reads=READS, acts=["rename_page"])})
    for tool, operation in (("connector_act", "delete_page"), ("connector_read", "page_stats")):
        verdict = guard.check(tool, act(operation, page="x"), root.path, (tool,), ("docs",))
        assert isinstance(verdict, guard.Rejection), (tool, operation)
        assert verdict.code == "unknown_operation"
        assert f"'{operation}' is not one of them" in verdict.message
    listed = guard.check(
        "connector_act", act("rename_page", page="a", to="b"), root.path, ("connector_act",),
        ("docs",),
    )  # fmt: skip
    assert isinstance(listed, guard.Clearance)  # what she listed as an act stops for her


# --- a release under another name ----------------------------------------------------------------


def test_gh_rel_new_listed_as_an_act_is_refused_and_the_server_never_receives_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The route: "Create a GitHub release", named gh_rel_new, ran after one ordinary stop.
    marker = tmp_path / "released"
    configure(root, connectors={"docs": docs(reads=READS, acts=["gh_rel_new"])})
    accepted_change(root)
    add_role(root, "builder")
    call = act("gh_rel_new", tag="v1.0", marker=str(marker))
    script(tmp_path, monkeypatch, [
        {"tool_calls": [{"tool": "connector_act", "args": call}]},
        {"say": "I could not release."},
    ])  # fmt: skip
    ran = sdd("role", "run", "builder", "--json", "--task", "Release v1.0 with @docs")
    outcome = json.loads(ran.stdout)
    assert outcome["status"] == "done", ran.stderr
    assert stops.pending(root) == []  # she is not asked: it is hers alone
    told = transcript(tmp_path)[0]["messages"][1]["content"]  # the tools the role is offered
    assert "docs (an MCP server): its tools that the person offers, and no other" in told
    assert "acts, each stops for her (connector_act): gh_rel_new" in told
    [rejected] = [e for e in events(root, outcome["run"]) if e["event"] == "rejected"]
    assert rejected["reason"] == "forbidden_connector"
    assert "makes or changes a release" in rejected["message"]
    assert not marker.exists()
    # The connector's own wall, for any other route to it:
    with pytest.raises(Refused, match="release"):
        McpConnector().call(
            session(stdio(acts=["gh_rel_new"], sandbox="off")),
            "gh_rel_new",
            {"tag": "v1.0", "marker": str(marker)},
        )
    assert not marker.exists()


def test_a_tool_whose_description_alone_makes_a_release_is_refused_before_the_stop(
    root: Root, tmp_path: Path
) -> None:
    # ship_it: "Publish a new version of the app"; only the server's listing says so.
    marker = tmp_path / "shipped"
    configure(root, connectors={"docs": docs(reads=READS, acts=["ship_it"])})
    verdict = guard.check(
        "connector_act", act("ship_it", version="2", marker=str(marker)), root.path,
        ("connector_act",), ("docs",),
    )  # fmt: skip
    assert isinstance(verdict, guard.Rejection)
    assert verdict.code == "forbidden_connector"
    assert "as its own description says" in verdict.message
    # Listed as a read, it runs with no stop: the call lists the tools in its own session and
    # refuses it before the call is sent.
    for listed in ({"reads": ["ship_it"]}, {"acts": ["ship_it"]}):
        with pytest.raises(Refused, match="makes or changes a release"):
            McpConnector().call(
                Session("docs", "", None, {"command": SERVER, "sandbox": "off", **listed}),
                "ship_it",
                {"version": "2", "marker": str(marker)},
            )
    assert not marker.exists()


def test_ordinary_tools_she_listed_still_run() -> None:
    connector = McpConnector()
    offered = session(stdio(acts=["rename_page"]))
    assert connector.call(offered, "search_docs", {"query": "x"}).text.startswith("3 pages")
    assert connector.call(offered, "rename_page", {"page": "a", "to": "b"}).text == "renamed a to b"


# --- a server command that runs a product file, however wrapped ---------------------------------


def _planted(product: Path, ran: Path) -> Path:
    """A server launcher a role could have written: it leaves a mark, then serves."""
    launcher = product / "tools" / "x.sh"
    launcher.parent.mkdir(parents=True, exist_ok=True)
    launcher.write_text(f"#!/bin/sh\ntouch '{ran}'\nexec '{sys.executable}' '{STDIO_SERVER}'\n")
    launcher.chmod(0o755)
    (product / "planted.py").write_text(f"open({str(ran)!r}, 'w').write('ran')\n")
    return launcher


@pytest.mark.parametrize(
    "shape",
    [
        "command sh, args -c ./tools/x.sh",
        "sh -c with the script's own arguments",
        "bash -lc exec",
        "env FOO=1 ./tools/x.sh",
        "env -i FOO=1 sh -c",
        "env -S",
        "env -C into the product, python -m",
        "nice timeout exec",
        "sh -c cd into the product",
        "sh -c a variable naming it",
        "sh -c a command substitution",
    ],
)
def test_a_server_command_that_runs_a_product_file_through_a_wrapper_never_starts(
    tmp_path: Path, shape: str
) -> None:
    product = tmp_path / "product"
    ran = tmp_path / "ran"
    launcher = _planted(product, ran)
    inner = f"{launcher} --stdio"
    settings: dict[str, Any] = {
        "command sh, args -c ./tools/x.sh": {"command": "sh", "args": ["-c", "./tools/x.sh"]},
        "sh -c with the script's own arguments": {"command": ["sh", "-c", inner]},
        "bash -lc exec": {"command": ["bash", "-lc", f"exec {inner}"]},
        "env FOO=1 ./tools/x.sh": {"command": "env FOO=1 ./tools/x.sh"},
        "env -i FOO=1 sh -c": {"command": ["env", "-i", "FOO=1", "sh", "-c", inner]},
        "env -S": {"command": ["env", "-S", inner]},
        "env -C into the product, python -m": {
            "command": ["env", "-C", str(product), sys.executable, "-m", "planted"]
        },
        "nice timeout exec": {
            "command": ["nice", "-n", "5", "timeout", "-k", "5", "60", "sh", "-c", f"exec {inner}"]
        },
        "sh -c cd into the product": {
            "command": ["sh", "-c", f"cd {product} && exec {sys.executable} -m planted"]
        },
        "sh -c a variable naming it": {
            "command": ["sh", "-c", "exec $SERVER --stdio"],
            "env": {"SERVER": str(launcher)},
        },
        "sh -c a command substitution": {"command": ["sh", "-c", f"exec $(printf %s {launcher})"]},
    }[shape]
    given = {**settings, "root": str(product), "timeout": 10, "sandbox": "off"}
    with pytest.raises(ConnectorError) as refused:
        McpConnector().call(Session("docs", "", None, {**given, "reads": READS}), "search_docs", {})
    said = {"sh -c a command substitution": "holds a shell script sdd cannot read (it computes"}
    assert said.get(shape, "the MCP server's command runs a file inside the product") in (
        refused.value.message
    )
    assert not ran.exists()


def test_a_wrapped_server_outside_the_product_still_runs(tmp_path: Path) -> None:
    product = tmp_path / "product"
    product.mkdir()
    (product / "README.md").write_text("docs\n")
    wrapped = ["env", "LOG=1", "nice", "-n", "1", "sh", "-c", f"exec {' '.join(SERVER)}"]
    # No shell expands a word of an argv: a glob there is the server's own pattern.
    patterned = [*SERVER, "--pattern=*.md"]
    for command in (wrapped, patterned):
        settings = {"command": command, "root": str(product), "timeout": 20, "reads": READS}
        said = McpConnector().call(
            Session("docs", "", None, settings), "search_docs", {"query": "x"}
        )
        assert said.text.startswith("3 pages match"), command


def _planted_code(product: Path, ran: Path) -> dict[str, Path]:
    """Files a role could have written: each leaves a mark when something runs it."""
    made = {
        "planted.js": f"require('fs').writeFileSync({json.dumps(str(ran))}, 'ran')\n",
        "planted.pl": f"open(my $f, '>', {json.dumps(str(ran))}); print $f 'ran';\n1;\n",
        "lib/Planted.pm": f"package Planted; open(my $f, '>', {json.dumps(str(ran))}); 1;\n",
    }
    paths = {}
    for name, text in made.items():
        path = product / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths[name] = path
    return paths


@pytest.mark.parametrize(
    "shape",
    [
        "node -e requiring a product file",
        "perl -le doing a product file",
        "env NODE_OPTIONS=--require",
        "config env PERL5LIB as a list",
        "sh -c export PERL5LIB",
        "config env LD_PRELOAD",
    ],
)
def test_code_or_a_variable_naming_a_product_path_never_starts_the_server(
    tmp_path: Path, shape: str
) -> None:
    if shutil.which("node") is None or shutil.which("perl") is None:
        pytest.skip("node and perl are needed to run these server commands for real")
    product = tmp_path / "product"
    ran = tmp_path / "ran"
    files = _planted_code(product, ran)
    js, pl, lib = str(files["planted.js"]), str(files["planted.pl"]), str(product / "lib")
    serve = [*SERVER]
    settings: dict[str, Any] = {
        "node -e requiring a product file": {"command": ["node", "-e", f"require('{js}')"]},
        "perl -le doing a product file": {"command": ["perl", "-le", f"do '{pl}'"]},
        "env NODE_OPTIONS=--require": {
            "command": ["env", f"NODE_OPTIONS=--require={js}", "node", "-e", "1"]
        },
        "config env PERL5LIB as a list": {
            "command": ["perl", "-MPlanted", "-e", "1"], "env": {"PERL5LIB": f"/opt/none:{lib}"}
        },
        "sh -c export PERL5LIB": {
            "command": ["sh", "-c", f"export PERL5LIB={lib}; exec perl -MPlanted -e 1"]
        },
        "config env LD_PRELOAD": {"command": serve, "env": {"LD_PRELOAD": str(product / "x.so")}},
    }[shape]  # fmt: skip
    given = {**settings, "root": str(product), "timeout": 10, "sandbox": "off", "reads": READS}
    with pytest.raises(ConnectorError) as refused:
        McpConnector().call(Session("docs", "", None, given), "search_docs", {})
    assert not ran.exists()  # the product's code never ran
    assert "the MCP server's command runs a file inside the product" in refused.value.message
    assert str(product) in refused.value.message


def test_values_and_folders_that_name_no_product_file_still_start_the_server(
    tmp_path: Path,
) -> None:
    product = tmp_path / "product"
    (product / "docs").mkdir(parents=True)
    # A word that is also a folder of the product is a value; the product named as a plain
    # argument is data the server reads.
    env = {"LOG_LEVEL": "warning", "SECTION": "docs", "CACHE": str(tmp_path / "cache")}
    commands = (
        [*SERVER, "--repo", str(product)],
        ["env", "PYTHONDONTWRITEBYTECODE=1", *SERVER],
        ["sh", "-c", f"LOG=1 exec {' '.join(SERVER)}"],
    )
    for command in commands:
        settings = {"command": command, "env": env, "root": str(product), "timeout": 20,
                    "reads": READS}  # fmt: skip
        said = McpConnector().call(
            Session("docs", "", None, settings), "search_docs", {"query": "x"}
        )
        assert said.text.startswith("3 pages match"), command
