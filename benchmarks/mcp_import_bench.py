"""What the MCP extra costs, and where: its import, and the time a read through it takes.

    python benchmarks/mcp_import_bench.py [--runs 15] [--calls 30] [--quick]

Table 1, fresh processes (the median of N, each a new interpreter, as a person's terminal runs
them): `python -c pass` (the floor), importing `sdd_git.connectors.mcp` (the connector's module:
it must not import `mcp`), `import mcp`, and `mcp` with its client modules (ClientSession, the
stdio and streamable HTTP transports), next to `sdd --help` and `sdd role list` in a root whose
config names an MCP connector. For the two `sdd` rows the last column counts the `mcp` modules
the command imported (`python -X importtime`, once): it must be 0, which is what keeps their times
unchanged by the extra; no run with `mcp` uninstalled is needed.

Table 2, in this process, against the test MCP server of tests/connectors/mcp_servers/ (served
over streamable HTTP on 127.0.0.1, and over stdio): the median time of one read (`search_docs`)
through `McpConnector.call`, which opens a session, initializes, calls and closes, against the
same tool called on a session the SDK keeps open (the server's own reply). Their difference is
what a read through the connector adds. Over stdio every call also starts the server's process
(a Python server importing `mcp`), shown as is.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CHECKOUT))
SERVERS = CHECKOUT / "tests" / "connectors" / "mcp_servers"
CLIENT_IMPORTS = (
    "import mcp; from mcp import ClientSession; from mcp.client.stdio import stdio_client; "
    "from mcp.client.streamable_http import streamable_http_client"
)


def timed(argv: Sequence[str], cwd: Path, runs: int, env: dict[str, str]) -> list[float]:
    subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)  # warm the disk cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            raise SystemExit(f"mcp_import_bench: {' '.join(argv)} failed: {done.stderr!r}")
    return times


def mcp_modules(args: Sequence[str], cwd: Path, env: dict[str, str]) -> int:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sdd_git", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    names = [
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    ]
    return sum(1 for name in names if name == "mcp" or name.startswith(("mcp.", "mcp_types")))


def sdd_argv() -> list[str]:
    script = Path(sys.executable).with_name("sdd")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sdd_git"]


def import_table(runs: int) -> None:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(CHECKOUT)}
    env.pop("SDD_RUN_ID", None)
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as scratch:
        root = Path(scratch) / "product"
        root.mkdir()
        subprocess.run([*sdd_argv(), "init"], cwd=root, env=env, check=True, capture_output=True)
        config = root / ".sdd" / "config.yaml"
        config.write_text(
            config.read_text(encoding="utf-8")
            + "connectors:\n  docs: {kind: mcp, command: [docs-mcp], reads: [search_docs]}\n",
            encoding="utf-8",
        )
        python = sys.executable
        rows: list[tuple[str, list[float], str]] = [
            ("`python -c pass` (the floor)", timed([python, "-c", "pass"], root, runs, env), "-"),
            (
                "`import sdd_git.connectors.mcp` (the connector's module)",
                timed([python, "-c", "import sdd_git.connectors.mcp"], root, runs, env),
                "-",
            ),
            ("`import mcp`", timed([python, "-c", "import mcp"], root, runs, env), "-"),
            (
                "`import mcp` + ClientSession, stdio and streamable HTTP clients",
                timed([python, "-c", CLIENT_IMPORTS], root, runs, env),
                "-",
            ),
            (
                "`sdd --help`",
                timed([*sdd_argv(), "--help"], root, runs, env),
                str(mcp_modules(["--help"], root, env)),
            ),
            (
                "`sdd role list` (an MCP connector configured)",
                timed([*sdd_argv(), "role", "list"], root, runs, env),
                str(mcp_modules(["role", "list"], root, env)),
            ),
        ]
    print(f"\nFresh processes, {runs} runs each (ms):\n")
    print("| case | median | min | max | mcp modules imported |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, times, modules in rows:
        print(
            f"| {name} | {statistics.median(times):.1f} | {min(times):.1f} | {max(times):.1f} "
            f"| {modules} |"
        )


def http_server() -> tuple[subprocess.Popen[bytes], str, Path]:
    port_file = Path(tempfile.mkdtemp(prefix="mcp-bench-http-")) / "port"
    server = subprocess.Popen(
        [sys.executable, str(SERVERS / "http_server.py"), str(port_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("mcp_import_bench: the HTTP test server did not start")
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port_file.read_text().strip()}/mcp", port_file


def open_session_times(settings: dict[str, Any], calls: int) -> list[float]:
    """`search_docs` on one session the SDK keeps open: the server's own reply time."""
    import anyio
    from mcp import ClientSession

    async def run() -> list[float]:
        times: list[float] = []
        if "url" in settings:
            from mcp.client.streamable_http import streamable_http_client

            transport: Any = streamable_http_client(settings["url"])
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            command = settings["command"]
            parameters = StdioServerParameters(command=command[0], args=command[1:])
            transport = stdio_client(parameters, errlog=open(os.devnull, "w"))  # noqa: SIM115
        async with transport as streams, ClientSession(streams[0], streams[1]) as client:
            await client.initialize()
            await client.call_tool("search_docs", {"query": "warm"})
            for _ in range(calls):
                start = time.perf_counter()
                await client.call_tool("search_docs", {"query": "setup"})
                times.append((time.perf_counter() - start) * 1000)
        return times

    return anyio.run(run)


def connector_times(settings: dict[str, Any], calls: int) -> list[float]:
    from sdd_git.connectors.base import Session
    from sdd_git.connectors.mcp import McpConnector

    connector = McpConnector()
    session = Session("docs", "", None, {**settings, "reads": ["search_docs"]})
    connector.call(session, "search_docs", {"query": "warm"})
    times: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        connector.call(session, "search_docs", {"query": "setup"})
        times.append((time.perf_counter() - start) * 1000)
    return times


def read_table(calls: int) -> None:
    server, url, _ = http_server()
    try:
        stdio_settings = {"command": [sys.executable, str(SERVERS / "stdio_server.py")]}
        stdio_calls = max(3, calls // 5)  # each starts a Python server: slow, fewer of them
        rows: list[tuple[str, Callable[[], list[float]], Callable[[], list[float]]]] = [
            (
                f"streamable HTTP ({calls} reads)",
                lambda: open_session_times({"url": url}, calls),
                lambda: connector_times({"url": url}, calls),
            ),
            (
                f"stdio ({stdio_calls} reads)",
                lambda: open_session_times(stdio_settings, stdio_calls),
                lambda: connector_times(stdio_settings, stdio_calls),
            ),
        ]
        print("\nOne read (`search_docs`), median ms:\n")
        print(
            "| transport | server's own reply (open session) | through McpConnector.call | added |"
        )
        print("| --- | ---: | ---: | ---: |")
        for name, own, through in rows:
            own_ms, through_ms = statistics.median(own()), statistics.median(through())
            print(f"| {name} | {own_ms:.1f} | {through_ms:.1f} | {through_ms - own_ms:.1f} |")
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per import row")
    parser.add_argument("--calls", type=int, default=30, help="reads per transport")
    parser.add_argument("--quick", action="store_true", help="3 runs, 5 reads (a smoke test)")
    options = parser.parse_args()
    runs, calls = (3, 5) if options.quick else (options.runs, options.calls)
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise SystemExit("mcp_import_bench: install the extra: pip install -e '.[mcp]'") from None
    from importlib.metadata import version

    print(f"Python {platform.python_version()} on {platform.machine()}, mcp {version('mcp')}")
    import_table(runs)
    read_table(calls)


if __name__ == "__main__":
    main()
