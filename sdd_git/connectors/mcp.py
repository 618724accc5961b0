"""Any MCP server as a connector, through the official `mcp` client (the optional extra
`pip install 'sdd-git[mcp]'`), over stdio or streamable HTTP.

    connectors:
      docs: {kind: mcp, command: [npx, -y, "@acme/docs-mcp"], env: {DOCS_TOKEN: $DOCS_TOKEN},
             reads: [search_docs, get_page], acts: [rename_page]}
      tracker: {kind: mcp, url: "https://mcp.acme.dev/mcp", token_env: TRACKER_TOKEN, timeout: 60}

What a tool *is* is never the server's word (`mcp_tools`): a tool is offered only when her
confirmed config lists it, a read under `reads`, an act that stops under `acts`, whatever its
annotations say; and one whose name or description is the person's (a release, an acceptance, a
QA result, a stage move) is refused, as are the calls `operations.forbidden_reason` refuses (an
sdd person command in an argument).

A server is started by the first call of a run that reaches it, and its initialized session is
kept for the rest of the run (`mcp_session`): later calls of the run cost a few milliseconds, not
the ~0.9 s of a start. The session is closed, and the server and all it started are ended and
reaped, when the run ends: done, stopped for her (`sdd allow` resumes in another process, with a
session of its own), failed, Ctrl-C, or at interpreter exit as a last resort. Outside a run (a
person command), a call starts the server and stops it, as it always did. Each call must finish
within `timeout` seconds (30 by default); the tools are listed again before each call, in the
same session, so that a description the server changes mid-run is still read before the call
is sent. A server that died between two calls is started again, once, by the next one; if that
fails too, the error says so.

A stdio server runs in the strongest sandbox the machine allows (`sdd_git.sandbox.server`: the
network on, the product read-only, a private HOME and /tmp, credential files hidden), unless her
confirmed config says `sandbox: off` for it; outside one, every listing, stop and result says so
in words (`mcp_sandbox.placement`). Its environment is built from nothing: PATH, HOME and LANG,
and only the variables the config names (`env`), so no secret of sdd's own environment reaches
it. Its stderr is kept aside, and its last lines (masked) say why it failed when it does. A
streamable HTTP server gets the person's token as `Authorization: Bearer` when the connector has
one (`token_env` or `sdd connect`).

The `mcp` package (and anyio) is imported only inside functions, here and in `mcp_session`,
never when this module is imported: `sdd --help`, `sdd role list` and the rest of sdd do not pay
its ~0.7 s."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from sdd_git.childenv import CHILD_ENV  # all a stdio server gets of sdd's own environment
from sdd_git.connectors.base import (
    ConnectorError,
    NotSignedIn,
    Operation,
    Refused,
    Result,
    Session,
    Unavailable,
)
from sdd_git.connectors.mcp_answer import rendered
from sdd_git.connectors.mcp_command import inside, path_outside, refuse_product_code
from sdd_git.connectors.mcp_sandbox import placement
from sdd_git.connectors.mcp_session import TIMEOUT_SECONDS, Target, reach, snippet
from sdd_git.connectors.mcp_tools import McpTool, listed, not_offered, operation_of, refusal
from sdd_git.connectors.operations import forbidden_reason

__all__ = ["CHILD_ENV", "McpConnector", "McpTool", "operation_of"]

_MAX_PAGES = 50  # of a tool listing: a server that never stops paging is cut off
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REFERENCE = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_SECRET_NAME = re.compile(r"token|secret|passw|api_?key|credential|private_?key|auth", re.I)

T = TypeVar("T")


class McpConnector:
    """One configured MCP server. Built with a session (`McpConnector(session)`), `operations()`
    lists the tools her config offers as operations; built bare (as the registry does), it
    knows none until a call names the server (`operations_for(session)`)."""

    name = "mcp"
    needs_token = False  # a token is used when the config names one; many servers need none

    def __init__(
        self, session: Session | None = None, reads: Iterable[str] = (), acts: Iterable[str] = ()
    ) -> None:
        self._session = session
        self._reads, self._acts = tuple(reads), tuple(acts)
        self._listed: dict[str, Operation] | None = None

    def operations(self) -> Mapping[str, Operation]:
        if self._session is None:
            return {}
        if self._listed is None:
            self._listed = self.operations_for(self._session, self._reads, self._acts)
        return self._listed

    def operations_for(
        self, session: Session, reads: Iterable[str] = (), acts: Iterable[str] = ()
    ) -> dict[str, Operation]:
        """The server's tools that her config offers (`reads`, `acts`), as operations; never
        classified by the tools' own annotations, and none that the config does not list."""
        offered_reads = (*listed(session.settings, "reads"), *reads)
        offered_acts = (*listed(session.settings, "acts"), *acts)
        found = {}
        for tool in self.tools(session):
            operation = operation_of(tool, session.name, offered_reads, offered_acts)
            if operation is not None:
                found[tool.name] = operation
        return found

    def tools(self, session: Session) -> list[McpTool]:
        """The server's tools, as it lists them (all pages)."""
        return _run(session, "list its tools", _listing)[0]

    def call(self, session: Session, operation: str, args: Mapping[str, Any]) -> Result:
        """Call one tool her config offers. The dispatch has classified it and stopped for an
        act; here again a tool the config does not list, or whose name or description is the
        person's, is refused, so no route reaches it. The description is the one the server
        lists now: the tools are listed before every call, in the session the call is sent on
        (kept for the run or not), so a server cannot pass the check at its start and rename
        a tool's purpose later."""
        reads, acts = listed(session.settings, "reads"), listed(session.settings, "acts")
        if operation not in reads and operation not in acts:
            raise Refused(f"{session.name}: {not_offered(session.name, operation, reads, acts)}")
        reason = forbidden_reason(operation, args)
        if reason is not None:
            raise Refused(f"{session.name}: {reason}")

        async def calling(client: Any) -> dict[str, Any]:
            why = refusal(await _listing(client), operation, session.name)
            if why is not None:
                raise Refused(f"{session.name}: {why}")
            return _wire(await client.call_tool(operation, dict(args)))

        answer, restarted = _run(session, f"run {operation}", calling)
        content = [block for block in answer.get("content") or () if isinstance(block, dict)]
        text = rendered(content, answer.get("structuredContent"))
        # Where the server ran is said with its answer, whatever it is: the role reads it, and
        # the person too, in the run's log and conversation.
        where = placement(session.name, session.settings)
        if answer.get("isError"):  # the tool's own failure, in its words (never a Missing)
            raise Refused(
                f"{session.name}: tool {operation} answered with an error: "
                f"{session.masked(snippet(text)) or '(no words)'}"
                + (f"; {where.warning}" if where.outside else "")
            )
        data: dict[str, Any] = {
            "server": session.name,
            "tool": operation,
            "content": [str(block.get("type", "?")) for block in content],
        }
        if where.outside:
            text = f"[note: {where.warning}]\n{text}"
        if restarted:  # what the server held in memory for this run is gone: said, not hidden
            text = (
                f"[note: the MCP server {session.name} had stopped since the last call "
                f"({session.masked(restarted)}) and was started again for this one]\n{text}"
            )
            data = {**data, "restarted": True}
        return Result(text, data)


async def _listing(client: Any) -> list[McpTool]:
    """The server's tools, as it lists them (all pages)."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = _wire(await _list_tools(client, cursor))
        tools.extend(page.get("tools") or ())
        cursor = page.get("nextCursor")
        if not cursor:
            break
    return [McpTool.from_wire(wire) for wire in tools]


# -- reaching the server ------------------------------------------------------------------------


def _target(session: Session) -> Target:
    settings, key = session.settings, f"connectors.{session.name}"
    example = f"{key}: {{kind: mcp, command: [docs-mcp, --stdio]}} or {{kind: mcp, url: ...}}"
    timeout = settings.get("timeout", TIMEOUT_SECONDS)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConnectorError(
            f"{key}.timeout must be a number of seconds, not {timeout!r}", hint=f"{key}.timeout: 60"
        )
    command = settings.get("command")
    url = settings.get("url") or session.base_url or ""
    if command is not None and settings.get("url"):
        raise ConnectorError(f"{key}: give command or url, not both", hint=example)
    if command is None:
        if not isinstance(url, str) or not re.match(r"^https?://[^/\s]+", url):
            raise ConnectorError(
                f"{key}: an MCP server needs command (a program run over stdio) or url "
                f"(streamable HTTP), not {url!r}"
                if url
                else f"{key}: an MCP server needs command (a program run over stdio) or url "
                "(streamable HTTP)",
                hint=example,
            )
        if "@" in url.split("//", 1)[1].split("/", 1)[0]:
            raise ConnectorError(
                f"{key}.url holds a sign-in; tokens never live in the config",
                hint=f"name a variable instead ({key}.token_env: VAR), or run: sdd connect "
                f"{session.name}",
            )
        headers = {"Authorization": f"Bearer {session.token}"} if session.token else {}
        return Target(session.name, url=url, headers=headers, timeout=float(timeout))
    if isinstance(command, str):
        command = shlex.split(command)
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, str) and part for part in command)
    ):
        raise ConnectorError(f"{key}.command must be a list of words (argv)", hint=example)
    extra = settings.get("args", [])  # `command` + `args`, as other MCP clients write them
    if not isinstance(extra, list) or not all(isinstance(part, str) for part in extra):
        raise ConnectorError(f"{key}.args must be a list of words", hint=example)
    command = [*command, *extra]
    where = placement(session.name, settings)  # a wrong `sandbox:` is refused before it starts
    product = _product(settings)
    env = _child_env(session, key)
    if product is not None:
        env["PATH"] = path_outside(env.get("PATH", ""), product)
    cwd = _folder(settings, key)
    if product is not None and cwd is not None and inside(Path(cwd), product):
        raise ConnectorError(
            f"{key}.cwd: {cwd} is inside the product, where a role can write; the server would "
            "load code from it (python -m, npx) with the network and whatever the config gives it",
            hint=f"leave {key}.cwd out (the server starts in an empty folder of its own), or "
            "name a folder outside the product",
        )
    program = command[0]
    base = cwd or (str(product) if product is not None else None)
    if "/" in program and not Path(program).is_absolute() and base:
        program = str(Path(base) / program)
    found = shutil.which(program, path=env.get("PATH", "")) if "/" not in program else program
    if found and product is not None:
        # Never code a role could have written: it would run with the server's reach, and
        # with all her rights where the server runs outside the sandbox.
        refuse_product_code(session.name, key, product, base, found, command[1:], env)
    if not found or not os.access(found, os.X_OK):
        raise Unavailable(
            f"{session.name}: cannot start the MCP server: {command[0]!r} is not a program "
            f"on its PATH ({snippet(env.get('PATH', ''), 120)})",
            hint=f"{key}.command: [/full/path/to/{Path(command[0]).name}, ...]",
        )
    return Target(
        session.name,
        argv=tuple(command),
        program=found,
        env=env,
        cwd=cwd,
        timeout=float(timeout),
        product=product,
        placement=where,
    )


def _product(settings: Mapping[str, Any]) -> Path | None:
    root = settings.get("root")
    return Path(root).resolve() if isinstance(root, str) and root else None


def _folder(settings: Mapping[str, Any], key: str) -> str | None:
    """Where the server runs: `cwd` (relative to the repository, and outside the product),
    else None: an empty folder of the call's own."""
    root, cwd = settings.get("root"), settings.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConnectorError(f"{key}.cwd must be a folder, not {cwd!r}")
    base = Path(root) if isinstance(root, str) and root else None
    if cwd:
        folder = Path(cwd) if base is None else base / cwd
    else:
        return None
    if not folder.is_dir():
        raise ConnectorError(f"{key}.cwd: {folder} is not a folder")
    return str(folder)


def _child_env(session: Session, key: str) -> dict[str, str]:
    """The stdio server's whole environment: the allowlist (childenv.py) and what the config names.

    `env: {VAR: value}` sets a plain value; `env: {VAR: $NAME}` passes sdd's own NAME (so a
    secret is named in the config, never written there); `env: [NAME, ...]` passes those as they
    are; `token_as: VAR` gives the connector's token (keyring or token_env) in VAR."""
    env = {name: os.environ[name] for name in CHILD_ENV if name in os.environ}
    named = session.settings.get("env") or {}
    if isinstance(named, list):
        named = {str(name): f"${name}" for name in named}
    if not isinstance(named, Mapping):
        raise ConnectorError(
            f"{key}.env must map variables to values, or list variables to pass on",
            hint=f"{key}.env: {{DOCS_TOKEN: $DOCS_TOKEN, LOG_LEVEL: warning}}",
        )
    for variable, value in named.items():
        variable = str(variable)
        if not _VARIABLE.match(variable):
            raise ConnectorError(f"{key}.env: {variable!r} is not a variable name")
        reference = _REFERENCE.match(str(value)) if isinstance(value, str) else None
        if reference is not None:
            source = reference.group(1) or reference.group(2)
            if source not in os.environ:
                raise NotSignedIn(
                    f"{key}.env.{variable} takes ${source}, which is not set",
                    hint=f"export {source}=... before running sdd",
                )
            env[variable] = os.environ[source]
            continue
        if _SECRET_NAME.search(variable) and value not in (None, ""):
            raise ConnectorError(
                f"{key}.env.{variable} would put a secret into the config, which is committed",
                hint=f"name the variable that holds it instead: {key}.env.{variable}: $VAR",
            )
        env[variable] = "" if value is None else str(value)
    token_as = session.settings.get("token_as")
    if token_as is not None:
        if not isinstance(token_as, str) or not _VARIABLE.match(token_as):
            raise ConnectorError(f"{key}.token_as must name a variable, not {token_as!r}")
        if not session.token:
            raise NotSignedIn(
                f"{session.name}: no token to give the server in {token_as}",
                hint=f"sdd connect {session.name}, or set {key}.token_env",
            )
        env[token_as] = session.token
    return env


def _run(session: Session, doing: str, work: Callable[[Any], Awaitable[T]]) -> tuple[T, str]:
    """`work(client)` on the server's session (the run's, or one for this call), within the
    timeout; every failure on the way becomes one of the connector errors. Synchronous, as the
    Protocol is: the SDK's asynchronous client runs in an event loop of its own. Gives back
    why the server was started again for this call, when it had to be (else "")."""
    target = _target(session)
    if importlib.util.find_spec("mcp") is None:
        raise Unavailable(
            f"{session.name}: the MCP client is not installed",
            hint="pip install 'sdd-git[mcp]'",
        )
    return reach(target, doing, work, session.masked)


async def _list_tools(client: Any, cursor: str | None) -> Any:
    if cursor is None:
        return await client.list_tools()
    try:
        from mcp.types import PaginatedRequestParams

        return await client.list_tools(params=PaginatedRequestParams(cursor=cursor))
    except TypeError:  # mcp 1 takes the cursor itself
        return await client.list_tools(cursor=cursor)


def _wire(model: Any) -> dict[str, Any]:
    """A protocol object as JSON with the protocol's own (camelCase) keys: the same in mcp 1
    and 2, whose Python attribute names differ."""
    dumped = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped if isinstance(dumped, dict) else {}
