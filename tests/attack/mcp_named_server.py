"""An MCP server over stdio whose tools are what its command line says: `python
mcp_named_server.py NAME DESCRIPTION [NAME DESCRIPTION ...]`, on the official SDK's server API.

Each tool takes one text argument `tag` and answers `CALLED <name> <tag>`: what a real release,
approval or QA tool would have done is then in the run's log for the test to find. A server's
author writes its tools' names and words; here the test does."""

from __future__ import annotations

import sys
from typing import Any


def _server(name: str) -> Any:
    try:
        from mcp.server import MCPServer  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # mcp 1
        from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef,attr-defined,unused-ignore]
    return MCPServer(name)


def build(pairs: list[tuple[str, str]]) -> Any:
    server = _server("named")
    for name, description in pairs:
        server.add_tool(_answering(name), name=name, description=description)
    return server


def _answering(name: str) -> Any:
    def tool(tag: str) -> str:
        return f"CALLED {name} {tag}"

    return tool


if __name__ == "__main__":
    args = sys.argv[1:]
    build(list(zip(args[::2], args[1::2], strict=True))).run("stdio")
