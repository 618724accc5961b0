"""The `real_model` suite: runs against a real local model server (issue 11).

Every request goes through a small recording proxy on loopback, so a test can read exactly what
the server received (headers and body) and what it answered."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "real_model: runs against a real model server at SDD_REAL_MODEL_URL "
        "(start one: python3 .ci/model-server start)",
    )


@dataclass(frozen=True)
class Exchange:
    """One request the server received, as it received it, and its answer."""

    method: str
    path: str
    headers: dict[str, list[str]]
    body: bytes
    status: int
    answer: bytes
    seconds: float

    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.body)) if self.body else {}

    def reply(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.answer))
        except ValueError:
            return {}


@dataclass
class RecordingProxy:
    """Forwards to the real server and keeps every exchange; `url` is what sdd is pointed at."""

    upstream: str
    url: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(proxy: RecordingProxy) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(proxy.upstream)

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers: dict[str, list[str]] = {}
            for name, value in self.headers.items():
                headers.setdefault(name.lower(), []).append(value)
            sent = {
                k: v
                for k, v in self.headers.items()
                if k.lower() not in ("host", "connection", "accept-encoding")
            }
            upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=900)
            began = time.monotonic()
            try:
                upstream.request(self.command, self.path, body or None, sent)
                response = upstream.getresponse()
                status, answer = response.status, response.read()
                kind = response.getheader("Content-Type") or "application/json"
            finally:
                upstream.close()
            with proxy.lock:
                proxy.exchanges.append(
                    Exchange(
                        self.command,
                        self.path,
                        headers,
                        body,
                        status,
                        answer,
                        time.monotonic() - began,
                    )
                )
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        do_GET = do_POST = _forward

    return Forward


@pytest.fixture(scope="session")
def recording_proxy() -> Iterator[RecordingProxy]:
    import os

    upstream = os.environ.get("SDD_REAL_MODEL_URL", "")
    if not upstream:
        pytest.skip("no real model server configured (run: python3 .ci/model-server start)")
    proxy = RecordingProxy(upstream)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(proxy))
    base_path = urlsplit(upstream).path
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}{base_path}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def proxy(recording_proxy: RecordingProxy) -> RecordingProxy:
    """The session's proxy with this test's exchanges only."""
    with recording_proxy.lock:
        recording_proxy.exchanges.clear()
    return recording_proxy
