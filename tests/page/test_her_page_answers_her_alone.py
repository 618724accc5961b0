"""Her page answers her alone (CONTRACT §12): cookies are kept apart by host, not by port, so a
page another user serves on any other 127.0.0.1 port gets her session cookie from her own
browser. The route found: another local user took it and answered her stop, logged as her
decision with `origin: page`.

Here a real second user (made with useradd for the session, tests/otheruser.py) holds her
cookie and talks to her real page (`sdd page`'s own server, sdd_git.page.serve.prepare, on a
real loopback socket), with a real builder run waiting at a real stop."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from sdd_git.demo import SCRIPTS
from sdd_git.page import peer, serve
from sdd_git.root import Root
from sdd_git.runner import stops
from tests.otheruser import OtherUser, other_user
from tests.page.test_safety import Answer, ask
from tests.page.test_views import accepted_change

FORM = "application/x-www-form-urlencoded"
REFUSED = "This page belongs to another user of this computer."

# As the other user: each request on a connection of its own, the answer read to its end.
CLIENT = r"""
import json, socket, sys
host, port, asked = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
out = []
for method, path, headers, body in asked:
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    got = b""
    with socket.create_connection((host, port), timeout=20) as conn:
        try:  # a refused connection may be closed before the whole request is sent
            conn.sendall(head.encode() + body.encode())
        except ConnectionError:
            pass
        try:
            while chunk := conn.recv(65536):
                got += chunk
        except ConnectionError:
            got += b"<reset>"
    out.append(got.decode("latin-1"))
print(json.dumps(out))
"""

# As the other user: one connection held open (its port printed) until told to end.
HOLD = r"""
import socket, sys
conn = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
print(conn.getsockname()[1], flush=True)
sys.stdin.read()
"""


@pytest.fixture(scope="module")
def stranger() -> Iterator[OtherUser]:
    yield from other_user()


@dataclass
class Running:
    served: serve.Served

    @property
    def host(self) -> str:
        return f"{self.served.host}:{self.served.port}"

    @property
    def token_path(self) -> str:
        parts = urlsplit(self.served.url)
        return f"{parts.path}?{parts.query}"


@pytest.fixture
def page(root: Root) -> Iterator[Running]:
    """`sdd page`'s own server on its own socket, in a thread, stopped through its handle."""
    sock, server, served = serve.prepare(root, None, None)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield Running(served)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def sign_in(page: Running) -> str:
    """Her browser opening the address `sdd page` printed: the session cookie it is given."""
    signed = ask(page.served.port, "GET", page.token_path, {"Host": page.host})
    assert signed.status == 303, signed.body
    return (signed.header("set-cookie") or "").split(";")[0]


def her_post(page: Running, cookie: str, path: str, fields: dict[str, str]) -> Answer:
    headers = {
        "Host": page.host, "Cookie": cookie, "Origin": f"http://{page.host}",
        "Sec-Fetch-Site": "same-origin", "Content-Type": FORM,
    }  # fmt: skip
    return ask(page.served.port, "POST", path, headers, urlencode(fields).encode())


def as_stranger(stranger: OtherUser, page: Running, asked: list[Any]) -> list[str]:
    done = stranger.run(CLIENT, page.served.host, str(page.served.port), json.dumps(asked))
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout))


def builder_at_a_stop(root: Root, monkeypatch: pytest.MonkeyPatch) -> stops.Stop:
    from sdd_git.runner.run import RunRequest, start

    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'builder.yaml'}")
    change = accepted_change(root)
    made = start(
        root,
        RunRequest(
            author="builder", task="Implement SPEC-0001#S1.", critic="qa-author", change=change
        ),
    )
    assert made.stop is not None, made
    return made.stop


def decisions_of(root: Root, run: str) -> list[dict[str, Any]]:
    log = root.sdd / "role-runs" / f"{run}.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e for e in events if e.get("event") == "decision"]


def page_log(root: Root) -> str:
    path = root.local / "page.jsonl"
    return path.read_text() if path.exists() else ""


def test_another_local_user_with_her_cookie_can_neither_read_her_page_nor_answer_her_stop(
    root: Root, page: Running, stranger: OtherUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_at_a_stop(root, monkeypatch)
    assert page.served.wall == serve.OWNER_CHECKED
    cookie = sign_in(page)
    browser_like = {"Host": page.host, "Cookie": cookie}
    posting = {
        **browser_like, "Origin": f"http://{page.host}", "Sec-Fetch-Site": "same-origin",
        "Content-Type": FORM,
    }  # fmt: skip
    answers = as_stranger(
        stranger,
        page,
        [
            ["GET", "/", browser_like, ""],
            ["GET", f"/stops/{stop.id}", browser_like, ""],
            ["POST", f"/stops/{stop.id}", posting, "choice=allow_once"],
        ],
    )
    for answer in answers:
        assert answer.startswith("HTTP/1.1 403 "), answer[:300]
        assert REFUSED in answer, answer
        assert stop.action not in answer and "stop-action" not in answer
    # Nothing was answered: the stop waits for her, and no decision is logged as hers.
    assert [s.id for s in stops.pending(root)] == [stop.id]
    assert decisions_of(root, stop.run) == []
    assert "allow once" not in page_log(root)

    # Her own requests, with the same cookie, still reach the page; her answer is taken.
    assert ask(page.served.port, "GET", f"/stops/{stop.id}", browser_like).status == 200
    taken = her_post(page, cookie, f"/stops/{stop.id}", {"choice": "allow_once"})
    assert taken.status == 303, taken.body[:500]
    deadline = time.monotonic() + 30
    while not decisions_of(root, stop.run):
        assert time.monotonic() < deadline, "her answer was never logged"
        time.sleep(0.05)
    (decided,) = decisions_of(root, stop.run)
    assert decided["stop"] == stop.id and decided["origin"] == "page"
    assert '"origin": "page"' in page_log(root)


def test_the_kernel_names_the_other_users_socket_as_theirs_by_netlink_and_by_proc(
    stranger: OtherUser,
) -> None:
    """Both ways of asking the socket table (sock_diag, and /proc/net/tcp where netlink is
    refused) name the owner of another user's live client socket, and of ours."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(4)
        local = listening.getsockname()
        held = stranger.start(HOLD, "127.0.0.1", str(local[1]))
        try:
            assert held.stdout is not None
            their_port = int(held.stdout.readline())
            theirs, _ = listening.accept()
            with theirs, socket.create_connection(local) as mine:
                ours, _ = listening.accept()
                with ours:
                    for look in (peer._asked, peer._read):
                        assert look(("127.0.0.1", their_port), local) == stranger.uid, look
                        assert look(mine.getsockname(), local) == 0, look
                    assert not peer.is_hers(("127.0.0.1", their_port), local)
                    assert peer.is_hers(mine.getsockname(), local)
        finally:
            assert held.stdin is not None
            held.stdin.close()
            held.wait(timeout=10)


def test_a_closed_client_socket_lingering_in_the_table_is_nobodys_not_roots() -> None:
    """A client that closed first leaves a TIME_WAIT entry, which the table shows with uid 0:
    it must not pass for root's (sdd page run as root would let it in)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        local = listening.getsockname()
        client = socket.create_connection(local)
        end = client.getsockname()
        accepted, _ = listening.accept()
        client.close()  # the client closes first: its end goes on in TIME_WAIT
        assert accepted.recv(1) == b""
        accepted.close()
        for look in (peer._asked, peer._read):
            assert look(end, local) is None, look
        assert not peer.is_hers(end, local)


def test_where_the_system_names_no_owner_the_page_listens_on_a_random_loopback_address(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not Linux, or no socket table to read: her cookie, scoped by host, goes to no page on
    127.0.0.1; the page listens on an address chosen at random at each start, and prints it."""
    monkeypatch.setattr(peer, "can_tell_owners", lambda: False)
    first = serve.prepare(root, None, None)
    second = serve.prepare(root, None, None)
    try:
        for sock, _server, served in (first, second):
            assert served.wall == serve.RANDOM_ADDRESS
            assert served.host.startswith("127.") and served.host != "127.0.0.1"
            assert served.url.startswith(f"http://{served.host}:{served.port}/?token=")
            assert sock.getsockname() == (served.host, served.port)
        assert first[2].host != second[2].host
    finally:
        first[0].close()
        second[0].close()


def test_on_a_random_loopback_address_the_page_answers_its_own_host_only(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(peer, "can_tell_owners", lambda: False)
    sock, server, served = serve.prepare(root, None, None)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        host = f"{served.host}:{served.port}"
        query = urlsplit(served.url).query

        def get(path: str, headers: dict[str, str]) -> tuple[int, str]:
            with socket.create_connection((served.host, served.port), timeout=10) as conn:
                lines = [f"GET {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
                conn.sendall(("\r\n".join([*lines, "Connection: close", "", ""])).encode())
                got = b""
                while chunk := conn.recv(65536):
                    got += chunk
            text = got.decode("latin-1")
            return int(text.split()[1]), text

        status, text = get("/?" + query, {"Host": "127.0.0.1:" + str(served.port)})
        assert status == 421 and f"http://{host}/" in text
        status, text = get("/?" + query, {"Host": host})
        assert status == 303
        cookie = next(
            line.split(":", 1)[1].split(";")[0].strip()
            for line in text.split("\r\n")
            if line.lower().startswith("set-cookie:")
        )
        assert get("/", {"Host": host, "Cookie": cookie})[0] == 200
        with pytest.raises(OSError):  # and nothing of hers listens on 127.0.0.1 at that port
            socket.create_connection(("127.0.0.1", served.port), timeout=5).close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def test_sdd_page_says_which_wall_keeps_other_users_out(root: Root) -> None:
    import signal
    import subprocess
    import sys

    server = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "page", "--no-browser"],
        cwd=root.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None and server.stderr is not None
        url = server.stdout.readline().strip()
        said = server.stderr.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url
        assert said == (
            "your page is served on 127.0.0.1 only, and answers your own programs alone;"
            " Ctrl-C stops it"
        )
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
