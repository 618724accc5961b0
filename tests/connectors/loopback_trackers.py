"""Additions to tests/connectors/loopback.py for the tracker and chat services (Jira, Aha!,
Asana, Slack, Teams): a route's answer that checks the sign-in first, as the service does, and
answers a wrong or missing Authorization header with that service's own refusal body; and a
server that stops at once (the standard library's `serve_forever` notices a shutdown only at its
next poll, 0.5 s by default: half a second per test, a minute over these files)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from tests.connectors import loopback
from tests.connectors.loopback import Reply, Seen

POLL_SECONDS = 0.01

Handler = Callable[[Seen, "re.Match[str]"], Reply]


def signed_in(
    authorization: str | tuple[str, ...], refused: Reply, unsigned: Reply | None = None
) -> Callable[[Handler], Handler]:
    """Wrap a route's answer: a request whose Authorization header is not one of
    `authorization` gets `refused` (`unsigned` when it has none, if given), like the real
    service; only a signed-in request reaches the answer."""
    accepted = (authorization,) if isinstance(authorization, str) else authorization

    def wrap(answer: Handler) -> Handler:
        def handler(seen: Seen, match: re.Match[str]) -> Reply:
            given = seen.headers.get("authorization")
            if given is None and unsigned is not None:
                return unsigned
            if given not in accepted:
                return refused
            return answer(seen, match)

        return handler

    return wrap


class Loopback(loopback.Loopback):
    """The shared loopback server, polling for its shutdown every POLL_SECONDS."""

    def start(self) -> Loopback:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_SECONDS,), daemon=True
        )
        self._thread.start()
        return self

    def __enter__(self) -> Loopback:
        return self.start()
