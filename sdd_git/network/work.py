"""`sdd work CH`: route a change by what is accepted, then run whoever the route names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sdd_git.network.drive import Finished, drive
from sdd_git.network.route import Route, decide
from sdd_git.root import Root
from sdd_git.runner import stops
from sdd_git.runner.state import EXIT_STOPPED, RunOutcome

DEFAULT_TASKS = {
    "reading": "Draft the reading of {change}: what does the person mean, and how can she tell?",
    "service": "Do the work of {change}, as its accepted spec sections say.",
    "plan": "Draft the plan of {change}: which scope does what, in which order, returning what.",
    "connection": "Do your side of {change}, the connection between {scope}, as its accepted "
    "spec says; then hand the other side to {other} with handoff, citing the spec's section.",
}


def work(
    root: Root,
    change_id: str,
    task: str | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> RunOutcome | Finished:
    """Run the change's route once: a reading or plan already waiting for her is shown again
    without a model call; otherwise the route's role runs, with the route in its log."""
    from sdd_git.records.person import refuse_inside_run
    from sdd_git.runner.run import RunRequest, start

    refuse_inside_run()
    _require_parts(root)
    route = decide(root, change_id)
    waiting = waiting_stop(root, route, change_id)
    if waiting is not None:
        return RunOutcome(waiting.run, "stopped", EXIT_STOPPED, waiting.action, stop=waiting)
    if route.kind == "plan" and _plan_is_accepted(root, change_id):
        return drive(root, change_id, say)
    request = RunRequest(
        author=route.roles[0],
        task=task
        or DEFAULT_TASKS[route.kind].format(
            change=change_id, scope=route.scope, other=route.roles[-1]
        ),
        change=change_id,
        route=route.as_event(),
    )
    return start(root, request, on_event=on_event)


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


def _plan_is_accepted(root: Root, change_id: str) -> bool:
    from sdd_git.records.plan import plan_accepted

    return plan_accepted(root, change_id) is not None
