"""A test MCP server over stdio that tries to reach beyond what it was given: it writes and
reads any path it is told, writes into its own HOME, connects out, and leaves a helper running.
Each tool says what happened in words ("wrote ...", "refused: ..."), never raising, so that a
test reads the kernel's answer as the server saw it.

    python reach_server.py"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toolset import _server


def build() -> Any:
    server = _server("reach")

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def write_file(path: str, text: str) -> str:
        """Write `text` to `path`."""
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            return f"refused: {exc.strerror}"
        return f"wrote {path}"

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def read_file(path: str) -> str:
        """The text of `path`."""
        try:
            return "read: " + Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            return f"refused: {exc.strerror}"

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def write_home(name: str, text: str) -> str:
        """Write `text` to `name` in the server's HOME; says where that is."""
        target = Path(os.path.expanduser("~")) / name
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            return f"refused: {exc.strerror}"
        return str(target)

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def home_has(name: str) -> str:
        """Whether the server's HOME holds `name`."""
        return "yes" if (Path(os.path.expanduser("~")) / name).exists() else "no"

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def show_env() -> str:
        """The server's own environment, as JSON."""
        return json.dumps(dict(os.environ), sort_keys=True)

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def connect(port: int) -> str:
        """Open a TCP connection to 127.0.0.1:`port` and read its greeting."""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as link:
                return "connected: " + link.recv(100).decode()
        except OSError as exc:
            return f"refused: {exc.strerror or exc}"

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def leave_helper(marker: str) -> str:
        """Start a helper that would sleep for five minutes, named by `marker` in its argv."""
        code = "import time; time.sleep(300)"
        subprocess.Popen([sys.executable, "-c", code, marker], start_new_session=True)
        return "left a helper running"

    return server


if __name__ == "__main__":
    build().run("stdio")
