"""The one dispatch: every tool call a model asks for, from any path (the turn loop, the answer
to a stop, the accuracy loop, and what comes later: handoffs, routines, connectors), passes here
and only here: guard -> gate -> boundary -> execute -> log.

Nothing else in sdd calls a tool's executor (a test walks the code for it). The guard rejects what
no role may do by any route; the gate refuses every action on a change with no accepted section;
the boundary decides whether a consequential call runs or stops for the person."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from sdd_git.providers.base import Message, ToolCall
from sdd_git.runner import guard, logevents, stops
from sdd_git.runner.boundary import BoundaryIndex
from sdd_git.runner.notify import start_waiting
from sdd_git.runner.state import RunState, approval_timeout, tool_context, tool_result
from sdd_git.runner.words import describe
from sdd_git.shellpolicy.decision import strictest
from sdd_git.tools.base import ToolFailed
from sdd_git.tools.catalog import TOOL_CLASSES

# With no accepted section for the change, no role takes these, whatever its `produces`: the
# gate is on the action, not on the role's label. A first reading may still be drafted.
GATED_TOOLS = frozenset(
    {name for name, kind in TOOL_CLASSES.items() if kind == "consequential"}
    | {"draft_scenarios", "propose_qa_result"}
)


@dataclass(frozen=True)
class Dispatched:
    stop: stops.Stop | None = None  # the person must decide
    no_spec: str | None = None  # the gate refused it: why, in words (the run ends at exit 4)


def dispatch(
    state: RunState,
    call: ToolCall,
    *,
    offered: tuple[str, ...] | None = None,
    messages: list[Message] | None = None,
    thread: str | None = None,
    allowed_by: str | None = None,
    logged: bool = False,
    caller: str | None = None,
) -> Dispatched:
    """Take one tool call through the wall. `allowed_by` is the person's answer to the stop this
    call raised (allow_once, allow_for_run, always_allow): the boundary is then already passed,
    but the guard and the gate are checked again, as the record stands now. `logged`: its
    `tool_call` event is already in the log (a call resumed after a stop). `caller`: the role
    that asked, when it is not the run's author (the critic, in the accuracy loop)."""
    offered = state.offered if offered is None else offered
    if not logged:
        state.log.append(
            logevents.ToolCall(caller or state.role.name, call.name, call.args, call.id, thread)
        )
    unparsed = getattr(call, "error", None)  # the provider could not parse the arguments
    if unparsed:
        # Said as it is: a model told "path outside the product folder" for broken JSON retries
        # the same path, not the same call with valid JSON.
        said = (
            unparsed
            if "not valid JSON" in unparsed
            else f"your arguments were not valid JSON: {unparsed}"
        )
        state.log.append(logevents.Rejected(call.name, "bad_arguments", said, thread))
        tool_result(
            state,
            call,
            f"Rejected: {said}. Nothing was done; send the call again with the arguments as one "
            "valid JSON object.",
            messages,
            thread,
        )
        return Dispatched()
    verdict = guard.check(
        call.name,
        call.args,
        state.root.path,
        offered,
        connectors=state.connectors,
        change=state.change,
    )
    if (
        verdict.forbidden
        and verdict.code == "not_offered"
        and call.name in GATED_TOOLS
        and not state.accepted
    ):
        # A role not offered an action still meets the gate first: with no accepted section the
        # run ends at exit 4 whatever the role's `produces`, as the contract says.
        return Dispatched(no_spec=_no_spec_words(state, call))
    if verdict.forbidden:
        state.log.append(logevents.Rejected(call.name, verdict.code, verdict.message, thread))
        tool_result(
            state,
            call,
            f"Rejected: {verdict.message}. This action is not available to roles.",
            messages,
            thread,
        )
        return Dispatched()
    if call.name in GATED_TOOLS and not state.accepted:
        return Dispatched(no_spec=_no_spec_words(state, call))
    kind = TOOL_CLASSES[call.name]
    if kind == "consequential" and allowed_by is not None and state.rehearsal:
        allowed_by = None  # a rehearsal runs nothing, not even a call someone answered
    if kind == "consequential" and allowed_by is None:
        from sdd_git.sandbox.choose import current

        if state.boundary is None:
            rules = state.role.boundary
            if state.node_ask_first:  # a plan node's stops add to the owner's, never widen
                rules = dataclasses.replace(rules, ask_first=rules.ask_first + state.node_ask_first)
            if state.unattended:  # in CI nobody answers, and no earlier answer stands in
                rules = dataclasses.replace(rules, always_allow=())
            # Her own answers in this very run stand, in CI too: no earlier answer of another
            # run does (`unattended` empties only the role file's saved rules).
            state.boundary = BoundaryIndex(rules, frozenset(state.for_run))
        ruled = state.boundary.decide(
            call.name,
            call.args,
            certain=verdict.certain,
            runs_code=verdict.runs_code,
            sandboxed=current().working,
        )
        decision = strictest(verdict, ruled)
        if state.rehearsal:  # `sdd routine test`: said, never run, whatever the boundary says
            would = "stop for the person" if not decision.allowed else "run under a saved rule"
            state.log.append(logevents.Rehearsed(call.name, call.args, would))
            action = describe(call.name, call.args, root=state.root.path)
            tool_result(
                state,
                call,
                f"Not run: this is a test of a routine, and no action runs in a test. In a real "
                f"run, {action} would {would}. Say what you would do next and finish.",
                messages,
                thread,
            )
            return Dispatched()
        if not decision.allowed:
            return Dispatched(stop=_stop(state, call, decision.code))
        # Not her answer on this call: a rule she saved before, or her answer earlier in this run.
        allowed_by = "for_run" if ruled.code == "allow_for_run" else "saved_rule"
    _execute(state, call, kind, allowed_by, messages, thread)
    return Dispatched()


def _execute(
    state: RunState,
    call: ToolCall,
    kind: str,
    allowed_by: str | None,
    messages: list[Message] | None,
    thread: str | None,
) -> None:
    from sdd_git.tools.toolbox import TOOLS

    tool = TOOLS.get(call.name)
    outcome = None
    failed: str | None = None
    if tool is None:
        text = failed = f"{call.name} is not available to roles in this version."
    else:
        try:
            outcome = tool.run(call.args, tool_context(state))
            text, failed = outcome.text, outcome.not_done  # e.g. no connector: nothing was done
        except ToolFailed as exc:
            text = f"{call.name} failed: {exc}"
            failed = str(exc)
    if outcome is not None and outcome.tampered:
        lost = outcome.lost
        state.log.append(
            logevents.Rejected(
                call.name,
                "tampered",
                "it changed protected files, which were put back: "
                + ", ".join(t for t in outcome.tampered if t not in lost)
                + (f"; could not be put back: {', '.join(lost)}" if lost else ""),
            )
        )
    if outcome is not None and failed is None:  # what a tool reports for the network's record
        if outcome.artifact is not None:
            state.log.append(logevents.KINDS["artifact"].from_fields(outcome.artifact))
        if outcome.handoff is not None:
            state.log.append(logevents.KINDS["handoff"].from_fields(outcome.handoff))
    if kind == "consequential" and failed is None:
        state.log.append(logevents.ActionDone(call.name, call.args, allowed_by))
    elif kind == "consequential":
        # Allowed, tried, and not done: never listed as done when the run fails later.
        state.log.append(logevents.ActionFailed(call.name, call.args, allowed_by, failed))
    tool_result(state, call, text, messages, thread)


def _no_spec_words(state: RunState, call: ToolCall) -> str:
    where = (
        f"{state.change} has no accepted spec section"
        if state.change
        else "there is no change with an accepted spec section"
    )
    return f"{state.role.name} asked to use {call.name}, and {where}"


def _stop(state: RunState, call: ToolCall, reason: str) -> stops.Stop:
    from sdd_git.sandbox.choose import current

    box = current()
    now = state.clock()
    # The stop file is kept under .sdd/local like the log: no secret in it, in any form. The
    # answer acts on the logged call, which the run log masked the same way.
    args = json.loads(state.masker(json.dumps(call.args, ensure_ascii=False)))
    # "Always allow" and "allow for this run" never after ask-first (ask first wins), never with
    # no sandbox (no answer may stand in for a later command that nothing holds), never in CI
    # (no saved rule counts there, and a reviewer answers one stop at a time: allow or deny).
    offer_always = reason == "not allowed" and not state.in_ci
    stop = stops.Stop(
        id=stops.new_stop_id(),
        run=state.run_id,
        role=state.role.name,
        kind="approval",
        action=describe(call.name, args, sandbox=box.label, root=state.root.path),
        choices=stops.APPROVAL_CHOICES if offer_always else stops.ASK_FIRST_CHOICES,
        origin=state.origin,
        created_at=now,
        expires_at=None
        if state.origin == "person"
        else now + approval_timeout(state.root, ci=state.in_ci),
        tool=call.name,
        args=args,
        call_id=call.id,
        change=state.change,
        sandbox=box.label,
    )
    start_waiting(state.root, stop)
    state.log.append(
        logevents.Stop(
            stop.id,
            stop.kind,
            stop.action,
            tool=call.name,
            args=call.args,
            choices=list(stop.choices),
            call_id=call.id,
            because=reason,
            sandbox=box.label,
            expires_at=stop.as_json()["expires_at"],
        )
    )
    return stop
