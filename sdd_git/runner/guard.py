"""The guard: the first wall every tool call crosses, before the boundary and before it runs.

It rejects what no role may do by any route: an unknown or unoffered tool, a shell command that
reaches `sdd`, and a write to the person's record, git's own folder or any file that defines
roles, skills and their rules (paths resolved through `..`, symlinks and case first). It also
says when a shell command cannot be classified with certainty, or runs code (an interpreter, a
build or test runner, an extractor, a program of the product's); such a command is never allowed
by a saved rule unless a working sandbox holds it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.protected import (
    SOURCE_SCAN_LIMIT,
    Rejection,
    copies_allowed,
    inside,
    touches_allowed,
    write_path_problem,
    writes_allowed,
)
from sdd_git.sandbox.policy import RECORD_FOLDERS
from sdd_git.shellpolicy.decision import Decision
from sdd_git.shellpolicy.runs_code import BASH_BUILTINS, PRODUCT_PROGRAM_FOLDERS

# The tools' own declarations, as the plain table a hot path reads (a test holds it equal).
from sdd_git.toolnames import CHANGE_DRAFTS as _CHANGE_DRAFTS
from sdd_git.toolnames import CODE_HOST_TOOLS as _CODE_HOST_TOOLS
from sdd_git.toolnames import CONNECTOR_TOOLS, TOOL_CLASSES
from sdd_git.toolnames import READ_PATH_ARGS as _READ_PATH_ARGS
from sdd_git.toolnames import WRITE_PATH_ARGS as _WRITE_PATH_ARGS

# Rejection and the protected paths live in sdd_git.protected, which `sdd guard` shares; they
# are named here too for everyone who imports them from the runner's guard.
__all__ = ["PROTECTED_TOP", "Clearance", "Rejection", "check", "write_path_problem"]

PROTECTED_TOP = RECORD_FOLDERS  # the old name, kept for anyone who imports it
# How many entries of a folder copied whole are searched for role and skill files (read at each
# check, so a test can lower it).
_SOURCE_SCAN_LIMIT = SOURCE_SCAN_LIMIT


@dataclass(frozen=True)
class Clearance(Decision):
    """The guard lets the call on to the gate and the boundary, saying how sure it is."""


def check(
    tool: str,
    args: dict[str, Any],
    root: Path,
    offered: Iterable[str],
    connectors: Iterable[str] = (),
    change: str | None = None,
) -> Rejection | Clearance:
    """`connectors`: the connectors attached to the run (`@NAME` in its task); `change`: the
    change the run works on, the only one its drafts may write."""
    if tool not in TOOL_CLASSES:
        return Rejection("unknown_tool", f"there is no tool '{tool}' for roles")
    if tool in CONNECTOR_TOOLS and tool not in offered:
        # What is the person's by any route is named so, offered or not.
        verdict = _connector_call(tool, args, root, ())
        if isinstance(verdict, Rejection) and verdict.code == "forbidden_connector":
            return verdict
    if tool not in offered:
        return Rejection("not_offered", f"'{tool}' is not available in this run")
    if _holds_nul(args):
        return Rejection("bad_input", "an argument holds a NUL byte, which no path or command may")
    if tool in CONNECTOR_TOOLS:
        return _connector_call(tool, args, root, tuple(connectors))
    problem = _draft_problem(tool, args, change) or _path_problem(tool, args, root)
    if problem is not None:
        return problem
    if tool == "run_command":
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return Rejection("bad_input", "run_command needs a command")
        return _shell(root, command)
    return Clearance(certain=True)


def _draft_problem(tool: str, args: dict[str, Any], change: str | None) -> Rejection | None:
    if tool in _CHANGE_DRAFTS:
        named = str(args.get("change") or "").strip()
        if named != change:
            mine = f"this run works on {change}" if change else "this run works on no change"
            return Rejection(
                "other_change",
                f"{tool} names {named or 'no change'}, and {mine}; a draft stays in its run's "
                "own change",
            )
    return None


def _path_problem(tool: str, args: dict[str, Any], root: Path) -> Rejection | None:
    """Why the paths a file, git or code host tool is given are forbidden, or None."""
    if tool in _CODE_HOST_TOOLS:
        problem = _code_host_call(tool, args, root)
        if problem is not None:
            return problem
    for key in _WRITE_PATH_ARGS.get(tool, ()):
        problem = write_path_problem(root, args.get(key))
        if problem:
            return problem
    if tool == "git_commit":
        paths = args.get("paths")
        for path in paths if isinstance(paths, list) else []:
            problem = write_path_problem(root, path, whole_tree=True)  # "." commits it all
            if problem:
                return problem
    for key in _READ_PATH_ARGS.get(tool, ()):
        if args.get(key) not in (None, "") and inside(root, args.get(key)) is None:
            return Rejection("outside_root", "that path is outside the product folder")
    return None


def _shell(root: Path, command: str) -> Rejection | Clearance:
    from sdd_git.shellpolicy.walk import classify

    finding = classify(command)
    if finding.reaches_sdd:
        return Rejection(
            "person_command",
            f"sdd commands belong to the person; a role cannot run them by any route "
            f"({finding.reaches_sdd[0]})",
        )
    writes = writes_allowed(root, finding)
    if isinstance(writes, Rejection):
        return writes
    copies = copies_allowed(root, finding, scan_limit=_SOURCE_SCAN_LIMIT)
    if isinstance(copies, Rejection):
        return copies
    if finding.git_writes:
        return Rejection(
            "git_write",
            f"`git {finding.git_writes[0]}` changes the repository; commits, pushes and tags go "
            "through git_commit, git_push and git_tag, each named on a stop",
        )
    certain = finding.certain and writes and copies and touches_allowed(root, finding)
    reasons = list(finding.runs_code)
    for program in finding.programs:
        reason = _product_program(root, program)
        if reason is not None and reason not in reasons:
            reasons.append(reason)
    return Clearance(certain=certain, runs_code=bool(reasons), reasons=tuple(reasons))


def _product_program(root: Path, program: str) -> str | None:
    """A command that runs a program of the product's which the classifier could not see from
    the words alone: an absolute path into the product folder, or a bare name that the product
    provides (installed packages, its virtualenv, its scripts, or a PATH entry inside it)."""
    base = root.resolve()
    if program.startswith("/"):
        resolved = Path(program).resolve()
        if resolved == base or base in resolved.parents:
            return f"{program} is a program in the product folder"
        return None
    if "/" in program or program in BASH_BUILTINS or program in ("", ".", ".."):
        return None  # relative paths were counted already; bash runs its builtins itself
    folders = [base / folder for folder in PRODUCT_PROGRAM_FOLDERS]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        # An empty or relative PATH entry is the folder the command runs in: the product.
        folder = (base / entry).resolve() if entry else base
        if (folder == base or base in folder.parents) and folder not in folders:
            folders.append(folder)
    for folder in folders:
        if os.path.lexists(folder / program):
            where = folder.relative_to(base).as_posix()
            return f"{program} is a program in the product folder ({where}/{program})"
    return None


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(v) for v in value)
    return False


# -- connectors --------------------------------------------------------------------------------


def _connector_call(
    tool: str, args: dict[str, Any], root: Path, attached: tuple[str, ...]
) -> Rejection | Clearance:
    """A connector call, classified by the one operation table before anything runs. What is
    the person's by any route (a release, an acceptance, a QA result, a stage, a change pack, a
    person command of sdd passed on) is rejected with `forbidden_connector`, also when a saved
    rule names it: the guard stands before the boundary. So is an act through the read tool,
    and a post to a channel through the act tool: a role never posts, it drafts."""
    from sdd_git.connectors.base import ACT, DRAFT, FORBIDDEN
    from sdd_git.connectors.config import load_connectors
    from sdd_git.connectors.operations import TABLE, classify
    from sdd_git.errors import SddError
    from sdd_git.root import Root

    named = _connector_args(tool, args)
    if isinstance(named, Rejection):
        return named
    name, operation, given = named
    try:
        config = load_connectors(Root(root)).get(name)
    except SddError as exc:
        return Rejection("bad_config", f"the connectors' config cannot be read: {exc.message}")
    kind = config.table_kind if config is not None else name
    verdict = classify(kind, operation, given, config.reads if config is not None else ())
    if verdict.kind == FORBIDDEN:
        return Rejection(
            "forbidden_connector",
            f"{operation} on {name} is the person's by any route: {verdict.why}",
        )
    where_x = _address_on_x(given)
    if where_x is not None:
        # A fetch or browse tool of an MCP server given an address on X would read X.
        return Rejection(
            "x_refused", f"'{where_x}' is an address on X, the social network; no connector "
            "reads or posts on X",
        )  # fmt: skip
    if config is None:
        return Rejection("unknown_connector", f"no connector '{name}' is configured")
    rows = TABLE.get(kind)
    if rows is not None and operation not in rows:
        return Rejection(
            "unknown_operation",
            f"{name} ({kind}) has no operation '{operation}'; it has: {', '.join(rows)}",
        )
    if config.kind == "mcp" and operation not in (*config.reads, *config.acts):
        from sdd_git.connectors.mcp_tools import not_offered

        return Rejection(
            "unknown_operation", not_offered(name, operation, config.reads, config.acts)
        )
    if tool == "connector_read" and verdict.kind == ACT:
        return Rejection(
            "forbidden_connector",
            f"{operation} on {name} acts as the person, and a read never acts; it goes through "
            "connector_act, which stops for the person",
        )
    if tool == "connector_act" and verdict.kind == DRAFT:
        return Rejection(
            "forbidden_connector",
            f"{operation} on {name} would post as the person, and a role never posts; "
            "connector_read keeps it as a draft she sends herself",
        )
    if name not in attached:
        return Rejection(
            "connector_not_attached",
            f"the connector {name} is not attached to this run; the person attaches one by "
            f"naming it in the task (@{name})",
        )
    if config.kind == "mcp" and tool == "connector_act":
        listed = _mcp_listing(root, name, operation)
        if listed is not None:
            return listed
    known = rows.get(operation) if rows is not None else None
    needed = [a for a in known.args if given.get(a) in (None, "")] if known is not None else []
    if known is not None and needed:
        return Rejection(
            "bad_input",
            f"{operation} on {name} needs {', '.join(needed)} in 'args' "
            f"(it takes {', '.join(known.args + known.optional)})",
        )
    return Clearance(certain=True)


def _connector_args(
    tool: str, args: dict[str, Any]
) -> tuple[str, str, Mapping[str, Any]] | Rejection:
    """The connector's name, the operation and its arguments, as a connector call names them."""
    name, operation, given = args.get("connector"), args.get("operation"), args.get("args")
    if not isinstance(name, str) or not name.strip():
        return Rejection("bad_input", f"{tool} needs 'connector', the connector's name")
    if not isinstance(operation, str) or not operation.strip():
        return Rejection("bad_input", f"{tool} needs 'operation', as the service names it")
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        return Rejection("bad_input", f"{tool}: 'args' must be an object of arguments")
    return name.strip(), operation.strip(), given


def _mcp_listing(root: Path, name: str, operation: str) -> Rejection | None:
    """An MCP act, before it stops for her: the server's own listing of the tool may make it
    hers alone (its description says it makes a release, say), or show there is no such tool.
    The call lists the tools again, in its own session, before it is sent."""
    from sdd_git.connectors.mcp import McpConnector
    from sdd_git.connectors.operations import forbidden_tool
    from sdd_git.connectors.registry import load_connector
    from sdd_git.errors import SddError
    from sdd_git.root import Root

    try:
        connector, session = load_connector(Root(root), name)
        tools = connector.tools(session) if isinstance(connector, McpConnector) else None
    except SddError as exc:
        return Rejection(
            "connector_unavailable",
            f"{name}: its tools could not be listed, so {operation} cannot be checked and was "
            f"not asked for: {exc.message}",
        )
    if tools is None:
        return None
    found = next((t for t in tools if t.name == operation), None)
    if found is None:
        return Rejection("unknown_operation", f"the MCP server {name} lists no tool '{operation}'")
    why = forbidden_tool(found.name, found.description)
    if why is None:
        return None
    return Rejection("forbidden_connector", f"{operation} on {name} is the person's: {why}")


_ADDRESS_KEYS = ("url", "uri", "link", "href", "endpoint", "address", "site", "host", "domain",
                 "page", "source", "target", "path", "resource", "location")  # fmt: skip


def _address_on_x(value: Any, key: str = "") -> str | None:
    """The argument that is an address on X (under a key that names an address), or None."""

    from sdd_git.connectors.config import on_x

    if isinstance(value, str):
        named = key.lower()
        return key if any(word in named for word in _ADDRESS_KEYS) and on_x(value) else None
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _address_on_x(v, str(k))
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for item in value:
            found = _address_on_x(item, key)
            if found is not None:
                return found
    return None


def _code_host_call(tool: str, args: dict[str, Any], root: Path) -> Rejection | None:
    """open_pull_request, merge_pull_request and deploy go through connectors too: what no
    connector may do, no route to one may do (a deploy job given `sdd complete`, say)."""
    from sdd_git.connectors.operations import forbidden_reason

    reason = forbidden_reason(tool, args)
    if reason is None and tool == "deploy" and isinstance(args.get("target"), str):
        reason = _deploy_reason(root, args["target"])
    if reason is None:
        return None
    return Rejection("forbidden_connector", f"{tool} is the person's here: {reason}")


def _deploy_reason(root: Path, target: str) -> str | None:
    from sdd_git.connectors.base import FORBIDDEN
    from sdd_git.connectors.config import deploy_operation, deploy_targets, load_connectors
    from sdd_git.connectors.operations import classify
    from sdd_git.errors import SddError
    from sdd_git.root import Root

    try:
        found = deploy_targets(Root(root)).get(target)
        config = load_connectors(Root(root)).get(found.connector) if found else None
    except SddError:
        return None  # the tool says what is wrong with the config
    if found is None:
        return None
    kind = config.table_kind if config is not None else found.connector
    operation = deploy_operation(found, kind)
    verdict = classify(kind, operation, found.args)
    return verdict.why if verdict.kind == FORBIDDEN else None
