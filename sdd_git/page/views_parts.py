"""Her product's parts: its modules and services, each service's owner, and the leads. The same
core functions as `sdd scope add module NAME`, `sdd scope add service NAME --module M --owner
ROLE`, `sdd scope remove NAME` and `sdd scope show`."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sdd_git.errors import SddError
from sdd_git.page.site import form_of, root_of, site_of

PART_CHANGES = ("module", "service", "remove")


def _parts_view(request: Request, status: int = 200, **extra: Any) -> Response:
    from sdd_git.records import scopes

    site = site_of(request)
    root = root_of(request)
    shown = scopes.view(root)
    return site.render(
        request,
        "parts.html",
        status=status,
        view=shown,
        roles=sorted(shown.roles),
        **extra,
    )


async def parts_page(request: Request) -> Response:
    return await run_in_threadpool(_parts_view, request)


async def parts_change(request: Request) -> Response:
    """Add a module, add a service, or remove one: one person command each."""
    from sdd_git.records import scopes

    site = site_of(request)
    root = root_of(request)
    what = request.url.path.rsplit("/", 1)[-1]
    form = await form_of(request)
    name = form.get("name", "").strip()

    def change() -> tuple[str, dict[str, Any], str]:
        if what == "module":
            module = scopes.add_module(root, name)
            return "scope add module", {"name": module.name}, f"Module {module.name} added."
        if what == "service":
            owner = form.get("owner") or None
            module_name = form.get("module", "")
            service = scopes.add_service(root, name, module_name, owner)
            whose = f"owned by {service.owner}" if service.owner else "with no owner yet"
            args = {"name": service.name, "module": module_name, "owner": owner}
            return "scope add service", args, f"Service {service.name} added, {whose}."
        gone = scopes.remove(root, name)  # what == "remove"
        return "scope remove", {"name": gone.name}, f"{gone.kind.capitalize()} {gone.name} removed."

    try:
        action, args, said = await run_in_threadpool(change)
    except SddError as exc:
        return await run_in_threadpool(_parts_view, request, 400, error=exc.message, hint=exc.hint)
    site.logged(action, **args)
    return await run_in_threadpool(_parts_view, request, notice=said)


ROUTES = [
    Route("/parts", parts_page),
    *(Route(f"/parts/{what}", parts_change, methods=["POST"]) for what in PART_CHANGES),
]
