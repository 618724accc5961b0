"""The page as an ASGI app: server-rendered HTML (Jinja2), a little plain JS, no build step.

`create_app` wraps everything in the guard (sdd_git.page.security.PageGuard): loopback Host names
only, the one-time token turned into a cookie, and the Origin checked on every request that
changes something.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from sdd_git.errors import SddError
from sdd_git.page import (
    views_folder,
    views_groups,
    views_journey,
    views_more,
    views_parts,
    views_runs,
    views_trust,
)
from sdd_git.page.site import STATIC, Site
from sdd_git.root import Root
from sdd_git.trust.pending import WaitsForHer


def build_app(root: Root | None, start_folder: Path | None = None) -> Starlette:
    """The page itself, unguarded: only `create_app` (and tests of single views) use it."""
    routes: list[Any] = [
        *views_folder.ROUTES,
        *views_journey.ROUTES,
        *views_runs.ROUTES,
        *views_more.ROUTES,
        *views_groups.ROUTES,
        *views_parts.ROUTES,
        *views_trust.ROUTES,
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]

    async def sdd_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SddError)
        site = request.app.state.site
        return site.missing(request, "that", exc, status=400)  # type: ignore[no-any-return]

    async def waits_for_her(request: Request, exc: Exception) -> Response:
        # Whatever view met a grant she has not confirmed: said in words, never a bare error.
        assert isinstance(exc, WaitsForHer)
        return await views_trust.waits_page(request, exc.items)

    app = Starlette(
        routes=routes,
        exception_handlers={WaitsForHer: waits_for_her, SddError: sdd_error},
    )
    app.state.site = Site(root, start_folder)
    return app


def create_app(
    root: Root | None,
    token: str,
    start_folder: Path | None = None,
    port: int | Callable[[], int] = 0,
    host: str = "127.0.0.1",
) -> Any:
    """The guarded page. `port` is the port the server listens on (or a callable that tells
    it), `host` its loopback address: the guard accepts only Host values naming them."""
    from sdd_git.page.security import PageGuard

    return PageGuard(build_app(root, start_folder), token, port, host)
