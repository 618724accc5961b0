"""Her page opened again while it is served already: what her shortcut does the second time.

A page server for a product keeps a note that it is there (`.sdd/local/page-server.json`: its
process, nothing secret) and looks, a few times a second, for a request to open her page again
(`.sdd/local/page-reopen`, an empty file). Her shortcut, launched while one is served, leaves that
request and waits for the server to take it: the server then makes a fresh one-time token and
opens her browser on it, exactly as it did when it started (through a file of hers, so that the
token is on no command line). No token ever passes between the two processes or rests in the
product: the shortcut only asks, and the server, which alone knows its tokens, answers by
opening her browser. Another user cannot ask (`.sdd/local` is hers alone); a role's sandboxed
command cannot either (`.sdd/` is read-only to it); and whoever could would only open her
browser on her own page.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sdd_git.root import Root

RECORD = "page-server.json"
REQUEST = "page-reopen"
LOOK_SECONDS = 0.25  # how often the server looks for a request: a file's lstat, nothing more
WAIT_SECONDS = 5.0  # how long the shortcut waits for a served page to take its request


@contextlib.contextmanager
def answering(root: Root, reopen: Callable[[], None]) -> Iterator[None]:
    """While the page is served for `root`: say so, and call `reopen` for each request."""
    from sdd_git import lockfile
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.errors import SddError

    record, request = root.local / RECORD, root.local / REQUEST
    me = lockfile.this_process()
    try:
        write_text_atomic(record, json.dumps(me) + "\n")
        with contextlib.suppress(FileNotFoundError):
            request.unlink()  # a request left from before this server is not for it
    except (OSError, SddError):  # her state folder is not usable: the page is served all the
        yield  # same, and her shortcut starts another one instead of asking this one
        return
    done = threading.Event()

    def look() -> None:
        while not done.wait(LOOK_SECONDS):
            try:
                request.unlink()  # taken: the shortcut that asked sees it gone
            except OSError:  # none asked (or it cannot be taken): look again later
                continue
            # Whatever opening her browser meets, this thread goes on answering and the page
            # goes on serving her.
            with contextlib.suppress(Exception):
                reopen()

    looker = threading.Thread(target=look, name="page-reopen", daemon=True)
    looker.start()
    try:
        yield
    finally:
        done.set()
        looker.join(timeout=2 * LOOK_SECONDS)
        if _holder(record) == me:  # a later server for the same product keeps its own note
            with contextlib.suppress(FileNotFoundError):
                record.unlink()


def ask_served_page(root: Root, wait: float = WAIT_SECONDS) -> bool:
    """Ask the page already served for `root` to open her browser again. True when it took the
    request; False when none is served (or none took it in `wait` seconds): then she needs a
    new one, and the request is taken back."""
    from sdd_git import lockfile, statefolders

    holder = _holder(root.local / RECORD)
    if not holder or lockfile.gone(holder) or holder.get("pid") == os.getpid():
        return False
    request = root.local / REQUEST
    statefolders.append(request, b"", sync=False)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not os.path.lexists(request):
            return True
        time.sleep(0.05)
    with contextlib.suppress(FileNotFoundError):
        request.unlink()
    return False


def _holder(record: Path) -> dict[str, object]:
    from sdd_git import statefolders
    from sdd_git.errors import SddError

    try:
        found = json.loads(statefolders.read_text(record))
    except (OSError, ValueError, SddError):
        return {}
    return found if isinstance(found, dict) else {}
