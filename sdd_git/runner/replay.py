"""A paused run, rebuilt from its log: the same role, provider and tools, the author's thread
as it was, and the tool calls still waiting; and a stop as the log recorded it when raised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from sdd_git.errors import RecordError
from sdd_git.providers.base import ToolCall
from sdd_git.roles.profile import RoleProfile
from sdd_git.root import Root
from sdd_git.runner import logevents, prompt, runstart, stops, trusted
from sdd_git.runner.clock import Clock
from sdd_git.runner.logwriter import RunLog
from sdd_git.runner.runlog import Event, OnEvent, first, log_path, read_events
from sdd_git.runner.state import (
    RunState,
    count_repeat,
    offered_tools,
    provider_settings,
    read_only,
)
from sdd_git.timestamps import epoch as _epoch
from sdd_git.trust.ledger import on_ci_engine

if TYPE_CHECKING:
    from sdd_git.providers.select import Kept

_T = TypeVar("_T")


def rebuild(
    root: Root, run_id: str, clock: Clock, on_event: OnEvent | None = None
) -> tuple[RunState, list[ToolCall]]:
    """A paused run, from its log: its messages, calls made, and tool calls still to handle."""

    events = read_events(log_path(root, run_id))
    started = first(events, "run_started")
    if started is None or not isinstance(started.get("roles"), list) or not started["roles"]:
        raise RecordError(f"run {run_id} has no run_started event; it cannot continue")
    try:
        return _replay(root, run_id, events, started, clock, on_event)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordError(
            f"the log of run {run_id} is damaged ({type(exc).__name__}: {exc}); it cannot continue",
            hint=f"close it with: sdd role stop {run_id}",
        ) from None


def _replay(
    root: Root,
    run_id: str,
    events: list[Event],
    started: Event,
    clock: Clock,
    on_event: OnEvent | None,
) -> tuple[RunState, list[ToolCall]]:
    from sdd_git.roles.registry import find_role

    role, _ = find_role(root, started["roles"][0], use_cache=False)
    trusted.require(root, [role], doing=f"the run of {role.name}")
    provider, masker, secret_names, context_tokens = provider_settings(
        root, role, keep=kept_provider(started)
    )
    log = RunLog.open(root, run_id, masker, clock)
    log.listener = on_event
    switched = provider_switch(started, provider)
    if switched is not None:
        log.append(logevents.RunWarning(switched["message"], switched["switched"]))
    state = RunState(
        root,
        run_id,
        role,
        provider,
        log,
        masker,
        clock,
        started.get("change"),
        started.get("origin", "person"),
        runstart.for_node(
            prompt.with_connectors(
                prompt.with_skill_tool(_offered_after(role, started, events), root),
                _attached(started),
                role.tools,
            ),
            first(events, "route"),
        ),
        runstart.accepted_now(root, started.get("change")),
        tuple(secret_names),
        context_tokens,
    )
    state.node_ask_first = runstart.node_ask_first(
        root, started.get("change"), first(events, "route")
    ) + runstart.routine_ask_first(started.get("routine_rules"))
    state.rehearsal = bool((started.get("routine_rules") or {}).get("rehearsal"))
    state.unattended = (
        bool((started.get("routine_rules") or {}).get("unattended"))
        or started.get("saved_rules") is False
        or on_ci_engine()
    )
    state.in_ci = bool((started.get("routine_rules") or {}).get("unattended")) or on_ci_engine()
    state.connectors = _attached(started)
    state.for_run = allowed_for_run(events)
    return state, _replay_turns(state, events)


def for_run_key(tool: str | None, args: dict[str, Any]) -> tuple[str, str]:
    """What "allow for this run" lets run again: the same tool with the same canonical inputs."""
    from sdd_git.runner.boundary import canonical_inputs

    return (str(tool), canonical_inputs(args))


def allowed_for_run(events: list[Event]) -> set[tuple[str, str]]:
    """The calls the person allowed for this run, from its log: each `decision` allow_for_run
    and the `stop` it answered (its tool and inputs as logged). Only this run's log is read, so
    no answer of another run stands in for one here."""
    raised: dict[str, tuple[str, str]] = {}
    allowed: set[tuple[str, str]] = set()
    for event in map(logevents.parse, events):
        if isinstance(event, logevents.Stop) and event.stop and event.kind_ == "approval":
            if "allow for this run" in (event.choices or ()):
                raised[event.stop] = for_run_key(event.tool, dict(event.args or {}))
        elif isinstance(event, logevents.Decision) and event.choice == "allow_for_run":
            key = raised.get(str(event.stop))
            if key is not None:
                allowed.add(key)
    return allowed


def _replay_turns(state: RunState, events: list[Event]) -> list[ToolCall]:
    """The author's thread, told again into `state`: its messages, the calls it made, and the
    tool calls of the last reply still unanswered (the critic's own context is left out)."""
    last_calls: list[ToolCall] = []
    answered: set[str] = set()
    for event in map(logevents.parse, events):
        if event.thread == "critic":
            continue
        match event:
            case logevents.Message():
                state.messages.append({"role": _need(event.role), "content": _need(event.content)})
            case logevents.Say():
                state.messages.append({"role": "user", "content": _need(event.text)})
                state.says_seen += 1
            case logevents.ProviderCall():
                state.calls_made += 1
                who = str(event.role or state.role.name)
                state.role_calls[who] = state.role_calls.get(who, 0) + 1
            case logevents.Reply():
                state.messages.append(_need(event.message))
                last_calls = [
                    ToolCall(c["id"], c["name"], c.get("args") or {}, c.get("error"))
                    for c in event.message.get("tool_calls") or []
                ]
                count_repeat(state, tuple(last_calls))  # the count survives a stop and its answer
                answered = set()
            case logevents.ToolResult():
                call_id = _need(event.call_id)
                result = {"role": "tool", "tool_call_id": call_id, "name": _need(event.tool)}
                state.messages.append({**result, "content": _need(event.content)})
                answered.add(call_id)
    return [c for c in last_calls if c.id not in answered]


def _need(value: _T | None) -> _T:
    """A field the replay cannot do without: its absence makes the log damaged."""
    if value is None:
        raise KeyError("a field of an event is missing")
    return value


def kept_provider(started: Event) -> Kept | None:
    """The provider a run started with, as its `run_started` recorded it (None for a log from
    before sdd recorded it)."""
    from pathlib import Path

    from sdd_git.providers.select import Kept

    kind, model = started.get("provider"), started.get("model")
    if not isinstance(kind, str) or not kind or not isinstance(model, str):
        return None
    script = started.get("script")
    return Kept(kind, model, Path(script) if isinstance(script, str) and script else None)


def provider_switch(started: Event, provider: object) -> dict[str, Any] | None:
    """When a resumed run cannot go on with the provider it started with (SDD_PROVIDER,
    SDD_MODEL or SDD_BASE_URL now says otherwise, or its settings moved it to another
    server), the warning that says so, from what to what; None when it goes on unchanged."""
    import os

    was = {k: started.get(k) for k in ("provider", "model", "base_url")}
    if not was["provider"]:
        return None  # a log from before sdd recorded it: nothing to compare
    now = runstart.provider_fields(provider)
    same = was["provider"] == now["provider"] and was["model"] == now["model"]
    if same and (was["base_url"] is None or was["base_url"] == now.get("base_url")):
        return None
    why = [name for name in ("SDD_PROVIDER", "SDD_MODEL", "SDD_BASE_URL") if os.environ.get(name)]
    because = (
        f"{' and '.join(why)} {'is' if len(why) == 1 else 'are'} set"
        if why
        else "its settings now point elsewhere"
    )
    return {
        "message": f"warning: this run started with {_provider_words(was)}; it goes on with "
        f"{_provider_words(now)}, because {because}",
        "switched": {"from": was, "to": {k: now.get(k) for k in was}},
    }


def _provider_words(fields: dict[str, Any]) -> str:
    where = f" at {fields['base_url']}" if fields.get("base_url") else ""
    return f"{fields.get('provider')} model {fields.get('model')}{where}"


def _attached(started: Event) -> tuple[str, ...]:
    """The connectors the run's task attached, as `run_started` recorded them."""
    names = started.get("connectors")
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def _offered_after(role: RoleProfile, started: Event, events: list[Event]) -> tuple[str, ...]:
    """The tools of a resumed run. Once the person answered the accuracy loop's draft stop, the
    loop is over: its tools are never offered again, and after a deny only read tools are."""
    critic = started["roles"][1] if len(started["roles"]) > 1 else None
    logged = [logevents.parse(e) for e in events]
    drafts = {e.stop for e in logged if isinstance(e, logevents.Stop) and e.kind_ == "draft"}
    answer = next(
        (
            e.choice
            for e in reversed(logged)
            if isinstance(e, logevents.Decision) and e.stop and e.stop in drafts
        ),
        None,
    )
    if answer is None:
        return offered_tools(role, critic)
    after = offered_tools(role, None)
    return read_only(after) if answer == "deny" else after


def logged_stop(root: Root, shown: stops.Stop, state: RunState) -> stops.Stop:
    """The stop as the run log recorded it when it was raised."""
    logged = map(logevents.parse, read_events(log_path(root, shown.run)))
    event = next((e for e in logged if isinstance(e, logevents.Stop) and e.stop == shown.id), None)
    if event is None or event.kind_ not in ("approval", "draft"):
        raise RecordError(
            f"stop {shown.id} is not in the log of its run {shown.run}",
            hint="`sdd stops` lists the stops that are really waiting",
        )
    expires = event.expires_at
    return stops.Stop(
        id=shown.id,
        run=shown.run,
        role=state.role.name,
        kind=str(event.kind_),
        action="" if event.action is None else str(event.action),
        choices=tuple(str(c) for c in event.choices or ()),
        origin=state.origin,
        created_at=shown.created_at,
        expires_at=_epoch(expires) if isinstance(expires, str) else None,
        tool=event.tool,
        args=dict(event.args or {}),
        call_id=event.call_id,
        change=state.change,
    )
