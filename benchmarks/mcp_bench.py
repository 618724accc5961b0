"""What an MCP connector call costs over the server's own time, a session per call against one
session kept for the run (issue 25).

    python benchmarks/mcp_bench.py [--calls 30] [--runs 5] [--checkout PATH] [--quick]

The server is this file (`--serve stdio` or `--serve http PORT_FILE`): a server on the official
`mcp` package's server API with one tool that answers at once and says how long it took inside
the tool (`time.perf_counter` at its start and end). Over stdio it runs as a person's config
runs it, in the strongest sandbox the machine has; over streamable HTTP it listens on
127.0.0.1. A call is timed from `McpConnector.call` to its return, in this process, and does
all a call does: work out the target from the config, list the tools (the refusal reads their
descriptions before each call), call the tool, render its answer.

Rows:
- a session per call: each call outside a run (as a person command calls, and as every call
  did before issue 25): start, initialize, list, call, stop.
- one session per run: `--runs` runs (`connectors.base.run_lifetime`, as the runner opens it),
  each of `--calls` calls; the first call of a run starts the server, the later ones reuse it.
  "run's end" is the time to close the run's session and reap the server.

Columns: the first call (median over runs), the later calls (median over all), the server's
own time inside the tool (median), and the overhead: later calls minus the server's own time.
`--checkout PATH` times another checkout (a worktree of main, say), with this file's server;
a checkout without `run_lifetime` gets the session-per-call rows only.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


def serve(argv: list[str]) -> None:
    try:
        from mcp.server import MCPServer  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # mcp 1
        from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[attr-defined,no-redef,unused-ignore]
    server = MCPServer("bench")

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    def lookup(key: str) -> str:
        """Look a key up."""
        began = time.perf_counter()
        value = f"value of {key}"
        return json.dumps({"value": value, "server_ms": (time.perf_counter() - began) * 1000})

    if argv[0] == "stdio":
        server.run("stdio")
        return
    import logging
    import socket

    import anyio
    import uvicorn

    logging.getLogger("mcp").setLevel(logging.WARNING)  # a line per session, else
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    web = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning"))

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve, [sock])
            while not web.started:
                await anyio.sleep(0.01)
            Path(argv[1]).write_text(str(sock.getsockname()[1]), encoding="utf-8")

    anyio.run(run)


@contextmanager
def http_server() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as folder:
        port_file = Path(folder) / "port"
        process = subprocess.Popen([sys.executable, str(HERE), "--serve", "http", str(port_file)])
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the HTTP server did not start")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port_file.read_text()}/mcp"
        finally:
            process.kill()
            process.wait()


def timed_call(call: Callable[[], Any]) -> tuple[float, float]:
    """(ms of the whole call, ms the server spent inside the tool)."""
    began = time.perf_counter()
    result = call()
    spent = (time.perf_counter() - began) * 1000
    text = result.text.rsplit("\n", 1)[-1]  # after any note
    return spent, float(json.loads(text)["server_ms"])


def measure(settings: dict[str, Any], calls: int, runs: int, kept: bool) -> dict[str, float | None]:
    from sdd_git.connectors.base import Session
    from sdd_git.connectors.mcp import McpConnector

    session = Session("bench", "", None, settings)
    connector = McpConnector()

    def call() -> Any:
        return connector.call(session, "lookup", {"key": "k"})

    if not kept:
        timed_call(call)  # warm the imports and the disk cache
        spent = [timed_call(call) for _ in range(calls)]
        return {"first": statistics.median(t for t, _ in spent),
                "later": statistics.median(t for t, _ in spent),
                "server": statistics.median(s for _, s in spent), "end": None}  # fmt: skip
    from sdd_git.connectors.base import run_lifetime

    firsts, later, server, ends = [], [], [], []
    for _ in range(runs + 1):  # the first run warms up, untimed
        with run_lifetime():
            first = timed_call(call)
            rest = [timed_call(call) for _ in range(calls - 1)]
            closing = time.perf_counter()
        ends.append((time.perf_counter() - closing) * 1000)
        firsts.append(first[0])
        later += [t for t, _ in rest]
        server += [s for _, s in [first, *rest]]
    return {"first": statistics.median(firsts[1:]), "later": statistics.median(later),
            "server": statistics.median(server), "end": statistics.median(ends[1:])}  # fmt: skip


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checkout", type=Path, default=HERE.parent.parent)
    parser.add_argument("--quick", action="store_true", help="5 calls, 2 runs")
    args = parser.parse_args()
    calls, runs = (5, 2) if args.quick else (args.calls, args.runs)
    sys.path.insert(0, str(args.checkout.resolve()))
    import mcp  # noqa: F401 - fail here, before any row, without the extra

    import sdd_git.connectors.base as base
    from sdd_git.sandbox.choose import current

    if not Path(base.__file__).resolve().is_relative_to(args.checkout.resolve()):
        raise SystemExit(f"sdd_git comes from {base.__file__}, not from {args.checkout}")

    has_lifetime = hasattr(base, "run_lifetime")
    stdio = {"command": [sys.executable, str(HERE), "--serve", "stdio"], "reads": ["lookup"],
             "timeout": 60}  # fmt: skip
    rows = []
    with http_server() as url:
        http = {"url": url, "reads": ["lookup"], "timeout": 60}
        for transport, settings in (("stdio", stdio), ("streamable HTTP", http)):
            modes = (False, True) if has_lifetime else (False,)
            for kept in modes:
                rows.append((transport, kept, measure(settings, calls, runs, kept)))
    from importlib.metadata import version

    print(f"checkout: {args.checkout.resolve()} (sdd_git from {Path(base.__file__).parent})")
    print(f"Python {platform.python_version()}, mcp {version('mcp')}, {platform.machine()}, "
          f"{platform.system()}; stdio server sandbox: {current().label}; {calls} calls a "
          f"run, {runs} runs")  # fmt: skip
    print()
    print("| transport | sessions | first call | later calls (median) | server's own | "
          "overhead | run's end |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for transport, kept, m in rows:
        mode = "one per run" if kept else "one per call"
        first, later, server, end = m["first"], m["later"], m["server"], m["end"]
        assert first is not None and later is not None and server is not None
        closing = "-" if end is None else f"{end:.1f} ms"
        print(f"| {transport} | {mode} | {first:.1f} ms | {later:.1f} ms | {server:.3f} ms | "
              f"{later - server:.1f} ms | {closing} |")  # fmt: skip


if __name__ == "__main__":
    main()
