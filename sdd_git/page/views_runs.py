"""Runs as she sees them: a run in progress (live over server-sent events), a stop in plain
words with her choices, and the log of any run, readable."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from sdd_git.errors import SddError
from sdd_git.page.jobs import Job
from sdd_git.page.site import form_of, root_of, see_other, shown, site_of
from sdd_git.page.views_trust import started

POLL_SECONDS = 0.05
CHOICES = {
    "allow_once": "Allow once",
    "allow_for_run": "Allow for this run",
    "always_allow": "Always allow",
    "deny": "Deny",
}


def outcome_of(job: Job, site: Any = None) -> dict[str, Any]:
    """What the job came to, in words, and where she goes next. `site` names the roles."""
    from sdd_git.page.herwords import capital, for_her, hint_for_her

    if not job.done.is_set():
        return {"done": False}

    def called(role: str) -> str:
        return str(site.called(role)) if site is not None else role

    if job.waits:
        names = ", ".join(getattr(i, "name", "") for i in job.waits)
        return {
            "done": True,
            "text": f"Nothing ran yet: it waits for you to confirm {names}, which arrived or "
            "changed without your confirmation.",
            "next": "/trust",
            "next_label": "See what waits for you",
        }
    if job.error is not None:
        back = f"/changes/{job.change}" if job.change else "/"
        return {
            "done": True,
            "text": f"It could not go on: {for_her(job.error)}",
            "hint": hint_for_her(job.hint),
            "next": back,
            "next_label": "Back to the change" if job.change else "Back home",
            "failed": True,
            "run": job.run,
        }
    made = job.outcome
    stop = getattr(made, "stop", None)
    status = str(getattr(made, "status", ""))
    text = for_her(getattr(made, "message", "") or "")
    if text.lower() in ("done", status):  # the status again: her progress said it
        text = ""
    elif text:
        text = capital(text) + ("" if text.endswith((".", "!", "?")) else ".")
    reply = getattr(made, "reply", None)
    run = getattr(made, "run_id", None) or job.run
    if reply:
        text = f"{text} It says: “{reply}”".strip()
    if stop is not None and stop.kind in ("approval", "draft"):
        from sdd_git.page.herwords import stop_line

        root = site.root.path if site is not None and site.root is not None else None
        return {
            "done": True,
            "text": f"{stop_line(stop, root, called(stop.role))}.",
            "next": f"/stops/{stop.id}",
            "next_label": "Read it and choose",
            "run": run,
        }
    if stop is not None:  # a reading or a plan: answered on the change's page
        said = {"reading": "A short reading is drafted", "plan": "A short plan is drafted"}
        return {
            "done": True,
            "text": f"{said.get(stop.kind, 'It waits for you')}: read it, "
            "then accept or correct it, or leave it for now.",
            "next": f"/changes/{stop.change or job.change}",
            "next_label": f"Read the {stop.kind} and answer",
            "run": run,
        }
    if getattr(made, "nodes", None) is not None:  # the network, after `sdd work`
        waiting = next((n for n in made.nodes if n.state == "stopped" and n.stop), None)
        if waiting is not None:
            return {
                "done": True,
                "text": f"Step {waiting.id} of the plan: {called(waiting.owner)} asks you before "
                "it acts.",
                "next": f"/stops/{waiting.stop}",
                "next_label": "Read it and choose",
            }
    back = f"/changes/{job.change}" if job.change else "/"
    return {
        "done": True,
        "text": text or "Done.",
        "next": back,
        "next_label": "Back to the change" if job.change else "Back home",
        "run": run,
        "hint": hint_for_her(getattr(made, "hint", None)),
        "failed": status in ("failed", "stalled", "no-spec", "interrupted", "no-draft"),
    }


async def job_page(request: Request) -> Response:
    site = site_of(request)
    job = site.jobs.get(request.path_params["job"])
    if job is None:
        return site.render(request, "missing.html", status=404, what="this piece of work")
    return site.render(request, "job.html", job=job, outcome=outcome_of(job, site))


async def job_events(request: Request) -> Response:
    """Server-sent events: each new progress line, then the outcome; the stream ends there."""
    site = site_of(request)
    job = site.jobs.get(request.path_params["job"])
    if job is None:
        return Response("no such job", status_code=404)
    start = _line_number(request.query_params.get("from", ""))

    async def stream() -> AsyncIterator[str]:
        sent = start
        while True:
            while sent < len(job.lines):
                # As text, as the page's templates show it (the script puts it in textContent).
                yield f"event: line\ndata: {json.dumps(shown(job.lines[sent]))}\n\n"
                sent += 1
            if job.done.is_set() and sent >= len(job.lines):
                made = outcome_of(job, site)
                outcome = {key: shown(value) for key, value in made.items()}
                yield f"event: outcome\ndata: {json.dumps(outcome)}\n\n"
                return
            if await request.is_disconnected():
                return
            await asyncio.sleep(POLL_SECONDS)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


def _line_number(given: str) -> int:
    """The first progress line to send: the page's own `from=N`; anything else starts at 0."""
    return int(given) if given.isascii() and given.isdigit() else 0


def _stop_view(request: Request, stop_id: str, status: int = 200, **extra: Any) -> Response:
    from sdd_git.page.herwords import at_time
    from sdd_git.runner import stops
    from sdd_git.runner.words import heading

    site = site_of(request)
    root = root_of(request)
    try:
        stop = stops.load(root, stop_id)
    except SddError:
        return site.render(request, "stop_gone.html", status=404)
    if stop.kind in ("reading", "plan"):
        return see_other(f"/changes/{stop.change}")
    args = dict(stop.args)
    purpose = args.pop("purpose", None)
    offered = [
        (key, label)
        for key, label in CHOICES.items()
        if label.lower() in stop.choices or (key == "allow_once" and "allow" in stop.choices)
    ]
    if not offered:
        offered = [("allow_once", "Allow once"), ("deny", "Deny")]
    who = site.called(stop.role)
    if stop.kind == "draft":
        action = f"Let {who[:1].lower()}{who[1:]} go on with its plan for the work"
    else:
        action = heading(stop.tool, dict(stop.args), root.path)
    return site.render(
        request,
        "stop.html",
        status=status,
        stop=stop,
        who=who,
        action=action,
        args=args,
        shown_args={key: _shown_value(value) for key, value in args.items()},
        purpose=purpose,
        offered=offered,
        expires=at_time(stop.expires_at) if stop.expires_at is not None else None,
        **extra,
    )


def _shown_value(value: Any) -> str:
    """An input as she reads it: text as it is, a list one item a line, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return "\n".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, indent=2)


async def stop_page(request: Request) -> Response:
    return await run_in_threadpool(_stop_view, request, request.path_params["stop"])


async def stop_answer(request: Request) -> Response:
    """`sdd allow STOP [--always]` / `sdd deny STOP`, run in the background like the run itself."""
    from sdd_git.runner import stops
    from sdd_git.runner.run import answer

    site = site_of(request)
    root = root_of(request)
    stop_id = request.path_params["stop"]
    form = await form_of(request)
    choice = form.get("choice", "")
    if choice == "later":
        return see_other("/")
    if choice not in CHOICES:
        return await run_in_threadpool(
            _stop_view,
            request,
            stop_id,
            400,
            error="choose Allow once, Always allow, Deny or Later",
        )
    try:
        shown = await run_in_threadpool(stops.load, root, stop_id)
    except SddError:
        return site.render(request, "stop_gone.html", status=404)
    job = site.jobs.start(
        f"{site.called(shown.role)} goes on after your answer",
        shown.change,
        lambda told: answer(root, stop_id, choice, on_event=told),
        ready_on="decision",
        receipt=f"You chose {CHOICES[choice]}.",
        role=shown.role,
    )
    site.logged(CHOICES[choice].lower(), stop=stop_id, run=shown.run, job=job.id)
    return await started(request, job)


async def runs_page(request: Request) -> Response:
    """Her runs, newest first; `q=` keeps those whose words hold every word she typed
    (`sdd role runs --search`, through the same index)."""
    from sdd_git.runner.runfilters import Filters
    from sdd_git.runner.runindex import query

    site = site_of(request)
    root = root_of(request)
    words = " ".join(request.query_params.get("q", "").split())[:200]
    found = await run_in_threadpool(query, root, Filters(search=words or None))
    return site.render(request, "runs.html", runs=found, q=words)


async def run_log_page(request: Request) -> Response:
    from sdd_git.runner.control import event_text
    from sdd_git.runner.runlog import log_path, read_events

    site = site_of(request)
    root = root_of(request)
    run_id = request.path_params["run"]
    try:
        path = log_path(root, run_id)
    except SddError:
        path = None
    if path is None or not path.is_file():
        return site.render(request, "missing.html", status=404, what=f"run {run_id}")
    events = await run_in_threadpool(read_events, path)
    lines = [{"ts": e.get("ts"), "event": e.get("event"), "text": event_text(e)} for e in events]
    return site.render(request, "runlog.html", run=run_id, lines=lines)


ROUTES = [
    Route("/jobs/{job}", job_page),
    Route("/jobs/{job}/events", job_events),
    Route("/stops/{stop}", stop_page),
    Route("/stops/{stop}", stop_answer, methods=["POST"]),
    Route("/runs", runs_page),
    Route("/runs/{run}", run_log_page),
]
