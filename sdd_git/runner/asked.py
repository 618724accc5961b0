"""Where the person asked, when it was not on the command line.

Her page runs the same core functions as the person commands, in its own threads; it sets this
for the work it starts, and the run log keeps it: `via: page` on a run's `run_started` (its
`origin` already says who started the run, the person or a role) and `origin: page` on the
`decision` of a stop she answered there."""

from __future__ import annotations

from contextvars import ContextVar

ASKED_FROM: ContextVar[str | None] = ContextVar("sdd_asked_from", default=None)


def asked_from() -> str | None:
    return ASKED_FROM.get()
