"""What a connector read adds over the server's own reply.

A loopback HTTP server on 127.0.0.1 answers a Jira issue (about 3 KB of JSON). Three ways to get
it are timed, each many times, and the medians compared:

- the server's reply: a bare `http.client` GET of the same path (the floor);
- the connector: `JiraConnector().call(session, "get_issue", ...)` (HTTP, status mapping, JSON
  to text);
- a role's read, whole: the guard (config, the operation table, attachment), then the
  `connector_read` tool (config, sign-in from the variable, the connector, the masking of the
  answer's credentials, the session's token and every secret the run's masker knows).

    .venv/bin/python benchmarks/connector_read_bench.py [--runs 300]

Standard library and sdd only; the sdd root lives in a temporary folder.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ISSUE = {
    "id": "10042",
    "key": "ABC-12",
    "fields": {
        "summary": "Receipts vanish after upload",
        "status": {"name": "In Progress"},
        "issuetype": {"name": "Bug"},
        "description": {
            "type": "doc",
            "version": 1,
            "content": [
                {"type": "paragraph", "content": [{"type": "text", "text": "Step " * 80}]}
                for _ in range(6)
            ],
        },
        "comment": {"comments": []},
    },
}
BODY = json.dumps(ISSUE).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:
        pass


def timed(what: object, runs: int) -> list[float]:
    call = what if callable(what) else None
    assert call is not None
    call()  # warm
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    runs = parser.parse_args().runs

    from sdd_git.connectors.base import Session
    from sdd_git.connectors.builtin.jira import JiraConnector
    from sdd_git.connectors.tokens import masker_for
    from sdd_git.root import init_root
    from sdd_git.runner import guard
    from sdd_git.tools.base import ToolContext
    from sdd_git.tools.catalog import TOOL_CLASSES
    from sdd_git.tools.toolbox import TOOLS

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    token = "jira-bench-token-0123456789abcdef"
    os.environ["BENCH_JIRA_TOKEN"] = token
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

    with tempfile.TemporaryDirectory() as folder:
        root = init_root(Path(folder) / "product", product="Bench").root
        root.config.write_text(
            root.config.read_text()
            + f"connectors:\n  jira: {{base_url: '{base}', token_env: BENCH_JIRA_TOKEN}}\n"
        )
        path = "/rest/api/3/issue/ABC-12"

        def bare() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", server.server_port)
            connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
            connection.getresponse().read()
            connection.close()

        session = Session("jira", base, token)

        def connector() -> None:
            JiraConnector().call(session, "get_issue", {"key": "ABC-12"})

        mask = masker_for(root.path)
        context = ToolContext(root, "bench", "run-bench", None, {}, mask, ("jira",))
        args = {"connector": "jira", "operation": "get_issue", "args": {"key": "ABC-12"}}

        def whole() -> None:
            verdict = guard.check("connector_read", args, root.path, tuple(TOOL_CLASSES),
                                  connectors=("jira",))  # fmt: skip
            assert isinstance(verdict, guard.Clearance), verdict
            outcome = TOOLS["connector_read"].run(args, context)
            assert "Receipts vanish" in outcome.text, outcome.text

        rows = [("server reply (bare GET)", timed(bare, runs)),
                ("JiraConnector.call", timed(connector, runs)),
                ("guard + connector_read tool", timed(whole, runs))]  # fmt: skip
    server.shutdown()
    floor = statistics.median(rows[0][1])
    print(f"Python {sys.version.split()[0]}, {runs} runs each, {len(BODY):,} bytes of JSON")
    print("| path | median ms | p90 ms | adds over the reply (median) |")
    print("| --- | --- | --- | --- |")
    for name, times in rows:
        median = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"| {name} | {median:.2f} | {p90:.2f} | {median - floor:+.2f} |")


if __name__ == "__main__":
    main()
