"""The tools of the test MCP servers, written on the official `mcp` package's server API
(`MCPServer` in mcp 2, `FastMCP` in mcp 1), served over stdio by stdio_server.py and over
streamable HTTP by http_server.py.

Each tool stands for one case of the connector's rules: a read the person declares, a tool that
says it only reads but is not declared, one with no hints, one that says it destroys, a release
(forbidden by name), a job runner (forbidden by argument), errors, a not-found, a slow tool, an
image, a leaked token and the server's own environment and children; and two releases under
other names, `gh_rel_new` and `ship_it` (forbidden by the abbreviation, and by the description
alone), which leave a mark when they are ever called."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    TextContent,
    ToolAnnotations,
)

# A made-up token in GitHub's shape: the session masker hides what looks like one.
LEAKED = "ghp_" + "Zq8RmYx4Lk2Vb7Nc1Td5Wf9Hg3Jp6Ms0Qa4E"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(92)).decode()  # 100 bytes


def _server(name: str) -> Any:
    try:
        from mcp.server import MCPServer  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # mcp 1
        from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef,unused-ignore]
    return MCPServer(name)


def _tool_error(message: str) -> Exception:
    try:
        from mcp.server.mcpserver.exceptions import ToolError  # mcp 2
    except ImportError:  # mcp 1
        from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef,unused-ignore]
    return ToolError(message)


def _protocol_error(code: int, message: str) -> Exception:
    from mcp.shared import exceptions

    if hasattr(exceptions, "MCPError"):  # mcp 2
        return exceptions.MCPError(code, message)  # type: ignore[no-any-return,unused-ignore]
    from mcp.types import ErrorData  # mcp 1

    return exceptions.McpError(ErrorData(code=code, message=message))  # type: ignore[attr-defined,no-any-return,unused-ignore]


def build(name: str = "team-docs") -> Any:
    server = _server(name)
    reads_only = ToolAnnotations(readOnlyHint=True)

    @server.tool(annotations=reads_only)
    def search_docs(query: str) -> str:
        """Search the team's docs."""
        return f"3 pages match {query!r}: intro, setup, faq"

    @server.tool()
    def get_page(page: str) -> str:
        """Read one page of the docs (no hints given)."""
        return f"# {page}\nHow to set up the expense app."

    @server.tool(annotations=reads_only)
    def page_stats(page: str) -> str:
        """Views of a page (says it only reads)."""
        return f"{page}: 42 views"

    @server.tool()
    def rename_page(page: str, to: str) -> str:
        """Rename a page (no hints given)."""
        return f"renamed {page} to {to}"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
    def delete_page(page: str) -> str:
        """Delete a page."""
        return f"deleted {page}"

    @server.tool(annotations=reads_only)
    def create_release(tag: str) -> str:
        """Make a release (and claim it only reads)."""
        return f"released {tag}"

    @server.tool()
    def gh_rel_new(tag: str, marker: str = "") -> str:
        """Create a GitHub release."""
        if marker:
            Path(marker).write_text(f"released {tag}", encoding="utf-8")
        return f"released {tag}"

    @server.tool(annotations=reads_only)
    def ship_it(version: str, marker: str = "") -> str:
        """Publish a new version of the app (and claim it only reads)."""
        if marker:
            Path(marker).write_text(f"shipped {version}", encoding="utf-8")
        return f"shipped {version}"

    @server.tool(annotations=reads_only)
    def run_job(job: str, parameters: dict[str, str]) -> str:
        """Start a CI job with parameters (and claim it only reads)."""
        return f"started {job} with {parameters}"

    @server.tool(annotations=reads_only)
    def show_env() -> str:
        """The server's own environment, as JSON."""
        return json.dumps(dict(os.environ), sort_keys=True)

    @server.tool(annotations=reads_only)
    def working_folder() -> str:
        """The folder the server runs in."""
        return os.getcwd()

    @server.tool(annotations=reads_only)
    def fail(why: str) -> str:
        """A tool that answers with an error (isError)."""
        raise _tool_error(f"cannot do that: {why} (key {LEAKED})")

    @server.tool(annotations=reads_only)
    def find_record(key: str) -> str:
        """A record that is not there: MCP's resource-not-found error."""
        raise _protocol_error(-32002, f"Resource not found: {key}")

    @server.tool(annotations=reads_only)
    def lookup(key: str) -> str:
        """A tool that says in words that nothing was found (not an error)."""
        return f"no record named {key} was found"

    @server.tool(annotations=reads_only)
    async def sleep(seconds: float) -> str:
        """Answer after `seconds`."""
        await anyio.sleep(seconds)
        return "awake"

    @server.tool(annotations=reads_only)
    def picture() -> list[Any]:
        """A text block, an image and an embedded binary resource."""
        return [
            TextContent(type="text", text="the build's screenshot:"),
            ImageContent(type="image", data=PNG, mimeType="image/png"),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///report.pdf",  # type: ignore[arg-type,unused-ignore]
                    mimeType="application/pdf",
                    blob=base64.b64encode(bytes(2048)).decode(),
                ),
            ),
        ]

    @server.tool(annotations=reads_only)
    def leak() -> str:
        """Return a deploy key, as a careless server might."""
        return f"deploy key for staging: {LEAKED}"

    @server.tool(annotations=reads_only)
    def spawn_sleeper(pid_file: str) -> str:
        """Leave a child process behind (a server's helper that outlives the call)."""
        child = subprocess.Popen(["sleep", "300"])
        Path(pid_file).write_text(str(child.pid), encoding="utf-8")
        return f"left {child.pid} running"

    return server
