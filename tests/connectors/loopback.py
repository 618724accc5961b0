"""A loopback HTTP server for connector tests: a stand-in for a service, speaking its wire format.

A real `http.server.ThreadingHTTPServer` on 127.0.0.1:0, serving in a thread. Routes are
(method, regex on the raw path, answer): the regex is matched against the path exactly as it
arrived (still percent-encoded, without the query), so a test sees what an argument turned into;
the answer is a `Reply` or a function of the request and the match. Every request is recorded
(method, raw path, query, headers, body, server-side times), so a test proves what was sent,
where the token went, and what never reached the server.

    with Loopback([("GET", r"/repos/acme/app/issues/7", json_reply(issue))]) as server:
        ... Session(base_url=server.url) ...
        assert server.requests[0].headers["authorization"] == "Bearer ..."
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(service: str, name: str) -> Any:
    """The body of fixtures/<service>/<name>.json, without its `_doc` note (the public page
    it follows). A fixture whose served body is not an object is `{"_doc": ..., "body": ...}`."""
    data = json.loads((FIXTURES / service / f"{name}.json").read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data.pop("_doc", None)
        if set(data) == {"body"}:
            return data["body"]
    return data


def fixture_text(service: str, name: str) -> str:
    """A text fixture (a console log, an HTML error page) as it is served."""
    return (FIXTURES / service / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    raw_path: str  # as sent, still percent-encoded, without the query
    raw_query: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    received: float  # time.perf_counter() when its handler began
    replied: float = 0.0  # when its reply was written (0 until then): the server's own time

    @property
    def path(self) -> str:
        return unquote(self.raw_path)

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(self.raw_query, keep_blank_values=True)

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body.decode(), keep_blank_values=True)

    def everything_but_auth(self) -> str:
        """All of the request except its Authorization header: where a token must never be."""
        headers = {k: v for k, v in self.headers.items() if k != "authorization"}
        return "\n".join(
            [self.method, self.raw_path, self.raw_query, json.dumps(headers),
             self.body.decode("utf-8", errors="replace")]
        )  # fmt: skip


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # JSON-able; str is sent as text; bytes as they are; None is no body
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None  # default: JSON for JSON-able, text/plain for str/bytes


def json_reply(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, data, dict(headers or {}))


def text_reply(
    text: str | bytes,
    status: int = 200,
    headers: dict[str, str] | None = None,
    content_type: str = "text/plain; charset=utf-8",
) -> Reply:
    return Reply(status, text, dict(headers or {}), content_type)


Answer = Reply | Callable[[Seen, "re.Match[str]"], Reply]
Route = tuple[str, str, Answer]  # method, regex on the raw path, what answers
Routes = Sequence[tuple[str, str, Reply] | Route]


class Loopback:
    """A service on 127.0.0.1. `routes` are tried in order; when none matches, `fallback`
    answers (by default a bare 404). A context manager: started on enter, stopped on exit."""

    def __init__(self, routes: Routes | None = None, fallback: Reply | None = None) -> None:
        self.routes: list[tuple[str, re.Pattern[str], Answer]] = []
        for method, pattern, answer in routes or []:
            self.route(method, pattern, answer)
        self.fallback = fallback or Reply(404, b"", content_type="text/plain")
        self._seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll: stopping waits for it, and tests start and stop many servers.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def route(self, method: str, pattern: str, answer: Answer) -> None:
        """Add a route (before `start`, or between requests)."""
        self.routes.append((method.upper(), re.compile(pattern), answer))

    @property
    def url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    @property
    def requests(self) -> list[Seen]:
        with self._lock:
            return list(self._seen)

    def seen(self, method: str | None = None, path_prefix: str = "") -> list[Seen]:
        return [
            s for s in self.requests
            if (method is None or s.method == method) and s.path.startswith(path_prefix)
        ]  # fmt: skip

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()

    def start(self) -> Loopback:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Loopback:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _answer(self, seen: Seen) -> Reply:
        for method, pattern, answer in self.routes:
            if method == seen.method:
                match = pattern.fullmatch(seen.raw_path)
                if match is not None:
                    return answer(seen, match) if callable(answer) else answer
        return self.fallback

    def _record(self, seen: Seen) -> int:
        with self._lock:
            self._seen.append(seen)
            return len(self._seen) - 1

    def _replied(self, index: int, when: float) -> None:
        with self._lock:
            if index < len(self._seen):  # not cleared meanwhile
                self._seen[index] = replace(self._seen[index], replied=when)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        loopback = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet tests

            def _serve(self) -> None:
                received = time.perf_counter()
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                seen = Seen(
                    self.command,
                    parts.path,
                    parts.query,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    received,
                )
                try:
                    reply = loopback._answer(seen)
                except Exception as exc:  # a broken test route is said, not hung on
                    reply = Reply(599, f"loopback route failed: {exc!r}")
                if isinstance(reply.body, bytes):
                    data, kind = reply.body, "text/plain; charset=utf-8"
                elif isinstance(reply.body, str):
                    data, kind = reply.body.encode(), "text/plain; charset=utf-8"
                elif reply.body is None:
                    data, kind = b"", "application/json; charset=utf-8"
                else:
                    data, kind = json.dumps(reply.body).encode(), "application/json; charset=utf-8"
                index = loopback._record(seen)  # before the reply: a test never races it
                self.send_response(reply.status)
                if reply.status != 204:
                    self.send_header("Content-Type", reply.content_type or kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                loopback._replied(index, time.perf_counter())

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _serve

        return Handler


def closed_port_url() -> str:
    """An address on loopback where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
