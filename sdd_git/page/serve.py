"""Serve the page on loopback only, with a fresh one-time token, until Ctrl-C (or until the
server is told to stop, for tests), to her alone: on Linux every connection whose client socket
another user owns is refused when it is made; elsewhere the page listens on a random loopback
address (see sdd_git.page.peer)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.root import Root

# What keeps another user of this computer out (Served.wall): the owner of each connection's
# client socket, checked; a random loopback address; or only the cookie (nothing else could be
# had here).
OWNER_CHECKED = "owner"
RANDOM_ADDRESS = "address"
COOKIE_ONLY = "cookie"
REFUSED_TEXT = "This page belongs to another user of this computer.\n"


@dataclass(frozen=True)
class Served:
    url: str  # the first URL, with the one-time token
    port: int
    host: str = "127.0.0.1"
    wall: str = OWNER_CHECKED


def prepare(
    root: Root | None, port: int | None, start_folder: Path | None
) -> tuple[Any, Any, Served]:
    """The bound socket, the uvicorn server and the first URL, before anything is served."""
    import uvicorn

    from sdd_git.page.app import create_app
    from sdd_git.page.peer import can_tell_owners
    from sdd_git.page.security import (
        loopback_socket,
        new_token,
        random_loopback_socket,
        refuse_inside_run,
    )

    refuse_inside_run()
    token = new_token()
    sock = loopback_socket(port or 0)  # bound before the URL is printed: the URL always answers
    wall = OWNER_CHECKED
    if not can_tell_owners():
        elsewhere = random_loopback_socket(port or 0)
        if elsewhere is not None:
            sock.close()
            sock, wall = elsewhere, RANDOM_ADDRESS
        else:
            wall = COOKIE_ONLY
    host, chosen = str(sock.getsockname()[0]), int(sock.getsockname()[1])
    app = create_app(root, token, start_folder, lambda: chosen, host)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        use_colors=False,  # every byte sdd prints is shown as text: a colour code would be too
        lifespan="off",
        http=hers_only() if wall == OWNER_CHECKED else "auto",
    )
    server = uvicorn.Server(config)
    url = f"http://{host}:{chosen}/?token={token}"
    return sock, server, Served(url, chosen, host, wall)


def hers_only() -> type[Any]:
    """uvicorn's HTTP protocol, refusing each connection whose client socket is not hers as
    the connection is made: once per connection, so a kept-alive one costs nothing more, and
    before a byte of its request is read."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from sdd_git.page.peer import is_hers
    from sdd_git.page.security import SECURITY_HEADERS

    body = REFUSED_TEXT.encode()
    head = [
        b"HTTP/1.1 403 Forbidden",
        b"content-type: text/plain; charset=utf-8",
        b"content-length: " + str(len(body)).encode(),
        b"connection: close",
        *(name + b": " + value for name, value in SECURITY_HEADERS),
    ]
    refused = b"\r\n".join(head) + b"\r\n\r\n" + body

    class HersOnly(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            peer = transport.get_extra_info("peername")
            if not is_hers(peer, transport.get_extra_info("sockname")):
                transport.write(refused)
                transport.close()

    return HersOnly


def opener_file(url: str) -> Path:
    """A page of hers that forwards her browser to `url`: what `sdd page` opens, so that the
    one-time token is on no command line (every user on the machine can read a process's
    command line, and the browser's would carry the address until the token is spent). The
    file is hers alone (a 0700 folder, 0600 file); the caller removes its folder."""
    import html
    import os
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="sdd-page-"))
    path = folder / "open.html"
    shown = html.escape(url, quote=True)
    text = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={shown}"><title>Opening your page</title>'
        f'</head><body><p><a href="{shown}">Open your page</a></p></body></html>\n'
    )
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def serve(
    root: Root | None,
    port: int | None,
    start_folder: Path | None,
    announce: Callable[[Served], None],
    reopen: Callable[[str], None] | None = None,
) -> None:
    """Run the page until interrupted. `announce` is told the URL once the socket is bound;
    `reopen` is given a fresh first URL each time her shortcut asks for her page again (see
    sdd_git.page.reopen), for a product's page."""
    from sdd_git.page.reopen import answering

    sock, server, served = prepare(root, port, start_folder)

    def again() -> None:
        assert reopen is not None
        token = server.config.app.renew()
        reopen(f"http://{served.host}:{served.port}/?token={token}")

    asked = answering(root, again) if root is not None and reopen else contextlib.nullcontext()
    with _stopped_by_signals(server), asked:
        announce(served)
        try:
            server.run(sockets=[sock])
        finally:
            sock.close()


@contextmanager
def _stopped_by_signals(server: Any) -> Iterator[None]:
    """SIGTERM, and closing her terminal (SIGHUP), stop the page as Ctrl-C does, so that the
    caller still removes the opener file. Uvicorn stops on SIGINT and SIGTERM only while it
    runs (a hangup would kill outright), and before it runs a SIGTERM that raises can land in a
    weakref callback, where the exception is dropped and the page would go on serving: here a
    signal only asks the server to stop. Under `nohup` (the hangup ignored) it goes on."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [signal.SIGTERM]
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:
        wanted.append(signal.SIGHUP)
    previous = {
        sig: signal.signal(sig, lambda *_: setattr(server, "should_exit", True)) for sig in wanted
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
