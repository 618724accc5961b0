"""The seam every request passes: a `Request` in, an `Answer` out, through a `Transport`.

`StdlibTransport` is the real one, on `http.client`: TLS with the system's trust store (the ssl
default context), the environment's proxy (a CONNECT tunnel for https, the whole URL for http),
and optionally one kept-alive connection per (scheme, host, port, proxy), reused call after
call. It raises `Unreachable` when no connection could be made, `Timeout` when the server
took the request and did not answer in time, `DeadlinePassed` when the whole call outlived its
deadline; anything else (`http.client` errors, a header value HTTP forbids) as it came."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import http.client


@dataclass(frozen=True)
class Request:
    method: str
    url: str  # absolute http(s) URL
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    # Told each piece of a 2xx answer's body as it arrives (a stream of server-sent events):
    # the whole body is still returned at the end.
    on_chunk: Callable[[bytes], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def next_link(self) -> str | None:
        """The `rel="next"` URL of a Link header (GitHub, GitLab), or None."""
        for part in self.headers.get("link", "").split(","):
            match = re.search(r'<([^>]+)>\s*;\s*rel="?next"?', part)
            if match:
                return match.group(1)
        return None


class Transport(Protocol):
    def send(self, request: Request) -> Answer: ...

    def close(self) -> None: ...


class Unreachable(Exception):
    """The connection could not be made at all."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class Timeout(Exception):
    """No answer within the timeout, after the connection was made: the server is alive."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class DeadlinePassed(Exception):
    """The whole call took longer than its deadline, and was ended."""


_Key = tuple[str, str, int, str]


class StdlibTransport:
    """`timeout` for each step (connecting, each read). With `deadline` the call as a whole
    ends after that many seconds, whatever step it waits in (a server that drips its answer a
    byte at a time never trips the timeout of one read). With `max_body` at most that many
    bytes of the answer are read (one more says it was longer). With `keep_alive` the
    connection stays open for the next call."""

    def __init__(
        self,
        timeout: float,
        *,
        keep_alive: bool = True,
        deadline: float | None = None,
        max_body: int | None = None,
    ) -> None:
        self.timeout = timeout
        self.keep_alive = keep_alive
        self.deadline = deadline
        self.max_body = max_body
        self._connections: dict[_Key, http.client.HTTPConnection] = {}

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def send(self, request: Request) -> Answer:
        """One request and its whole answer. A kept-alive connection the server has closed
        meanwhile fails before any answer: that one is opened again and the request sent anew,
        once."""
        from urllib.parse import urlsplit

        from sdd_git.http import proxy as proxies

        parts = urlsplit(request.url)
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        port = parts.port or (443 if scheme == "https" else 80)
        target = parts.path or "/"
        if parts.query:
            target += f"?{parts.query}"
        headers = dict(request.headers)
        proxy = proxies.proxy_for(scheme, host)
        if proxy and scheme == "http":
            target = f"http://{parts.netloc.rpartition('@')[2]}{target}"  # a proxy wants it whole
            headers.update(proxies.credentials(proxy))
        key = (scheme, host, port, proxy or "")
        for fresh in (False, True):
            answer = self._attempt(
                key, request.method, target, headers, request.body, fresh, request.on_chunk
            )
            if answer is not None:
                return answer
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(
        self,
        key: _Key,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes | None,
        fresh: bool,
        on_chunk: Callable[[bytes], None] | None = None,
    ) -> Answer | None:
        """The answer, or None when a reused connection was found closed (try once more)."""
        import http.client

        connection = self._connections.get(key)
        reused = connection is not None and connection.sock is not None and not fresh
        if connection is None or fresh:
            if connection is not None:
                connection.close()
            connection = self._connection(*key)
            self._connections[key] = connection
        deadline = None if self.deadline is None else time.monotonic() + self.deadline
        # Ends a call that is still going at its deadline, whatever step it is waiting in.
        timer = (
            None if self.deadline is None else threading.Timer(self.deadline, _shut, (connection,))
        )
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            if connection.sock is None and not self._connect(key, connection, fresh):
                return None
            try:
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                told = on_chunk if 200 <= response.status < 300 else None
                payload = self._read(response, deadline, told)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self._drop(key)
                if reused:
                    return None  # the server closed the idle connection: open a new one
                raise
            except BaseException:
                self._drop(key)
                raise
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlinePassed() from None
            if isinstance(exc, TimeoutError):
                raise Timeout(exc) from None
            raise
        finally:
            if timer is not None:
                timer.cancel()
        answer_headers = {name.lower(): value for name, value in response.getheaders()}
        if response.will_close or not self.keep_alive:
            self._drop(key)
        return Answer(response.status, answer_headers, payload)

    def _connect(self, key: _Key, connection: http.client.HTTPConnection, fresh: bool) -> bool:
        """Open the connection; False when it was reset at once (try a fresh one, once)."""
        import http.client

        try:
            connection.connect()
        except http.client.InvalidURL:
            raise
        except (OSError, http.client.HTTPException) as exc:
            self._drop(key)
            if isinstance(exc, ConnectionResetError) and not fresh:
                return False
            raise Unreachable(exc) from None
        return True

    def _read(
        self,
        response: http.client.HTTPResponse,
        deadline: float | None,
        on_chunk: Callable[[bytes], None] | None = None,
    ) -> bytes:
        import http.client

        if self.max_body is None and deadline is None and on_chunk is None:
            return response.read()
        limit = self.max_body if self.max_body is not None else 1 << 62
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = response.read1(min(65536, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("deadline")
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError("deadline")  # the timer ended it: what came is not all of it
        data = b"".join(chunks)
        if size <= limit and getattr(response, "length", None):
            raise http.client.IncompleteRead(data)  # cut short: never read as the whole answer
        return data[:limit]

    def _connection(
        self, scheme: str, host: str, port: int, proxy: str
    ) -> http.client.HTTPConnection:
        import http.client

        from sdd_git.http import proxy as proxies

        if not proxy:
            if scheme == "https":
                return http.client.HTTPSConnection(host, port, timeout=self.timeout)
            return http.client.HTTPConnection(host, port, timeout=self.timeout)
        proxy_host, proxy_port = proxies.address(proxy)
        if scheme == "https":
            # TLS to the server itself, through the proxy's CONNECT tunnel.
            tunnel = http.client.HTTPSConnection(proxy_host, proxy_port, timeout=self.timeout)
            tunnel.set_tunnel(host, port, headers=proxies.credentials(proxy))
            return tunnel
        return http.client.HTTPConnection(proxy_host, proxy_port, timeout=self.timeout)

    def _drop(self, key: _Key) -> None:
        connection = self._connections.pop(key, None)
        if connection is not None:
            connection.close()


def _shut(connection: Any) -> None:
    """Wake whatever the call waits on at its deadline: the read gives up, and says so."""
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
