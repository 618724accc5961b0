"""Serve the page on 127.0.0.1 only, with a fresh one-time token, until Ctrl-C (or until the
server is told to stop, for tests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.root import Root


@dataclass(frozen=True)
class Served:
    url: str  # the first URL, with the one-time token
    port: int


def prepare(
    root: Root | None, port: int | None, start_folder: Path | None
) -> tuple[Any, Any, Served]:
    """The bound socket, the uvicorn server and the first URL, before anything is served."""
    import uvicorn

    from sdd_git.page.app import create_app
    from sdd_git.page.security import bind_host, loopback_socket, new_token, refuse_inside_run

    refuse_inside_run()
    token = new_token()
    sock = loopback_socket(port or 0)  # bound before the URL is printed: the URL always answers
    chosen = int(sock.getsockname()[1])
    app = create_app(root, token, start_folder, lambda: chosen)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    return sock, server, Served(f"http://{bind_host()}:{chosen}/?token={token}", chosen)


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
) -> None:
    """Run the page until interrupted. `announce` is told the URL once the socket is bound."""
    sock, server, served = prepare(root, port, start_folder)
    with _stopped_by_signals(server):
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
