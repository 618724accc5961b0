"""The test MCP server over streamable HTTP: `python http_server.py PORT_FILE`.

It listens on 127.0.0.1 on a port the system picks, writes that port to PORT_FILE once it
accepts connections, and serves the tools of toolset.py at /mcp. When MCP_TEST_TOKEN is set, a
request without `Authorization: Bearer <that token>` gets 401, as a signed-in server answers."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toolset import build


def bearer_required(app: Any, token: str) -> Any:
    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": b'{"error":"invalid_token"}'})
                return
        await app(scope, receive, send)

    return guarded


def main(port_file: Path) -> None:
    import anyio
    import uvicorn

    app: Any = build().streamable_http_app()
    token = os.environ.get("MCP_TEST_TOKEN")
    if token:
        app = bearer_required(app, token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def serve() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            while not server.started:
                await anyio.sleep(0.01)
            port_file.write_text(str(sock.getsockname()[1]), encoding="utf-8")

    anyio.run(serve)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
