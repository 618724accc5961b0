"""The guard in front of her page, against a real uvicorn server on 127.0.0.1: nothing reaches
the page without the cookie only the one-time token gives, with a Host that is not the page's
loopback name and port, or (when it changes something) with an Origin that is not the page's.

The app behind the guard is a recorder of our own, so these rules are proved without depending
on the page's views: it notes every request that reaches it, and a POST "changes something"."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import os
import socket
import threading
import time
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

uvicorn = pytest.importorskip("uvicorn")

from sdd_git.errors import InsideRunError, UsageError  # noqa: E402
from sdd_git.page.security import (  # noqa: E402
    CONTENT_SECURITY_POLICY,
    PageGuard,
    bind_host,
    cookie_name,
    loopback_socket,
    new_token,
    refuse_inside_run,
    require_loopback,
)
from sdd_git.root import Root  # noqa: E402
from sdd_git.sandbox import choose  # noqa: E402
from sdd_git.sandbox.execute import run  # noqa: E402
from tests.conftest import run_cli  # noqa: E402

SECURITY_HEADERS = {
    "x-frame-options": "DENY",
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
}


@dataclass
class Recorder:
    """A tiny ASGI app: what reached it, and what it changed."""

    reached: list[tuple[str, str]] = field(default_factory=list)
    changes: list[bytes] = field(default_factory=list)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        self.reached.append((scope["method"], scope["path"]))
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            self.changes.append(body)
        headers = [
            (b"content-type", b"text/plain"),
            # Headers the guard must override, whatever the app says.
            (b"x-frame-options", b"SAMEORIGIN"),
            (b"cache-control", b"public, max-age=3600"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"reached"})


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        found = [v for k, v in self.headers if k.lower() == name]
        return found[0] if found else None

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name]


@dataclass
class Page:
    port: int
    token: str
    app: Recorder

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host}"


def ask(
    port: int,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> Answer:
    """One request with exactly the headers given: no Host or Origin unless we put it there."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if method not in ("GET", "HEAD"):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        response = conn.getresponse()
        return Answer(response.status, response.getheaders(), response.read())
    finally:
        conn.close()


def raw(port: int, request: bytes) -> bytes:
    """A request as bytes, for what http.client will not send (no Host, HTTP/1.0, upgrades)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


@contextlib.contextmanager
def served(app: Any, port_socket: socket.socket) -> Iterator[None]:
    """A real uvicorn server on the bound socket, in a thread, stopped through its handle."""
    config = uvicorn.Config(app, log_level="error", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [port_socket]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        port_socket.close()


@dataclass
class Switch:
    """One server for the whole module (starting and stopping uvicorn is the slow part); each
    test puts a fresh guard, with its own one-time token, in front of a fresh recorder."""

    app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[int, Switch]]:
    sock = loopback_socket(0)
    port = int(sock.getsockname()[1])
    switch = Switch()
    with served(switch, sock):
        yield port, switch


@pytest.fixture
def page(server: tuple[int, Switch]) -> Page:
    port, switch = server
    token = new_token()
    app = Recorder()
    switch.app = PageGuard(app, token, lambda: port)
    return Page(port, token, app)


def sign_in(page: Page, host: str | None = None) -> str:
    """Open the first URL as her browser does; answers the Cookie header to send from now on."""
    answer = ask(page.port, "GET", f"/?token={page.token}", {"Host": host or page.host})
    assert answer.status == 303, answer
    cookie = answer.header("set-cookie")
    assert cookie is not None
    return cookie.split(";")[0]


def other_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_without_the_cookie_nothing_reaches_the_page_and_nothing_changes(page: Page) -> None:
    plain = {"Host": page.host}
    posting = {"Host": page.host, "Origin": page.origin, "Sec-Fetch-Site": "same-origin"}
    forged = f"{cookie_name(page.port)}={page.token}"  # the token itself is not a session
    answers = [
        ask(page.port, "GET", "/", plain),
        ask(page.port, "GET", "/events", {**plain, "Accept": "text/event-stream"}),
        ask(page.port, "POST", "/change", posting, b"x=1"),
        ask(page.port, "POST", "/change", {**posting, "Cookie": f"{cookie_name(page.port)}=guess"}),
        ask(page.port, "POST", "/change", {**posting, "Cookie": forged}, b"x=1"),
        ask(page.port, "DELETE", "/change", {**posting, "Cookie": "sdd_page=guess"}),
    ]
    assert [a.status for a in answers] == [401] * len(answers)
    assert b"Open your page again" in answers[0].body and b"shortcut" in answers[0].body
    assert page.app.reached == [] and page.app.changes == []


def test_the_token_url_sets_an_httponly_strict_cookie_and_redirects_without_the_token(
    page: Page,
) -> None:
    answer = ask(page.port, "GET", f"/runs?step=2&token={page.token}", {"Host": page.host})
    assert answer.status == 303
    assert answer.header("location") == "/runs?step=2"
    assert page.token not in (answer.header("location") or "")
    cookies = answer.all("set-cookie")
    assert len(cookies) == 1
    value, *attributes = [part.strip() for part in cookies[0].split(";")]
    name, _, session = value.partition("=")
    assert name == cookie_name(page.port) and name.startswith("sdd_page")
    assert session and session != page.token
    assert set(attributes) == {"HttpOnly", "SameSite=Strict", "Path=/"}  # no Secure: plain http
    assert page.app.reached == []  # the exchange itself reaches nothing
    after = ask(page.port, "GET", "/runs?step=2", {"Host": page.host, "Cookie": value})
    assert after.status == 200 and page.app.reached == [("GET", "/runs")]


def test_the_token_redirect_stays_on_the_page(page: Page) -> None:
    answer = ask(page.port, "GET", f"//evil.example/x?token={page.token}", {"Host": page.host})
    assert answer.status == 303
    assert answer.header("location") == "/evil.example/x"


def test_the_token_is_single_use(page: Page) -> None:
    cookie = sign_in(page)
    again = ask(page.port, "GET", f"/?token={page.token}", {"Host": page.host})
    assert again.status == 403 and again.header("set-cookie") is None
    assert b"already used" in again.body
    wrong = ask(page.port, "GET", f"/?token={new_token()}", {"Host": page.host})
    assert wrong.status == 403 and wrong.header("set-cookie") is None
    # A token on a request that changes something is not an exchange: it needs the cookie.
    posted = ask(
        page.port,
        "POST",
        f"/?token={page.token}",
        {"Host": page.host, "Origin": page.origin},
    )
    assert posted.status == 401 and posted.header("set-cookie") is None
    assert page.app.reached == []
    # Her browser, already in, opening the spent address again: back to the page, no new cookie.
    hers = ask(page.port, "GET", f"/?token={page.token}", {"Host": page.host, "Cookie": cookie})
    assert hers.status == 303 and hers.header("set-cookie") is None
    assert ask(page.port, "GET", "/", {"Host": page.host, "Cookie": cookie}).status == 200


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:{port}",
        "evil.example",
        "127.0.0.1:{other}",
        "localhost:{other}",
        "127.0.0.1",
        "localhost",
        "127.0.0.2:{port}",
        "0.0.0.0:{port}",
        "127.0.0.1.nip.io:{port}",
        "localhost.evil.example:{port}",
    ],
)
def test_a_foreign_host_never_reaches_the_page_even_with_the_cookie(page: Page, host: str) -> None:
    cookie = sign_in(page)
    named = host.format(port=page.port, other=other_port())
    got = ask(page.port, "GET", "/", {"Host": named, "Cookie": cookie})
    posted = ask(
        page.port,
        "POST",
        "/change",
        {"Host": named, "Origin": f"http://{named}", "Cookie": cookie},
        b"x=1",
    )
    token = ask(page.port, "GET", f"/?token={page.token}", {"Host": named})
    assert got.status == posted.status == token.status == 421
    assert token.header("set-cookie") is None
    assert page.app.reached == [] and page.app.changes == []


def test_no_host_never_reaches_the_page_even_with_the_cookie(page: Page) -> None:
    cookie = sign_in(page)
    for version in (b"HTTP/1.0", b"HTTP/1.1"):
        answer = raw(
            page.port,
            b"GET / " + version + b"\r\nCookie: " + cookie.encode() + b"\r\n"
            b"Connection: close\r\n\r\n",
        )
        status = int(answer.split(b" ", 2)[1])
        assert status in (400, 421), answer  # 400: the server itself refuses HTTP/1.1 sans Host
    two_hosts = raw(
        page.port,
        f"GET / HTTP/1.1\r\nHost: {page.host}\r\nHost: evil.example\r\nCookie: {cookie}\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    assert int(two_hosts.split(b" ", 2)[1]) in (400, 421)
    assert page.app.reached == []


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "http://evil.example",
        "http://127.0.0.1:{other}",
        "https://127.0.0.1:{port}",
        "http://localhost:{port}",  # another origin than the Host she uses
        "http://127.0.0.1",
        "null",
    ],
)
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_a_foreign_or_missing_origin_changes_nothing_even_with_the_cookie(
    page: Page, origin: str | None, method: str
) -> None:
    cookie = sign_in(page)
    headers = {"Host": page.host, "Cookie": cookie}
    if origin is not None:
        headers["Origin"] = origin.format(port=page.port, other=other_port())
    answer = ask(page.port, method, "/change", headers, b"x=1")
    assert answer.status == 403
    assert page.app.reached == [] and page.app.changes == []


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_a_request_the_browser_calls_cross_site_is_refused(page: Page, site: str) -> None:
    cookie = sign_in(page)
    base = {"Host": page.host, "Cookie": cookie, "Sec-Fetch-Site": site}
    posted = ask(page.port, "POST", "/change", {**base, "Origin": page.origin}, b"x=1")
    got = ask(page.port, "GET", "/", base)
    assert posted.status == got.status == 403
    assert page.app.reached == [] and page.app.changes == []


def test_her_opener_file_signs_her_in_from_another_site_once(page: Page) -> None:
    """`sdd page` opens a file of hers that forwards to the first URL; the browser calls that
    navigation cross-site. The unspent token still signs her in, through a page of the page's
    own that refreshes (a Strict cookie would not follow a redirect), and only once."""
    opened = ask(
        page.port,
        "GET",
        f"/?token={page.token}",
        {"Host": page.host, "Sec-Fetch-Site": "cross-site"},
    )
    assert opened.status == 200
    assert '<meta http-equiv="refresh" content="0;url=/">' in opened.body.decode()
    assert page.token not in opened.body.decode()
    cookie = (opened.header("set-cookie") or "").split(";")[0]
    assert "HttpOnly" in (opened.header("set-cookie") or "")
    for name, value in SECURITY_HEADERS.items():
        assert opened.all(name) == [value], (name, opened.headers)
    shown = ask(
        page.port,
        "GET",
        "/",
        {"Host": page.host, "Cookie": cookie, "Sec-Fetch-Site": "same-origin"},
    )
    assert shown.status == 200 and shown.body == b"reached"
    again = ask(
        page.port,
        "GET",
        f"/?token={page.token}",
        {"Host": page.host, "Sec-Fetch-Site": "cross-site"},
    )
    assert again.status == 403 and again.header("set-cookie") is None


@pytest.mark.parametrize(
    "query", ["/?token=wrong", "/", "/?token={token}&token={token}", "/runs?token=x{token}"]
)
def test_from_another_site_only_the_unspent_token_gets_in(page: Page, query: str) -> None:
    answer = ask(
        page.port,
        "GET",
        query.format(token=page.token),
        {"Host": page.host, "Sec-Fetch-Site": "cross-site"},
    )
    assert answer.status == 403 and answer.header("set-cookie") is None
    assert page.app.reached == []
    assert sign_in(page)  # and the token is still hers to use


def test_from_another_site_the_token_never_changes_anything(page: Page) -> None:
    posted = ask(
        page.port,
        "POST",
        f"/change?token={page.token}",
        {"Host": page.host, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        b"x=1",
    )
    assert posted.status == 403 and posted.header("set-cookie") is None
    assert page.app.changes == []
    assert sign_in(page)


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]"])
def test_a_same_origin_post_with_the_cookie_changes_something(page: Page, name: str) -> None:
    host = f"{name}:{page.port}"
    cookie = sign_in(page, host)
    answer = ask(
        page.port,
        "POST",
        "/change",
        {
            "Host": host,
            "Origin": f"http://{host}",
            "Cookie": cookie,
            "Sec-Fetch-Site": "same-origin",
        },
        b"x=1",
    )
    assert answer.status == 200 and answer.body == b"reached"
    assert page.app.changes == [b"x=1"]


def test_every_answer_carries_the_security_headers(page: Page) -> None:
    cookie = sign_in(page)
    answers = {
        "page": ask(page.port, "GET", "/", {"Host": page.host, "Cookie": cookie}),
        "not signed in": ask(page.port, "GET", "/", {"Host": page.host}),
        "foreign host": ask(page.port, "GET", "/", {"Host": "evil.example", "Cookie": cookie}),
        "foreign origin": ask(
            page.port,
            "POST",
            "/change",
            {"Host": page.host, "Cookie": cookie, "Origin": "http://evil.example"},
        ),
        "spent token": ask(page.port, "GET", f"/?token={page.token}", {"Host": page.host}),
        "redirect": ask(
            page.port, "GET", f"/?token={page.token}", {"Host": page.host, "Cookie": cookie}
        ),
    }
    for what, answer in answers.items():
        for name, value in SECURITY_HEADERS.items():
            # One value each: the app's own (SAMEORIGIN, max-age) are replaced, not added to.
            assert answer.all(name) == [value], (what, name, answer.headers)


def test_websockets_are_refused(page: Page) -> None:
    cookie = sign_in(page)
    answer = raw(
        page.port,
        f"GET /events HTTP/1.1\r\nHost: {page.host}\r\nCookie: {cookie}\r\n"
        f"Origin: {page.origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode(),
    )
    assert int(answer.split(b" ", 2)[1]) == 403, answer
    assert page.app.reached == []


def test_a_request_from_another_machine_never_reaches_the_page() -> None:
    """Bound to loopback, no other machine can connect; were it bound wider by mistake, the
    guard still refuses a client that is not loopback."""
    app = Recorder()
    guard = PageGuard(app, "t", 8000)
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "query_string": b"token=t",
        "headers": [(b"host", b"127.0.0.1:8000")],
        "client": ("192.0.2.7", 40000),
        "server": ("127.0.0.1", 8000),
    }
    asyncio.run(guard(scope, receive, send))
    assert sent[0]["status"] == 403 and app.reached == []


def test_the_page_refuses_to_start_inside_a_role_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDD_RUN_ID", "run-123")
    with pytest.raises(InsideRunError):
        refuse_inside_run()
    monkeypatch.delenv("SDD_RUN_ID")
    refuse_inside_run()


def machine_address() -> str | None:
    """This machine's address on its default route, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_it_listens_on_loopback_only(page: Page) -> None:
    assert bind_host() == "127.0.0.1"
    sock = loopback_socket(0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()
    for wide in ("0.0.0.0", "::", "192.0.2.7", "example.com", ""):
        with pytest.raises(UsageError):
            require_loopback(wide)
    require_loopback("::1")
    address = machine_address()
    if address is not None:  # and from this machine's own outward address, nothing answers
        with pytest.raises(OSError):
            socket.create_connection((address, page.port), timeout=5).close()
    assert page.app.reached == []


def product(tmp_path: Path) -> Path:
    folder = tmp_path / "product"
    for name in ("memory", "changes", ".sdd", ".git", "src"):
        (folder / name).mkdir(parents=True)
    return folder


def use_sandbox(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("SDD_SANDBOX", name)
    choose.current.cache_clear()
    box = choose.current()
    if name != "none" and box.name != name:
        pytest.skip(f"{name} does not work on this machine: {box.why}")


def post_from_a_command(page: Page) -> str:
    """What a role's command can do with no cookie: a request with the right Host and Origin."""
    request = (
        f"POST /change HTTP/1.1\\r\\nHost: {page.host}\\r\\nOrigin: {page.origin}\\r\\n"
        "Content-Length: 3\\r\\nConnection: close\\r\\n\\r\\nx=1"
    )
    return (
        f"if exec 3<>/dev/tcp/127.0.0.1/{page.port}; then printf '{request}' >&3;"
        " head -1 <&3; else echo refused; fi"
    )


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
def test_a_sandboxed_command_cannot_reach_the_page(
    page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    """bubblewrap: its own network namespace, where 127.0.0.1 is another loopback. Landlock
    alone (from ABI 4): no TCP connect at all."""
    use_sandbox(monkeypatch, sandbox)
    if sandbox == "landlock":
        from sdd_git.sandbox import landlock

        if landlock.abi() < 4:
            pytest.skip(f"Landlock ABI {landlock.abi()} has no network rules (4 needed)")
    done = run(
        product(tmp_path),
        post_from_a_command(page),
        {"PATH": os.environ["PATH"]},
        network=False,
        timeout=20,
    )
    assert "refused" in done.output and "HTTP/1.1" not in done.output, done.output
    assert page.app.reached == [] and page.app.changes == []


@pytest.mark.parametrize(("sandbox", "network"), [("none", False), ("bwrap", True)])
def test_a_command_that_reaches_the_port_still_changes_nothing(
    page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str, network: bool
) -> None:
    """With no sandbox, or with the network she allowed a command, it shares her loopback: it
    reaches the port, but without the cookie (the token went only to her terminal) nothing."""
    use_sandbox(monkeypatch, sandbox)
    done = run(
        product(tmp_path),
        post_from_a_command(page),
        {"PATH": os.environ["PATH"]},
        network=network,
        timeout=20,
    )
    assert "HTTP/1.1 401" in done.output, done.output
    assert page.token not in done.output
    assert page.app.reached == [] and page.app.changes == []


# The same rules, against the page itself (sdd_git.page.app.create_app) on a real sdd root:
# what "changes something" there is a new change pack and a line in the page's log.


@dataclass
class RealPage:
    port: int
    token: str
    root: Root

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    def changed(self) -> bool:
        from sdd_git.records import changes

        return bool(changes.list_all(self.root)) or (self.root.local / "page.jsonl").exists()


@pytest.fixture
def real_page(root: Root) -> Iterator[RealPage]:
    from sdd_git.page.app import create_app

    sock = loopback_socket(0)
    port = int(sock.getsockname()[1])
    token = new_token()
    with served(create_app(root, token, None, lambda: port), sock):
        yield RealPage(port, token, root)


def new_change(page: RealPage, headers: dict[str, str]) -> Answer:
    return ask(
        page.port,
        "POST",
        "/changes",
        {"Host": page.host, "Content-Type": "application/x-www-form-urlencoded", **headers},
        b"words=Export+my+expenses+as+a+spreadsheet",
    )


def test_the_page_without_the_token_or_cookie_changes_nothing(real_page: RealPage) -> None:
    assert ask(real_page.port, "GET", "/", {"Host": real_page.host}).status == 401
    assert new_change(real_page, {"Origin": real_page.origin}).status == 401
    assert not real_page.changed()


def test_the_page_with_a_foreign_host_changes_nothing_even_with_the_cookie(
    real_page: RealPage,
) -> None:
    signed = ask(real_page.port, "GET", f"/?token={real_page.token}", {"Host": real_page.host})
    cookie = (signed.header("set-cookie") or "").split(";")[0]
    for host in (f"evil.example:{real_page.port}", f"127.0.0.1:{other_port()}"):
        answer = new_change(real_page, {"Host": host, "Origin": f"http://{host}", "Cookie": cookie})
        assert answer.status == 421
        assert ask(real_page.port, "GET", "/", {"Host": host, "Cookie": cookie}).status == 421
    assert not real_page.changed()


def test_the_page_with_a_foreign_or_missing_origin_changes_nothing_even_with_the_cookie(
    real_page: RealPage,
) -> None:
    signed = ask(real_page.port, "GET", f"/?token={real_page.token}", {"Host": real_page.host})
    cookie = (signed.header("set-cookie") or "").split(";")[0]
    assert new_change(real_page, {"Cookie": cookie}).status == 403
    assert new_change(real_page, {"Cookie": cookie, "Origin": "http://evil.example"}).status == 403
    assert not real_page.changed()


def test_the_page_signed_in_and_same_origin_changes_something_with_its_headers(
    real_page: RealPage,
) -> None:
    signed = ask(real_page.port, "GET", f"/?token={real_page.token}", {"Host": real_page.host})
    assert signed.status == 303 and signed.header("location") == "/"
    cookie = (signed.header("set-cookie") or "").split(";")[0]
    home = ask(real_page.port, "GET", "/", {"Host": real_page.host, "Cookie": cookie})
    assert home.status == 200
    made = new_change(real_page, {"Cookie": cookie, "Origin": real_page.origin})
    assert made.status in (200, 303), made.body[:500]
    assert real_page.changed()
    assert '"origin": "page"' in (real_page.root.local / "page.jsonl").read_text()
    for answer in (signed, home, made):
        for name, value in SECURITY_HEADERS.items():
            assert answer.all(name) == [value], (name, answer.headers)
    again = ask(real_page.port, "GET", f"/?token={real_page.token}", {"Host": real_page.host})
    assert again.status == 403


def test_sdd_page_refuses_to_start_inside_a_role_run(root: Root) -> None:
    from sdd_git.page.serve import prepare

    done = run_cli("page", "--no-browser", cwd=root.path, env={"SDD_RUN_ID": "run-123"})
    assert done.returncode == 1, done
    assert "inside a role run" in done.stderr and "token=" not in done.stdout + done.stderr
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SDD_RUN_ID", "run-123")
        with pytest.raises(InsideRunError):
            prepare(root, None, None)


def test_only_the_pages_own_style_sheet_and_script_may_be_kept_by_the_browser(
    real_page: RealPage,
) -> None:
    """Her pages are never cached; the style sheet and script (nothing of hers in them) are, under
    an address that carries a hash of their content, and only for a signed-in browser."""
    import re

    signed = ask(real_page.port, "GET", f"/?token={real_page.token}", {"Host": real_page.host})
    cookie = (signed.header("set-cookie") or "").split(";")[0]
    home = ask(real_page.port, "GET", "/", {"Host": real_page.host, "Cookie": cookie})
    assert home.all("cache-control") == ["no-store"]
    addresses = re.findall(r'(?:href|src)="(/static/[^"]+)"', home.body.decode())
    assert {a.split("?")[0] for a in addresses} == {"/static/page.css", "/static/page.js"}
    assert all(re.search(r"\?v=[0-9a-f]{12}$", a) for a in addresses), addresses
    for address in addresses:
        kept = ask(real_page.port, "GET", address, {"Host": real_page.host, "Cookie": cookie})
        assert kept.status == 200
        assert kept.all("cache-control") == ["private, max-age=86400, immutable"]
        assert kept.all("referrer-policy") == ["same-origin"]
    stranger = ask(real_page.port, "GET", addresses[0], {"Host": real_page.host})
    assert stranger.status == 401 and stranger.all("cache-control") == ["no-store"]
    missing = ask(
        real_page.port, "GET", "/static/nothing.css", {"Host": real_page.host, "Cookie": cookie}
    )
    assert missing.status == 404 and missing.all("cache-control") == ["no-store"]
