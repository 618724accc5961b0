"""What waits for her confirmation (CONTRACT §13), as `sdd trust review | accept | drop` show
and do it: each file that grants something she has not confirmed, in words and with where it
came from, and each event that waits on one. Confirming or dropping is her action, logged as the
page's; the ledger itself says how it was confirmed (`accept` records that).

Every confirm form carries the sha256 of what the page showed (CONTRACT §12): a file that
changed after she read it is refused and shown again, never confirmed unread."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sdd_git.errors import SddError
from sdd_git.page.jobs import Job
from sdd_git.page.site import form_of, root_of, see_other, site_of
from sdd_git.root import Root

REVIEW_PAGE = "/trust"


@dataclass(frozen=True)
class File:
    """One file that waits for her, as the page says it."""

    key: str  # the ledger's key: what the form names and `accept` matches
    name: str  # "role helper", "the settings (.sdd/config.yaml)"
    changes: tuple[str, ...]
    came_from: str | None  # "last changed in commit abc1234, by Alex", when git knows
    shown: str  # the sha256 of what the page shows of it, carried by its form
    confirmable: bool  # a file that does not load has nothing she could confirm


@dataclass(frozen=True)
class Event:
    id: str
    sentence: str  # "helper/on-merge for the event pr-merged abc123 waits on role helper"
    at: str


@dataclass(frozen=True)
class Waits:
    """Everything that waits for her confirmation; empty when nothing does."""

    files: tuple[File, ...] = ()
    events: tuple[Event, ...] = ()
    notes: tuple[str, ...] = ()
    shown_all: str = field(default="")  # the hash the "Confirm all" form carries

    def __bool__(self) -> bool:
        return bool(self.files or self.events or self.notes)


def shown_hash(item: Any) -> str:
    """The sha256 of what the page shows of a file (its key and each change in words), and of
    the grant surface a yes would confirm: a change the words do not tell apart still differs."""
    from sdd_git.trust import ledger

    try:
        surface = "" if item.surface is None else ledger.digest(item.surface)
    except (TypeError, ValueError):  # not JSON: the ledger could not hold it either
        surface = repr(item.surface)
    text = "\0".join([item.key, *item.changes, surface])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _all_hash(files: tuple[File, ...]) -> str:
    text = "\n".join(sorted(f.shown for f in files if f.confirmable))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _came_from(reviewed: Any) -> str | None:
    if not reviewed.commit:
        return None
    who = f", by {reviewed.author}" if reviewed.author else ""
    return f"last changed in commit {reviewed.commit}{who}"


def _event_sentence(entry: Any) -> str:
    names = [str(i.get("name") or i.get("path") or "") for i in entry.items]
    names = [n for n in dict.fromkeys(names) if n]
    if not names:
        return f"{entry.what} waits for you"
    return f"{entry.what} waits on {_and(names)}"


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def waits_of(root: Root) -> Waits:
    """What `sdd trust review` shows, in the page's words. A record that cannot be read does
    not take her home page down: it is said instead."""
    from sdd_git.events.confirm import review

    try:
        found = review(root)
    except SddError as exc:
        return Waits(notes=(f"what waits for your confirmation cannot be told: {exc.message}",))
    files = tuple(
        File(
            r.item.key,
            r.item.name,
            tuple(r.item.changes) or ("it changed since you confirmed it",),
            _came_from(r),
            shown_hash(r.item),
            r.item.surface is not None,
        )
        for r in found.items
    )
    events = tuple(Event(w.id, _event_sentence(w), w.at) for w in found.waiting)
    return Waits(files, events, tuple(found.notes), _all_hash(files))


def home_values(root: Root) -> dict[str, Any]:
    """What the home page's "Waiting for you" adds to the stops."""
    return {"trust": waits_of(root)}


def _trust_view(request: Request, status: int = 200, **extra: Any) -> Response:
    site = site_of(request)
    root = root_of(request)
    return site.render(request, "trust.html", status=status, waits=waits_of(root), **extra)


async def trust_page(request: Request) -> Response:
    return await run_in_threadpool(_trust_view, request)


async def _again(request: Request, status: int, error: str, hint: str | None = None) -> Response:
    return await run_in_threadpool(_trust_view, request, status, error=error, hint=hint)


def _confirmed_words(confirmed: list[Any], released: list[Any]) -> str:
    if confirmed:
        said = f"Confirmed {_and([i.name for i in confirmed])}: it counts as yours from now on."
    else:
        said = "Nothing was left to confirm."
    if released:
        said += f" Running again: {'; '.join(w.what for w in released)}."
    return said


async def trust_confirm(request: Request) -> Response:
    """`sdd trust accept PATH`, for the one file she read, as she read it."""
    from sdd_git.events.confirm import accept

    site = site_of(request)
    root = root_of(request)
    form = await form_of(request)
    key, shown = form.get("path", ""), form.get("shown", "")
    if not key:
        return await _again(request, 400, "choose a file to confirm")
    now = await run_in_threadpool(waits_of, root)
    current = next((f for f in now.files if f.key == key), None)
    if current is None:
        return await _again(
            request, 409, f"{key} no longer waits for your confirmation; nothing was confirmed"
        )
    if shown != current.shown:
        return await _again(
            request,
            409,
            f"{current.name} changed since this page showed it; nothing was confirmed",
            hint="read what it grants now, below, and confirm it again if you agree",
        )
    try:
        confirmed, released = await run_in_threadpool(accept, root, [key])
    except SddError as exc:
        return await _again(request, 400, exc.message, exc.hint)
    site.logged("trust accept", paths=[key], shown=shown)
    said = _confirmed_words(confirmed, released)
    return await run_in_threadpool(_trust_view, request, notice=said)


async def trust_confirm_all(request: Request) -> Response:
    """`sdd trust accept --all`, for exactly the files the page showed her."""
    from sdd_git.events.confirm import accept

    site = site_of(request)
    root = root_of(request)
    form = await form_of(request)
    shown = form.get("shown", "")
    now = await run_in_threadpool(waits_of, root)
    if shown != now.shown_all:
        return await _again(
            request,
            409,
            "what waits for your confirmation changed since this page showed it; nothing was "
            "confirmed",
            hint="read it again, below, and confirm it if you agree",
        )
    keys = [f.key for f in now.files if f.confirmable]
    try:
        # Named, not None: a file that arrived since the page was read is not confirmed
        # unread. With none to name, what waited is let run (its grants are hers already).
        confirmed, released = await run_in_threadpool(accept, root, keys or None)
    except SddError as exc:
        return await _again(request, 400, exc.message, exc.hint)
    site.logged("trust accept", paths=keys, all=True, shown=shown)
    return await run_in_threadpool(
        _trust_view, request, notice=_confirmed_words(confirmed, released)
    )


async def trust_drop(request: Request) -> Response:
    """`sdd trust drop ID`: what waited never runs."""
    from sdd_git.events.confirm import drop

    site = site_of(request)
    root = root_of(request)
    form = await form_of(request)
    wanted = form.get("id", "")
    if not wanted:
        return await _again(request, 400, "choose what to drop")
    try:
        dropped = await run_in_threadpool(drop, root, [wanted])
    except SddError as exc:
        return await _again(request, 400, exc.message)
    site.logged("trust drop", ids=[wanted])
    said = f"Dropped: {'; '.join(w.what for w in dropped)}. It will not run."
    return await run_in_threadpool(_trust_view, request, notice=said)


def _waits_view(request: Request, items: tuple[Any, ...], change: str | None) -> Response:
    """The plain page for what did not start: it waits for her confirmation of `items`."""
    site = site_of(request)
    root = root_of(request)
    now = {f.key: f for f in waits_of(root).files}
    files = [
        now.get(i.key) or File(i.key, i.name, tuple(i.changes), None, "", False) for i in items
    ]
    return site.render(request, "waits.html", status=409, files=files, change=change)


async def waits_page(
    request: Request, items: tuple[Any, ...], change: str | None = None
) -> Response:
    return await run_in_threadpool(_waits_view, request, items, change)


async def started(request: Request, job: Job) -> Response:
    """After the page started `job`: its page, or, when it could not start because a grant it
    needs waits for her, the plain page that says what waits and where to confirm it."""
    await run_in_threadpool(job.settle)
    if job.done.is_set() and job.waits:
        return await waits_page(request, job.waits, job.change)
    return see_other(f"/jobs/{job.id}")


ROUTES = [
    Route(REVIEW_PAGE, trust_page),
    Route(f"{REVIEW_PAGE}/confirm", trust_confirm, methods=["POST"]),
    Route(f"{REVIEW_PAGE}/confirm-all", trust_confirm_all, methods=["POST"]),
    Route(f"{REVIEW_PAGE}/drop", trust_drop, methods=["POST"]),
]
