"""Her journey: her words, the reading, the plan, scenarios and their results, failures, the
release. Each action calls the one core function its person command calls, and nothing more."""

from __future__ import annotations

import hashlib
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sdd_git.errors import SddError
from sdd_git.page.site import form_of, root_of, see_other, site_of
from sdd_git.page.views_trust import home_values, started
from sdd_git.root import Root


def _roles(root: Root) -> list[Any]:
    from sdd_git.roles.registry import load_registry

    return [r for r in load_registry(root).roles if not r.hidden]


def _open_stops(root: Root, change: str | None = None) -> list[Any]:
    from sdd_git.runner import stops

    return [s for s in stops.pending(root) if change is None or s.change == change]


async def home(request: Request) -> Response:
    site = site_of(request)
    if site.root is None:
        return see_other("/folder")
    from sdd_git.records import changes

    root = site.root
    waiting = await run_in_threadpool(home_values, root)
    return site.render(
        request,
        "home.html",
        changes=changes.list_all(root),
        stops=_open_stops(root),
        **waiting,
    )


async def change_new(request: Request) -> Response:
    site = site_of(request)
    root = root_of(request)
    form = await form_of(request)
    words = form.get("words", "")
    from sdd_git.records import changes

    try:
        if form.get("bug"):
            pack = changes.create(
                root,
                words,
                bug=True,
                happened=form.get("happened", ""),
                expected=form.get("expected", ""),
            )
        else:
            pack = changes.create(root, words)
    except SddError as exc:
        return site.render(
            request,
            "home.html",
            status=400,
            changes=changes.list_all(root),
            stops=_open_stops(root),
            **await run_in_threadpool(home_values, root),
            error=exc.message,
            hint=exc.hint,
            words=words,
        )
    site.logged("change new", words=words, change=pack.id)
    return see_other(f"/changes/{pack.id}")


def change_view(request: Request, change_id: str, **extra: Any) -> Response:
    from sdd_git.network.drive import status as network_status
    from sdd_git.page.herwords import missing_first
    from sdd_git.page.releases import releases_of
    from sdd_git.records import changes, decisions, stages
    from sdd_git.records.plan import acceptance_of, plan_bytes, plan_path, read_plan
    from sdd_git.records.view import describe_change

    site = site_of(request)
    root = root_of(request)
    described = describe_change(root, change_id)
    pack = changes.load(root, change_id)
    plan = None
    plan_decision = None
    plan_file: dict[str, str] | None = None
    nodes: tuple[Any, ...] = ()
    try:
        path = plan_path(root, change_id)
        if path.is_file():
            # The hash her accept form carries is of the very bytes shown here.
            data = plan_bytes(path)
            plan, digest = read_plan(path)
            if hashlib.sha256(data).hexdigest() == digest:
                plan_file = {"text": data.decode("utf-8"), "hash": digest}
            accepted = acceptance_of(decisions.load(root), change_id, digest)
            plan_decision = accepted.id if accepted else None
            if plan_decision:
                nodes = network_status(root, change_id)
    except SddError as exc:
        extra.setdefault("error", exc.message)
    reading = next((s for s in described["sections"] if s["id"].endswith("#S1")), None)
    next_stage = {"reading": "build", "build": "verify", "verify": "release", "release": "done"}
    target = next_stage.get(pack.stage)
    # The gates the commands use; the page only says them as what she does first.
    blocked = stages.gate_problem(root, pack, target) if target else None
    release_block = stages.gate_problem(root, pack, "release")
    return site.render(
        request,
        "change.html",
        status=400 if extra.get("error") else 200,
        change=described,
        reading=reading,
        reading_accepted=any(s["state"] == "accepted" for s in described["sections"]),
        stops=_open_stops(root, change_id),
        roles=_roles(root),
        plan=plan,
        plan_file=plan_file,
        plan_decision=plan_decision,
        nodes=nodes,
        next_target=target,
        next_missing=missing_first(blocked),
        release_missing=missing_first(release_block),
        releases=releases_of(root, change_id),
        **extra,
    )


async def change_page(request: Request) -> Response:
    return await view(request, request.path_params["change"])


async def view(request: Request, change_id: str, **extra: Any) -> Response:
    return await run_in_threadpool(change_view, request, change_id, **extra)


async def _act(
    request: Request,
    change_id: str,
    action: str,
    args: dict[str, Any],
    call: Any,
    read: str = "text",
) -> Response:
    """Run one person action (off the event loop: it takes the record's lock); log it as the
    page's; show the change again, with what happened or the error. An acceptance of a `read`
    that changed since her page showed it records nothing and shows it again."""
    from sdd_git.records.acceptance import ChangedWhileRead

    site = site_of(request)
    try:
        result = await run_in_threadpool(call)
    except ChangedWhileRead:
        return await view(request, change_id, notice=CHANGED_WHILE_READ.format(what=read))
    except SddError as exc:
        return await view(request, change_id, error=exc.message, hint=exc.hint)
    site.logged(action, **args)
    return await view(request, change_id, notice=result)


CHANGED_WHILE_READ = (
    "Nothing was accepted: the {what} changed while you read it. Below is what it says now;"
    " accept it if it says what you mean."
)
UNSEEN = (
    "Nothing was accepted: the form did not say which text you read. Below is what it says;"
    " accept it if it says what you mean."
)


def shown_of(form: dict[str, str]) -> str | None:
    """The sha256 of the text her accept form showed (the same bytes the acceptance hashes);
    None when the form carries none."""
    return form.get("shown", "").strip() or None


async def reading_answer(request: Request) -> Response:
    from sdd_git.records import acceptance

    root = root_of(request)
    change_id = request.path_params["change"]
    form = await form_of(request)
    choice = form.get("choice", "")
    if choice == "accept":
        shown = shown_of(form)
        if shown is None:
            return await view(request, change_id, notice=UNSEEN)

        def accept() -> str:
            made = acceptance.accept_reading(root, change_id, shown=shown)
            return f"You accepted the reading, in your words: “{made.decision.words}”"

        return await _act(
            request, change_id, "accept reading", {"change": change_id}, accept, "reading"
        )
    if choice == "correct":
        words = form.get("words", "")

        def correct() -> str:
            if not words.strip():
                from sdd_git.errors import UsageError

                raise UsageError("write your reading in the box first")
            acceptance.correct_reading(root, change_id, words)
            return "The reading now holds your words. It is not accepted until you accept it."

        return await _act(
            request, change_id, "correct reading", {"change": change_id, "words": words}, correct
        )
    if choice == "take":
        shown = shown_of(form)
        if shown is None:
            return await view(request, change_id, notice=UNSEEN)

        def take() -> str:
            from sdd_git.records.proposals import take_proposal

            take_proposal(root, change_id, shown=shown)
            return (
                "The reading now holds the role's proposal. It is not accepted until you accept it."
            )

        return await _act(
            request, change_id, "take proposed reading", {"change": change_id}, take, "proposal"
        )
    return await view(
        request, change_id, notice="Not yet: the draft stays a draft. Nothing was changed."
    )


async def stage_next(request: Request) -> Response:
    from sdd_git.records import stages

    root = root_of(request)
    change_id = request.path_params["change"]

    def move() -> str:
        made = stages.advance(root, change_id)
        return f"{made.change.id} moved on from {made.before} to {made.after}."

    return await _act(request, change_id, "next", {"change": change_id}, move)


async def plan_accept(request: Request) -> Response:
    from sdd_git.records import acceptance

    root = root_of(request)
    change_id = request.path_params["change"]
    form = await form_of(request)
    words = form.get("words") or None
    shown = shown_of(form)
    if shown is None:
        return await view(request, change_id, notice=UNSEEN)

    def accept() -> str:
        acceptance.accept_plan(root, change_id, words, shown)
        return "You accepted the plan. Only now may anyone write for it."

    return await _act(
        request, change_id, "accept plan", {"change": change_id, "words": words}, accept, "plan"
    )


async def scenario_add(request: Request) -> Response:
    from sdd_git.records import acceptance

    root = root_of(request)
    change_id = request.path_params["change"]
    form = await form_of(request)
    args = {k: form.get(k, "") for k in ("title", "steps", "expected")}

    def add() -> str:
        made = acceptance.add_scenario(
            root, change_id, args["title"], args["steps"], args["expected"]
        )
        return f"Scenario {made.id} is written as a draft; accept it when it says what you mean."

    return await _act(request, change_id, "scenario add", {"change": change_id, **args}, add)


async def scenario_accept(request: Request) -> Response:
    from sdd_git.records import acceptance

    root = root_of(request)
    change_id, scenario = request.path_params["change"], request.path_params["scenario"]
    form = await form_of(request)
    optional = form.get("optional") == "yes"
    ref = f"{change_id}/{scenario}"
    shown = shown_of(form)
    if shown is None:
        return await view(request, change_id, notice=UNSEEN)

    def accept() -> str:
        acceptance.accept_scenario(root, ref, optional, shown=shown)
        kind = "optional" if optional else "required"
        return f"You accepted {scenario} as {kind}."

    return await _act(
        request,
        change_id,
        "accept scenario",
        {"ref": ref, "optional": optional},
        accept,
        f"scenario {scenario}",
    )


async def scenario_try(request: Request) -> Response:
    from sdd_git.records.view import describe_change

    site = site_of(request)
    root = root_of(request)
    change_id, scenario_id = request.path_params["change"], request.path_params["scenario"]
    described = describe_change(root, change_id)
    scenario = next((s for s in described["scenarios"] if s["id"] == scenario_id), None)
    if scenario is None:
        return site.render(
            request, "missing.html", status=404, what=f"scenario {change_id}/{scenario_id}"
        )
    steps = scenario.get("steps")
    if isinstance(steps, str):
        steps = [line for line in steps.splitlines() if line.strip()] or [steps]
    return site.render(request, "try.html", change=described, scenario=scenario, steps=steps or [])


async def qa_record(request: Request) -> Response:
    from sdd_git.records import acceptance

    root = root_of(request)
    change_id, scenario = request.path_params["change"], request.path_params["scenario"]
    form = await form_of(request)
    result, words = form.get("result", ""), form.get("words", "")
    ref = f"{change_id}/{scenario}"

    def record() -> str:
        if result not in ("pass", "fail"):
            from sdd_git.errors import UsageError

            raise UsageError("choose whether it worked (pass) or not (fail)")
        made = acceptance.record_qa(root, ref, result, words)
        worked = "it worked (pass)" if made.result == "pass" else "it did not work (fail)"
        return f"You recorded {scenario}: {worked}, in your words: “{made.words}”"

    return await _act(
        request, change_id, "qa record", {"ref": ref, "result": result, "words": words}, record
    )


async def failure_accept(request: Request) -> Response:
    from sdd_git.records import acceptance

    root = root_of(request)
    change_id, scenario = request.path_params["change"], request.path_params["scenario"]
    form = await form_of(request)
    words = form.get("words", "")
    ref = f"{change_id}/{scenario}"

    def accept() -> str:
        acceptance.accept_failure(root, ref, words)
        return f"You accepted that {scenario} fails, for now. The reading stays the same."

    return await _act(request, change_id, "accept failure", {"ref": ref, "words": words}, accept)


async def release_generate(request: Request) -> Response:
    from sdd_git.records import releases

    root = root_of(request)
    change_id = request.path_params["change"]
    form = await form_of(request)
    tag = form.get("tag", "").strip() or None

    def generate() -> str:
        made = releases.generate(root, [change_id], tag)
        said = f"Release {made.id} is written; its notes quote your words."
        if made.tag.name and not made.tag.written:
            said += f" The git tag {made.tag.name} was not written: {made.tag.reason}."
        return said + " Nothing was pushed or deployed."

    return await _act(
        request, change_id, "release generate", {"changes": [change_id], "tag": tag}, generate
    )


async def role_run(request: Request) -> Response:
    """`sdd role run NAME --task ... [--with CRITIC] --change CH`, in the background."""
    from sdd_git.runner.run import RunRequest, start

    site = site_of(request)
    root = root_of(request)
    change_id = request.path_params["change"]
    form = await form_of(request)
    author, task = form.get("role", ""), form.get("task", "")
    critic = form.get("critic") or None
    if not author or not task.strip():
        return await view(request, change_id, error="choose a role and say what it should do")
    run = RunRequest(author=author, task=task, critic=critic, change=change_id)
    job = site.jobs.start(
        f"{site.called(author)} is working on {change_id}",
        change_id,
        lambda told: start(root, run, on_event=told),
    )
    site.logged("role run", role=author, task=task, critic=critic, change=change_id, job=job.id)
    return await started(request, job)


async def work_run(request: Request) -> Response:
    """`sdd work CH`: route the change by what is accepted, and run it."""
    from sdd_git.network.work import work

    site = site_of(request)
    root = root_of(request)
    change_id = request.path_params["change"]

    def body(told: Any) -> Any:
        return work(
            root, change_id, on_event=told, say=lambda text: told({"event": "say", "text": text})
        )

    job = site.jobs.start(f"The work on {change_id}", change_id, body)
    site.logged("work", change=change_id, job=job.id)
    return await started(request, job)


ROUTES = [
    Route("/", home),
    Route("/changes", change_new, methods=["POST"]),
    Route("/changes/{change}", change_page),
    Route("/changes/{change}/reading", reading_answer, methods=["POST"]),
    Route("/changes/{change}/next", stage_next, methods=["POST"]),
    Route("/changes/{change}/plan", plan_accept, methods=["POST"]),
    Route("/changes/{change}/scenarios", scenario_add, methods=["POST"]),
    Route("/changes/{change}/scenarios/{scenario}/accept", scenario_accept, methods=["POST"]),
    Route("/changes/{change}/scenarios/{scenario}", scenario_try),
    Route("/changes/{change}/scenarios/{scenario}/result", qa_record, methods=["POST"]),
    Route("/changes/{change}/scenarios/{scenario}/failure", failure_accept, methods=["POST"]),
    Route("/changes/{change}/release", release_generate, methods=["POST"]),
    Route("/changes/{change}/run", role_run, methods=["POST"]),
    Route("/changes/{change}/work", work_run, methods=["POST"]),
]
