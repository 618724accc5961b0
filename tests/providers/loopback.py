"""A real HTTP server on 127.0.0.1 for provider tests: it records every request and answers from a
queue of replies that each test pushes."""

from __future__ import annotations

import gzip
import json
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RESET = -1  # a reply status: drop the connection without answering


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any  # the decoded JSON body
    client_port: int = 0  # the client's side of the connection: the same port, the same one
    raw: bytes = b""  # the body's bytes as they came: what a provider's prompt cache matches


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    headers: dict[str, str]
    delay: float  # seconds to wait before answering
    gzip: bool = False  # compress the body (when the request accepts gzip)
    pause: float = 0.0  # between the pieces of a streamed body (a list of bytes)


@dataclass
class Loopback:
    url: str = ""
    requests: list[Recorded] = field(default_factory=list)
    replies: deque[Reply] = field(default_factory=deque)

    def reply(
        self,
        status: int = 200,
        body: Any = None,
        headers: dict[str, str] | None = None,
        *,
        delay: float = 0.0,
        gzip: bool = False,
        pause: float = 0.0,
    ) -> None:
        body = {} if body is None else body
        self.replies.append(Reply(status, body, headers or {}, delay, gzip, pause))

    @property
    def last(self) -> Recorded:
        return self.requests[-1]


def _handler(state: Loopback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1: the connection stays open between requests, as a real server keeps it.
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.do_POST()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            state.requests.append(
                Recorded(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=json.loads(data) if data else None,
                    client_port=self.client_address[1],
                    raw=data,
                )
            )
            if not state.replies:
                self._send(599, {"error": {"message": "loopback: no reply queued"}}, {})
                return
            reply = state.replies.popleft()
            if reply.delay:
                time.sleep(reply.delay)
            if reply.status == RESET:
                self.close_connection = True
                # linger on, 0 s: closing sends a TCP reset instead of a clean end
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                return
            if isinstance(reply.body, list):  # server-sent events, a piece at a time
                self._stream(reply)
                return
            headers = dict(reply.headers)
            payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
            if reply.gzip and "gzip" in self.headers.get("Accept-Encoding", ""):
                raw = payload if isinstance(payload, bytes) else payload.encode()
                payload = gzip.compress(raw)
                headers["Content-Encoding"] = "gzip"
            self._send(reply.status, payload, headers)

        def _stream(self, reply: Reply) -> None:
            """Each piece of `reply.body` (bytes) written and flushed on its own, `reply.delay`
            apart after the first, with no length: the answer ends when the connection does."""
            self.close_connection = True
            self.send_response(reply.status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for index, piece in enumerate(reply.body):
                if index and reply.pause:
                    time.sleep(reply.pause)
                self.wfile.write(piece)
                self.wfile.flush()

        def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
            if isinstance(body, str):
                body = body.encode()
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up early
            super().handle_error(request, client_address)


@contextmanager
def serve() -> Iterator[Loopback]:
    """Run a recording server on an ephemeral loopback port for the duration of the block.
    (Callers clear the proxy variables first: urllib would send loopback traffic to a proxy.)"""
    state = Loopback()
    server = _Server(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port_url() -> str:
    """An address on loopback where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


PROXY_VARIABLES = (
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
)
