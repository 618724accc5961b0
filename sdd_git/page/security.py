"""The guard in front of her page: a plain ASGI middleware, so every rule is here in one place
and reads without knowing a framework.

A local server is reachable by more than her browser tab: by any web page she has open (through
her browser, which carries her cookies), by a name that a DNS-rebinding attacker points at
127.0.0.1, and by any process on the machine. So nothing reaches the page unless the request

- came in on loopback, from loopback;
- names the page by its loopback address and real port in Host (no rebinding name, no other
  port, no missing Host);
- carries the session cookie, which only the one-time token in the URL `sdd page` printed to her
  terminal can get (the token is spent on first use, and the cookie is HttpOnly, SameSite=Strict);
- when it changes something, comes from the page itself (Origin is the page's own origin, and the
  browser does not say the request is cross-site);
- is plain HTTP (websockets are refused: the page uses server-sent events);
- when it has a body, says its length, and it is at most BODY_LIMIT.

Every answer, the page's and the guard's, carries headers that keep the page out of frames, keep
inline script from running, keep her pages out of caches (only the page's own style sheet and
script may be kept) and keep its addresses out of other sites' referrers.
"""

from __future__ import annotations

import errno
import hmac
import html
import ipaddress
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from sdd_git.errors import InsideRunError, UsageError
from sdd_git.sink import RUN_ID_ENV
from sdd_git.sink import refuse_inside_run as _refuse_inside_run_check

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOST = "127.0.0.1"
TOKEN_PARAM = "token"
COOKIE_PREFIX = "sdd_page"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The largest body the page reads: an attachment (views_more.ATTACHMENT_LIMIT, 10 MB) and her
# words beside it. Judged from Content-Length before any of it is read: the form parser spools a
# file part to the disk whole, however large, before a view could count it.
BODY_LIMIT = 11 << 20
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    # Not "no-referrer": with it Chromium sends `Origin: null` on the page's own form posts, which
    # the Origin check must refuse. "same-origin" still tells no other site where she was.
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
)
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_OVERRIDDEN = frozenset(name for name, _ in SECURITY_HEADERS)
STATIC_PREFIX = "/static/"
# The page's own style sheet and script hold nothing of hers; their addresses carry a hash of
# their content, so the browser may keep them and a stop's answer paints without fetching them.
STATIC_CACHE = (b"cache-control", b"private, max-age=86400, immutable")

_NOT_SIGNED_IN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Open your page again</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Open your page again</h1>
<p>{why}</p>
<p>Your page opens from its shortcut, or from the address it gave when it started. Each
address lets you in once: if this one was already used, in this browser or another, open the
shortcut again, and your page opens by itself with a fresh one.</p></main></body></html>
"""


_ONWARD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Opening your page</title>
<meta http-equiv="refresh" content="0;url={location}"></head>
<body><main><p><a href="{location}">Open your page</a></p></main></body></html>
"""


def new_token() -> str:
    """The one-time token for the first URL: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """Cookies are not kept apart by port: two pages on 127.0.0.1 (two sdd roots) would
    overwrite each other's cookie if they shared a name, so the port is in it."""
    return f"{COOKIE_PREFIX}_{port}"


def refuse_inside_run() -> None:
    """`sdd page` is the person's: a role's command (it carries SDD_RUN_ID) cannot start it.
    Stricter than the person commands: SDD_RUN_ID set at all, even empty or blank, is refused
    (a runner never sets it so, but a command can, and a page would outlive that command)."""
    _refuse_inside_run_check()
    if RUN_ID_ENV in os.environ:
        raise InsideRunError(
            f"the page cannot start inside a role run ({RUN_ID_ENV} is set, to"
            f" {os.environ[RUN_ID_ENV]!r})",
            hint=f"start sdd page from your own terminal, where {RUN_ID_ENV} is not set",
        )


def bind_host() -> str:
    """The only address the page listens on."""
    return LOOPBACK_HOST


def require_loopback(host: str) -> None:
    """Refuse any bind address that is not loopback: the page is for this machine only."""
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(
            f"the page listens on loopback only, not on {host!r}",
            hint=f"it binds {LOOPBACK_HOST}; open it on this machine",
        )


def loopback_socket(port: int = 0, host: str | None = None) -> socket.socket:
    """A listening TCP socket on 127.0.0.1 (or another loopback `host`; port 0: a free one),
    for uvicorn's `sockets=`. Binding here, before the server starts, is what makes the port
    known to the guard and makes the loopback-only bind a fact rather than a setting."""
    host = host or bind_host()
    require_loopback(host)
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle's algorithm off only on connections of
    # a socket that says it is TCP. Left on, a page's body waited for the browser's delayed ACK
    # of its headers on a kept-alive connection: 40 ms after every stop's answer.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc})",
            hint="choose another port with --port, or leave it out for a free one",
        ) from exc
    bound = sock.getsockname()[0]
    require_loopback(bound)
    return sock


def random_loopback_socket(port: int = 0) -> socket.socket | None:
    """A listening socket on a random address of 127.0.0.0/8 other than 127.0.0.1, where the
    system cannot name a connection's owner: her cookie, scoped by host, then goes to no page
    on 127.0.0.1, nor on any address another user has not guessed (one in 16 million). None
    where only 127.0.0.1 can be bound (macOS gives loopback no other address by default)."""
    for _ in range(8):
        host = f"127.{secrets.randbelow(256)}.{secrets.randbelow(256)}.{1 + secrets.randbelow(254)}"
        if host == LOOPBACK_HOST:
            continue
        try:
            return loopback_socket(port, host)
        except UsageError as exc:
            if isinstance(exc.__cause__, OSError) and exc.__cause__.errno == errno.EADDRNOTAVAIL:
                return None
            if port:  # that port is taken there: another address may have it free
                continue
            raise
    return None


def allowed_hosts(port: int, host: str = LOOPBACK_HOST) -> frozenset[str]:
    """The Host values that name the page: its loopback names with its real port (only its own
    address when that is not 127.0.0.1: localhost and [::1] would not reach it)."""
    if host != LOOPBACK_HOST:
        return frozenset({f"{host}:{port}"})
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})


def _is_loopback_client(client: Any) -> bool:
    if not client:
        return False
    try:
        return ipaddress.ip_address(str(client[0])).is_loopback
    except ValueError:
        return False


def _headers(scope: Scope) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        found.setdefault(name, []).append(raw_value.decode("latin-1"))
    return found


def _cookies(values: Iterable[str]) -> dict[str, list[str]]:
    jar: dict[str, list[str]] = {}
    for header in values:
        for part in header.split(";"):
            name, sep, value = part.strip().partition("=")
            if sep:
                jar.setdefault(name.strip(), []).append(value.strip())
    return jar


class PageGuard:
    """ASGI middleware: `PageGuard(app, token, port, host)`. `port` is the port the server
    really listens on, or a callable that answers it once known; `host` its address."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        port: int | Callable[[], int],
        host: str = LOOPBACK_HOST,
    ) -> None:
        if not token:
            raise ValueError("PageGuard needs the one-time token")
        self.app = app
        self._token = token
        self._token_spent = False
        self._sessions: list[str] = []
        self._port = port
        self._host = host

    def port(self) -> int:
        return self._port() if callable(self._port) else self._port

    def renew(self) -> str:
        """A fresh one-time token in place of the first (spent or not), for her page opened
        again (sdd_git.page.reopen): a session she has keeps working."""
        token = new_token()
        self._token, self._token_spent = token, False
        return token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            # Refused before the handshake: uvicorn answers 403 and nothing is upgraded.
            await send({"type": "websocket.close", "code": 1008, "reason": "websockets refused"})
            return
        if kind != "http":
            return
        await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        port = self.port()
        if not _is_loopback_client(scope.get("client")):
            await _plain(send, 403, "the page answers only requests from this machine")
            return
        hosts = headers.get("host", [])
        if len(hosts) != 1 or not port or hosts[0].lower() not in allowed_hosts(port, self._host):
            # Also what stops DNS rebinding: the attacker's name is in Host, never ours.
            also = f" (or localhost:{port})" if self._host == LOOPBACK_HOST else ""
            await _plain(
                send,
                421,
                f"this page answers only at http://{self._host}:{port}/{also};"
                f" the request named {', '.join(hosts) or 'no host'}",
            )
            return
        host = hosts[0].lower()
        if headers.get("upgrade"):
            # A server without a websocket library would hand an upgrade over as plain HTTP.
            await _plain(send, 403, "websockets are refused; the page uses server-sent events")
            return
        method = str(scope.get("method", "GET")).upper()
        fetch_site = [v.strip().lower() for v in headers.get("sec-fetch-site", [])]
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        name = cookie_name(port)
        if method == "GET" and fetch_site == ["cross-site"] and self._unspent_token(query):
            # The one way in from elsewhere: `sdd page` opens her browser on a file of hers
            # (so the token is on no command line), and a file's page is another site.
            await self._exchange(scope, send, query, name, signed_in=False, cross_site=True)
            return
        if any(site not in ("same-origin", "none") for site in fetch_site):
            # Cookies are not kept apart by port, so even a "same-site" page (another server on
            # 127.0.0.1) would send hers along: only the page itself, or her own typing, pass.
            await _plain(send, 403, "requests from other sites are refused")
            return
        if method not in SAFE_METHODS:
            refused = self._foreign_origin(headers, host, fetch_site)
            if refused:
                await _plain(send, 403, refused)
                return
        too_long = _body_refused(headers, method)
        if too_long:
            await _plain(send, *too_long)
            return
        signed_in = self._has_session(headers, name)
        if method == "GET" and any(key == TOKEN_PARAM for key, _ in query):
            await self._exchange(scope, send, query, name, signed_in)
            return
        if not signed_in:
            await _html(send, 401, "You are not signed in to this page in this browser.")
            return
        path = str(scope.get("path", ""))
        if any(segment in (".", "..") for segment in path.replace("\\", "/").split("/")):
            # Her browser resolves dot segments before it asks; only a hand-made request keeps
            # them, and no view should have to tell a role or a routine named ".." from a path.
            await _plain(send, 404, "no such page")
            return
        cacheable = method == "GET" and path.startswith(STATIC_PREFIX)
        await self.app(scope, receive, _with_security_headers(send, cacheable))

    def _foreign_origin(
        self, headers: dict[str, list[str]], host: str, fetch_site: list[str]
    ) -> str:
        """Why a request that changes something is refused, or "" when it comes from the page."""
        origins = headers.get("origin", [])
        if len(origins) != 1:
            return "a request that changes something must say where it comes from (Origin)"
        if origins[0].lower() != f"http://{host}":
            return f"requests from {origins[0]} cannot change anything here"
        if any(site != "same-origin" for site in fetch_site):
            return "a request that changes something must come from the page itself"
        return ""

    def _unspent_token(self, query: list[tuple[str, str]]) -> bool:
        offered = [value for key, value in query if key == TOKEN_PARAM]
        return (
            not self._token_spent
            and len(offered) == 1
            and hmac.compare_digest(offered[0].encode(), self._token.encode())
        )

    def _has_session(self, headers: dict[str, list[str]], name: str) -> bool:
        offered = _cookies(headers.get("cookie", [])).get(name, [])
        return any(
            hmac.compare_digest(value.encode(), session.encode())
            for value in offered
            for session in self._sessions
        )

    async def _exchange(
        self,
        scope: Scope,
        send: Send,
        query: list[tuple[str, str]],
        name: str,
        signed_in: bool,
        cross_site: bool = False,
    ) -> None:
        """The first URL: the token becomes the session cookie, once, and the address she sees
        (and keeps in history) no longer carries it. Arriving from another site (her opener
        file), the way on is a page that refreshes itself: a SameSite=Strict cookie is not sent
        on a redirect that continues a cross-site navigation, and is on the page's own."""
        offered = [value for key, value in query if key == TOKEN_PARAM]
        rest = [(key, value) for key, value in query if key != TOKEN_PARAM]
        matches = len(offered) == 1 and hmac.compare_digest(
            offered[0].encode(), self._token.encode()
        )
        set_cookie: list[tuple[bytes, bytes]] = []
        if not signed_in:
            if not matches:
                await _html(send, 403, "That address does not carry the right token.")
                return
            if self._token_spent:
                await _html(send, 403, "That address was already used once.")
                return
            self._token_spent = True
            session = secrets.token_urlsafe(32)
            self._sessions.append(session)
            cookie = f"{name}={session}; HttpOnly; SameSite=Strict; Path=/"
            set_cookie.append((b"set-cookie", cookie.encode("latin-1")))
        elif matches:
            self._token_spent = True  # she is in already; the address is spent all the same
        # Only ever a path on this page: "//elsewhere" would be read as another host.
        path = "/" + quote(str(scope.get("path") or "/").lstrip("/\\"), safe=_PATH_SAFE)
        location = path + (f"?{urlencode(rest)}" if rest else "")
        if cross_site:
            body = _ONWARD.format(location=html.escape(location, quote=True)).encode()
            await _respond(send, 200, b"text/html; charset=utf-8", body, set_cookie)
            return
        await _respond(
            send,
            303,
            b"text/plain; charset=utf-8",
            b"",
            [(b"location", location.encode("latin-1")), *set_cookie],
        )


def _body_refused(headers: dict[str, list[str]], method: str) -> tuple[int, str] | None:
    """Why a request's body is refused before it is read, or None. Her browser always says the
    length of what it posts; a chunked body says its size only at its end (never, if it never
    ends)."""
    lengths = headers.get("content-length", [])
    if headers.get("transfer-encoding") or (method not in SAFE_METHODS and len(lengths) != 1):
        return 411, "a request with a body must say its length (Content-Length)"
    if lengths and (not lengths[0].strip().isdigit() or int(lengths[0]) > BODY_LIMIT):
        return 413, f"that is more than the page takes ({BODY_LIMIT >> 20} MB at most)"
    return None


def _with_security_headers(send: Send, cacheable: bool = False) -> Send:
    async def wrapped(message: Message) -> None:
        if message.get("type") == "http.response.start":
            kept = [
                (name, value)
                for name, value in message.get("headers", [])
                if bytes(name).lower() not in _OVERRIDDEN
            ]
            added = list(SECURITY_HEADERS)
            if cacheable and message.get("status") == 200:
                added = [
                    STATIC_CACHE if name == b"cache-control" else (name, value)
                    for name, value in added
                ]
            message = {**message, "headers": [*kept, *added]}
        await send(message)

    return wrapped


async def _respond(
    send: Send,
    status: int,
    content_type: bytes,
    body: bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _plain(send: Send, status: int, reason: str) -> None:
    await _respond(send, status, b"text/plain; charset=utf-8", (reason + "\n").encode())


async def _html(send: Send, status: int, why: str) -> None:
    body = _NOT_SIGNED_IN.format(why=why).encode()
    await _respond(send, status, b"text/html; charset=utf-8", body)
