"""A change's group: the roles that work on one change, talked to at once. The same core
functions as `sdd group create NAME --change CH` and `sdd group say NAME "..."`; each message
lands in every member's own conversation, marked with the group."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sdd_git.errors import SddError, UsageError
from sdd_git.page.site import form_of, root_of, site_of
from sdd_git.root import Root


def group_name(change_id: str) -> str:
    """The page's group of a change is named after it (`CH-0001` → `ch-0001`)."""
    return change_id.lower()


def _group_of(root: Root, change_id: str) -> Any:
    from sdd_git.network import groups

    if not groups.group_path(root, group_name(change_id)).is_file():
        return None
    return groups.load(root, group_name(change_id))


def _group_view(request: Request, change_id: str, status: int = 200, **extra: Any) -> Response:
    from sdd_git.records import changes

    site = site_of(request)
    root = root_of(request)
    try:
        change = changes.load(root, change_id)
    except SddError as exc:
        return site.render(
            request,
            "missing.html",
            status=404,
            what=f"change {change_id}",
            error=exc.message,
            hint=exc.hint,
        )
    return site.render(
        request,
        "group.html",
        status=status,
        change=change,
        group=_group_of(root, change.id),
        **extra,
    )


async def group_page(request: Request) -> Response:
    return await run_in_threadpool(_group_view, request, request.path_params["change"])


async def group_say(request: Request) -> Response:
    """`sdd group create ch-NNNN --change CH-NNNN` the first time, then `sdd group say`."""
    from sdd_git.network import groups
    from sdd_git.records import changes

    site = site_of(request)
    root = root_of(request)
    change_id = request.path_params["change"]
    text = (await form_of(request)).get("words", "")

    def say() -> tuple[dict[str, Any], Any, bool]:
        change = changes.load(root, change_id)
        if not text.strip():  # before the group is made: no group for a message never sent
            raise UsageError("write your message first")
        name = group_name(change.id)
        created = not groups.group_path(root, name).is_file()
        if created:
            groups.create(root, name, change=change.id)
        message, group = groups.say(root, name, text)
        return message, group, created

    try:
        message, group, created = await run_in_threadpool(say)
    except SddError as exc:
        return await run_in_threadpool(
            _group_view, request, change_id, 400, error=exc.message, hint=exc.hint
        )
    if created:
        site.logged("group create", group=group.name, change=change_id)
    site.logged("group say", group=group.name, change=change_id, message=message["id"])
    reached = ", ".join(m["role"] for m in message["to"]) or "nobody"
    return await run_in_threadpool(
        _group_view,
        request,
        change_id,
        notice=f"Sent to {reached}: each has it in its own conversation.",
    )


ROUTES = [
    Route("/changes/{change}/group", group_page),
    Route("/changes/{change}/group", group_say, methods=["POST"]),
]
