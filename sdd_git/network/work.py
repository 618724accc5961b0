"""`sdd work CH`: route a change by what is accepted, then run whoever the route names."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from sdd_git.network.drive import Finished, drive
from sdd_git.network.route import Route, decide
from sdd_git.records.plan import plan_accepted, plan_path
from sdd_git.root import Root
from sdd_git.runner import stops
from sdd_git.runner.notify import start_waiting
from sdd_git.runner.state import EXIT_ERROR, EXIT_STOPPED, RunOutcome

DEFAULT_TASKS = {
    "reading": "Draft the reading of {change}: what does the person mean, and how can she tell?",
    "service": "Do the work of {change}, as its accepted spec sections say.",
    "plan": "Draft the plan of {change}: which scope does what, in which order, returning what.",
    "connection": "Do your side of {change}, the connection between {scope}, as its accepted "
    "spec says; then hand the other side to {other} with handoff, citing the spec's section.",
}
DRAFTED = {"reading": "reading", "plan": "plan"}  # routes whose job is a draft for her


def work(
    root: Root,
    change_id: str,
    task: str | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> RunOutcome | Finished:
    """Run the change's route once: a reading or plan already waiting for her is shown again
    without a model call; otherwise the route's role runs, with the route in its log."""
    from sdd_git.runner.run import RunRequest, start
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    _require_parts(root)
    route = decide(root, change_id)
    waiting = waiting_stop(root, route, change_id)
    if waiting is None and route.kind == "plan" and plan_path(root, change_id).exists():
        if plan_accepted(root, change_id) is not None:
            return drive(root, change_id, say)
        # Her plan is hers once drafted: one she edited (before or after an acceptance) is
        # never redrafted; it waits for her acceptance, with no model call.
        waiting = _plan_waits(root, route, change_id)
    if waiting is not None:
        return RunOutcome(
            waiting.run or None, "stopped", EXIT_STOPPED, waiting.action, stop=waiting
        )
    request = RunRequest(
        author=route.roles[0],
        task=task
        or DEFAULT_TASKS[route.kind].format(
            change=change_id, scope=route.scope, other=route.roles[-1]
        ),
        change=change_id,
        route=route.as_event(),
    )
    outcome = start(root, request, on_event=on_event)
    if route.kind in DRAFTED and outcome.status == "done":
        # The route's whole job was a draft for her; a run that ended without one did not do
        # it, and nothing waits for her: that is a failure, not "done".
        what = DRAFTED[route.kind]
        hint = f"run sdd work {change_id} again, or say more with --task"
        if route.kind == "reading":
            hint += f'; or write the reading yourself: sdd correct reading {change_id} "..."'
        said = " ".join((outcome.reply or "").split())
        said = said if len(said) <= 300 else said[:297] + "..."
        return dataclasses.replace(
            outcome,
            status="no-draft",
            exit_code=EXIT_ERROR,
            message=f"no {what} was drafted: {route.roles[0]} ended its run without drafting "
            f"the {what} of {change_id}" + (f'; it said: "{said}"' if said else ""),
            hint=hint,
            reply=None,  # said in the message: the error is what she reads first
            reply_id=None,
        )
    return outcome


def _require_parts(root: Root) -> None:
    """The product's parts route the work (who leads, who owns): they count once confirmed."""
    from sdd_git.runner import trusted
    from sdd_git.trust.pending import ledger_for, product_item

    parts = product_item(root, ledger_for(root))
    if parts is not None:
        trusted.require(root, [], [parts], doing="routing the work")


def waiting_stop(root: Root, route: Route, change_id: str) -> stops.Stop | None:
    """The reading or plan stop of this change that still waits for her, if any."""
    kind = {"reading": "reading", "plan": "plan"}.get(route.kind)
    for stop in stops.pending(root):  # answered readings and plans are cleared here
        if stop.kind == kind and stop.change == change_id:
            return stop
    return None


def _plan_waits(root: Root, route: Route, change_id: str) -> stops.Stop:
    """A plan stop for the plan as the file is now: answered, as any plan stop is, by her
    acceptance (or by her next edit, which raises the next one). It belongs to the lead's run
    that drafted the plan, when there is one."""
    from sdd_git.network.record import lead_run
    from sdd_git.records.plan import plan_hash

    lead = route.roles[0]
    where = f"changes/{change_id}/plan.yaml"
    stop = stops.Stop(
        id=stops.new_stop_id(),
        run=lead_run(root, change_id, lead) or "",
        role=lead,
        kind="plan",
        action=f"The plan of {change_id} ({where}) waits for your acceptance: nothing runs "
        "for it, and no role redrafts it, until you accept it. Read it and accept it (sdd "
        f"accept plan {change_id}), correct it (edit the file, then accept it), or leave it "
        "for now.",
        choices=stops.PLAN_CHOICES,
        origin="person",
        created_at=time.time(),
        expires_at=None,
        args={"hash": plan_hash(plan_path(root, change_id))},
        change=change_id,
    )
    start_waiting(root, stop)
    return stop
