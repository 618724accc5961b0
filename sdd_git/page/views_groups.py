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
    """The change's group, or None before her first message to it. A group of that name made
    for anything else (`sdd group create ch-0002 --change CH-0001`) is not this change's: it is
    refused, never shown or talked to as if it were."""
    from sdd_git.network import groups

    name = group_name(change_id)
    if not groups.group_path(root, name).is_file():
        return None
    group = groups.load(root, name)
    if group.change != change_id:
        raise NameTaken(
            f"the group {name} is not {change_id}'s: it was made for {group.source}",
            hint=f'talk to it with: sdd group say {name} "..."; for {change_id}\'s roles, '
            f"make a group under another name: sdd group create NAME --change {change_id}",
        )
    return group


class NameTaken(UsageError):
    """The page's name for a change's group names another group."""


def _group_view(request: Request, change_id: str, status: int = 200, **extra: Any) -> Response:
    from sdd_git.records import changes

    site = site_of(request)
    root = root_of(request)
    try:
        change = changes.load(root, change_id)
    except SddError as exc:
        return site.missing(request, f"change {change_id}", exc)
    try:
        group = _group_of(root, change.id)
    except NameTaken as exc:
        group, status = None, 409
        extra = {**extra, "error": exc.message, "hint": exc.hint, "taken": True}
    return site.render(request, "group.html", status=status, change=change, group=group, **extra)


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
        # Refused before the group is made: no group for a message never sent.
        if not text.strip():
            raise UsageError("write your message first")
        if len(text.strip()) > groups.MESSAGE_LIMIT:
            raise UsageError(
                f"the message is {len(text.strip()):,} characters; a group message takes at "
                f"most {groups.MESSAGE_LIMIT:,}"
            )
        created = _group_of(root, change.id) is None
        if created:
            groups.create(root, group_name(change.id), change=change.id)
        message, group = groups.say(root, group_name(change.id), text)
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
