"""A tiny proxy on 127.0.0.1 for tests, started and stopped by the test: it records each
request line and its Proxy-Authorization, answers a forwarded `GET http://...` itself, and
refuses a `CONNECT` tunnel (the line it was asked for is what the test checks)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Seen:
    lines: list[str] = field(default_factory=list)
    authorization: list[str | None] = field(default_factory=list)
    url: str = ""


@contextmanager
def running_proxy() -> Iterator[Seen]:
    seen = Seen()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _record(self) -> None:
            seen.lines.append(self.requestline)
            seen.authorization.append(self.headers.get("Proxy-Authorization"))

        def do_GET(self) -> None:
            self._record()
            body = b'{"through": "the proxy"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_CONNECT(self) -> None:
            self._record()
            self.send_response(403, "tunnels refused here")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    seen.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
