"""One run of a role, from the person's task to a reply or a stop, resumable from its log.

Every tool call crosses the one dispatch (`dispatch.dispatch`): guard, gate, boundary, execute,
log. Nothing else in sdd executes a tool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sdd_git import lockfile
from sdd_git.errors import RecordError, SddError, UsageError
from sdd_git.providers.base import ProviderError, ToolCall
from sdd_git.providers.select import Kept
from sdd_git.roles.profile import RoleProfile, Rule
from sdd_git.root import Root
from sdd_git.runner import conversation, gate, prompt, stops, trusted
from sdd_git.runner.asked import asked_from
from sdd_git.runner.clock import Clock, system_clock
from sdd_git.runner.dispatch import dispatch
from sdd_git.runner.runlog import Event, RunLog, log_path, new_run_id, read_events
from sdd_git.runner.state import (
    EXIT_DONE,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_NO_SPEC,
    EXIT_STOPPED,
    RunCannotGoOn,
    RunOutcome,
    RunState,
    call_provider,
    check_progress,
    control_folder,
    count_repeat,
    end,
    failed,
    interrupted,
    masked,
    new_says,
    offered_tools,
    provider_settings,
    read_only,
    role_lock,
    stop_requested,
    tool_result,
)
from sdd_git.timestamps import epoch as _epoch
from sdd_git.trust.ledger import on_ci_engine

OnEvent = Callable[[Event], None]  # told each run-log event as it is written

__all__ = [
    "EXIT_DONE",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_NO_SPEC",
    "EXIT_STOPPED",
    "RunOutcome",
    "RunRequest",
    "answer",
    "control_folder",
    "role_lock",
    "start",
]

MAX_PROVIDER_CALLS = 200


@dataclass(frozen=True)
class RunRequest:
    author: str
    task: str
    critic: str | None = None
    change: str | None = None
    attachments: tuple[conversation.Attachment, ...] = ()
    reply_to: str | None = None
    prompt_append: str | None = None
    origin: str = "person"
    # How `sdd work` chose this run (`route`: reading, service, connection or plan; `why`):
    # logged as the run's `route` event.
    route: dict[str, Any] | None = None
    # A routine's run (CONTRACT §10): `name`, `event` (its id), `ask_first` (rules that add
    # stops) and `rehearsal` (`sdd routine test`: no consequential action runs, even allowed).
    routine: dict[str, Any] | None = None
    # The person's own words whose `@NAME`s attach connectors: by default the task, when the
    # person gave it (origin person). A handoff's task is a model's words and a routine's holds
    # an event's (a file named "notes @github"), so they attach only what this names: nothing
    # for a handoff, the routine's own input and expected result for a routine.
    attach: str | None = None
    # A run woken by a handoff: the role that sent it. Its saved rules apply only when
    # canSpawn(sender, receiver) holds; a wake with no sender named applies none.
    handoff_from: str | None = None


def _sandbox() -> str:
    from sdd_git.sandbox.choose import current

    return current().label


def start(
    root: Root, request: RunRequest, clock: Clock = system_clock, on_event: OnEvent | None = None
) -> RunOutcome:
    """Run a role on a task until it replies, stops for the person, or is refused. `on_event`
    is told each event of the run log as it is written (the CLI shows progress with it).

    Everything that can refuse the run is checked before its log is opened: a refused run
    leaves no log that would show it `running` forever."""
    from sdd_git.roles.registry import find_role, load_registry

    gate.refuse_before_any_call(request.author, request.critic, request.task)
    author, _ = find_role(root, request.author, use_cache=False)
    critic = None
    if request.critic is not None:
        critic, _ = find_role(root, request.critic, use_cache=False)  # before any call
    if request.origin not in stops.ORIGINS:
        raise UsageError(f"unknown origin '{request.origin}'")
    # Nothing starts on a grant she has not confirmed, whoever asks for the run (§13).
    trusted.require(root, [author, critic], doing=f"the run of {author.name}")
    saved_rules = _saved_rules_apply(root, request, author)
    registry = load_registry(root)
    attach = request.attach
    if attach is None:
        attach = request.task if request.origin == "person" else ""
    mentions = prompt.resolve_mentions(
        root, request.task, (r.name for r in registry.roles), author, attach_from=attach
    )
    reply_to = (
        conversation.find_message(root, author.name, request.reply_to) if request.reply_to else None
    )
    for attachment in request.attachments:
        _check_attachment(attachment)
    pack = gate.resolve_change(root, request.change)
    plan = gate.plan_for(root, pack)
    provider, masker, secret_names, context_tokens = provider_settings(root, author)
    if critic is not None:
        provider_settings(root, critic)  # a critic whose provider cannot be set up: refused now
    run_id = new_run_id(clock())
    with lockfile.hold(
        role_lock(root, author.name),
        wait_seconds=0,
        stale_hint=f"its run died; close it and clear the lock with: sdd role stop {author.name}",
    ):
        log = RunLog.open(root, run_id, masker, clock)
        log.listener = on_event
        roles = [author.name] + ([request.critic] if request.critic else [])
        try:
            log.append(
                "run_started",
                roles=roles,
                task=request.task,
                change=plan.change,
                origin=request.origin,
                **provider_fields(provider),
                process=lockfile.this_process(),  # alive or not: `sdd role runs` tells
                sandbox=_sandbox(),
                **({"via": via} if (via := asked_from()) else {}),
                **_routine_fields(request.routine),
                **({} if saved_rules else {"saved_rules": False}),
                # Attached by `@NAME`: a resumed run keeps them (and only them).
                **({"connectors": list(mentions.connectors)} if mentions.connectors else {}),
            )
            if request.route is not None:
                log.append("route", **request.route)
            for warning in mentions.warnings:
                log.append("warning", message=warning)
            if author.produces in gate.GATED and not plan.sections:
                why = f"{author.name} produces {author.produces}, and " + (
                    f"{plan.change} has no accepted spec section"
                    if plan.change
                    else "there is no change with an accepted spec section"
                )
                log.append("stop", stop=None, kind="no-spec", action=why, choices=[])
                log.append("run_ended", status="no-spec")
                return RunOutcome(
                    run_id,
                    "no-spec",
                    EXIT_NO_SPEC,
                    f"stopped before any draft: {why}. Accept a section first (sdd accept "
                    "reading CH or sdd accept section SPEC#Sn); there is nothing to allow.",
                )
            log.append(
                "plan",
                change=plan.change,
                sections=list(plan.sections),
                checks=list(plan.checks),
                decisions=list(plan.decisions),
            )
            attached = [
                (a, *conversation.attach(root, author.name, run_id, a, masker))
                for a in request.attachments
            ]
            shown_attachments = [shown for _, _, shown in attached]
            notes = [m["note"] for m in conversation.memory(root, author.name)]
            system = prompt.system_prompt(
                author, registry.roles, plan, notes, request.prompt_append, mentions.role_skills
            )
            user = prompt.user_message(request.task, mentions, reply_to, shown_attachments)
            person = conversation.add_message(
                root,
                author.name,
                masker,
                run=run_id,
                **{"from": "person"},
                text=request.task,
                reply_to=request.reply_to,
                # Her words for each file and where its copy is kept: the conversation shows
                # them, and the original (a path on her machine, or a page upload) may be gone.
                attachments=[
                    {
                        "name": a.source.name,
                        "what": a.what,
                        "copy": copy.relative_to(root.path).as_posix(),
                    }
                    for a, copy, _ in attached
                ],
            )
            log.append("message", role="system", content=system)
            log.append("message", role="user", content=user, conversation_id=person["id"])
            state = RunState(
                root,
                run_id,
                author,
                provider,
                log,
                masker,
                clock,
                plan.change,
                request.origin,
                _for_node(
                    prompt.with_connectors(
                        prompt.with_skill_tool(offered_tools(author, request.critic), root),
                        mentions.connectors,
                        author.tools,
                    ),
                    request.route,
                ),
                bool(plan.sections),
                tuple(secret_names),
                context_tokens,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                node_ask_first=_node_ask_first(root, plan.change, request.route)
                + _routine_ask_first(request.routine),
                rehearsal=bool((request.routine or {}).get("rehearsal")),
                unattended=bool((request.routine or {}).get("unattended"))
                or not saved_rules
                or on_ci_engine(),  # in CI nobody answers: no saved rule runs an action
                connectors=mentions.connectors,
            )
            if critic is not None:
                from sdd_git.runner import loop

                return loop.run(state, critic, plan)
            return _drive(state, pending=[])
        except KeyboardInterrupt:
            if not log.ended:  # before the first turn: nothing was done yet
                log.append("run_ended", status="interrupted")
            raise
        finally:
            if not log.ended:  # an error before the first turn still closes the log
                log.append("run_ended", status="failed")


def _saved_rules_apply(root: Root, request: RunRequest, receiver: RoleProfile) -> bool:
    """Whether the role's saved always_allow rules apply to this run. A handoff's wake applies
    them only when the sender could have started the receiver (canSpawn): a level-0 role that
    may not delegate cannot borrow a higher role's rules by handing it words."""
    if request.origin != "role":
        return True
    if request.handoff_from is None:
        return False
    from sdd_git.roles.lattice import can_spawn
    from sdd_git.roles.registry import find_role

    try:
        sender, _ = find_role(root, request.handoff_from, use_cache=False)
    except SddError:
        return False
    return can_spawn(sender, receiver)


def _check_attachment(attachment: conversation.Attachment) -> None:
    """What `conversation.attach` would refuse, checked before the run has a log."""
    if not attachment.source.is_file():
        raise UsageError(f"cannot attach {attachment.source}: no such file")
    if not attachment.what.strip():
        raise UsageError(
            f"say what {attachment.source.name} is", hint='--attach FILE --as "the March log"'
        )


def _rebuild(
    root: Root, run_id: str, clock: Clock, on_event: OnEvent | None = None
) -> tuple[RunState, list[ToolCall]]:
    """A paused run, from its log: its messages, calls made, and tool calls still to handle."""

    events = read_events(log_path(root, run_id))
    started = next((e for e in events if e.get("event") == "run_started"), None)
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
        log.append("warning", **switched)
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
        _for_node(
            prompt.with_connectors(
                prompt.with_skill_tool(_offered_after(role, started, events), root),
                _attached(started),
                role.tools,
            ),
            next((e for e in events if e.get("event") == "route"), None),
        ),
        _accepted_now(root, started.get("change")),
        tuple(secret_names),
        context_tokens,
    )
    state.node_ask_first = _node_ask_first(
        root, started.get("change"), next((e for e in events if e.get("event") == "route"), None)
    ) + _routine_ask_first(started.get("routine_rules"))
    state.rehearsal = bool((started.get("routine_rules") or {}).get("rehearsal"))
    state.unattended = (
        bool((started.get("routine_rules") or {}).get("unattended"))
        or started.get("saved_rules") is False
        or on_ci_engine()
    )
    state.connectors = _attached(started)
    last_calls: list[ToolCall] = []
    answered: set[str] = set()
    for event in events:
        kind = event.get("event")
        if event.get("thread") == "critic":
            continue  # the critic's own context; the author never saw it
        if kind == "message":
            state.messages.append({"role": event["role"], "content": event["content"]})
        elif kind == "say":
            state.messages.append({"role": "user", "content": event["text"]})
            state.says_seen += 1
        elif kind == "provider_call":
            state.calls_made += 1
            who = str(event.get("role") or state.role.name)
            state.role_calls[who] = state.role_calls.get(who, 0) + 1
        elif kind == "reply":
            state.messages.append(event["message"])
            last_calls = [
                ToolCall(c["id"], c["name"], c.get("args") or {}, c.get("error"))
                for c in event["message"].get("tool_calls") or []
            ]
            count_repeat(state, tuple(last_calls))  # the count survives a stop and its answer
            answered = set()
        elif kind == "tool_result":
            state.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": event["call_id"],
                    "name": event["tool"],
                    "content": event["content"],
                }
            )
            answered.add(event["call_id"])
    return state, [c for c in last_calls if c.id not in answered]


def provider_fields(provider: object) -> dict[str, Any]:
    """What `run_started` keeps of the provider, so that a resumed run goes on with the same
    one: its kind, model, and where it is (a script's file, a server's address without any
    user or query part, which could carry a secret). Never a key or a key's name."""
    from urllib.parse import urlsplit

    fields: dict[str, Any] = {
        "provider": getattr(provider, "name", ""),
        "model": getattr(provider, "model", ""),
    }
    script = getattr(provider, "path", None)
    if fields["provider"] == "script" and script is not None:
        fields["script"] = str(script)
    base_url = getattr(provider, "base_url", None)
    if isinstance(base_url, str) and base_url:
        parts = urlsplit(base_url)
        fields["base_url"] = (
            f"{parts.scheme}://{parts.hostname or ''}"
            + (f":{parts.port}" if parts.port else "")
            + parts.path
        )
    return fields


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
    now = provider_fields(provider)
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


def _routine_fields(routine: dict[str, Any] | None) -> dict[str, Any]:
    """What `run_started` keeps of a routine: its name and event for the history, and its rules
    so that a resumed run keeps the same stops and the same rehearsal."""
    if routine is None:
        return {}
    return {
        "routine": routine["name"],
        # Not `event`: every line's `event` is its own kind (here `run_started`).
        "event_id": routine.get("event"),
        "routine_rules": {
            "ask_first": list(routine.get("ask_first") or ()),
            "rehearsal": bool(routine.get("rehearsal")),
            "unattended": bool(routine.get("unattended")),
        },
    }


def _routine_ask_first(routine: dict[str, Any] | None) -> tuple[Rule, ...]:
    """A routine's own `ask_first` rules add stops to its role's boundary, never widen it."""
    if not routine:
        return ()
    return tuple(
        Rule(str(r["tool"]), r.get("inputs"))
        for r in routine.get("ask_first") or ()
        if isinstance(r, dict) and isinstance(r.get("tool"), str)
    )


def _node_ask_first(
    root: Root, change: str | None, route: dict[str, Any] | None
) -> tuple[Rule, ...]:
    """A network node's own `ask_first` rules, from the accepted plan: they add stops to the
    owner's boundary. A plan's `always_allow` is never applied: a plan cannot widen a role.
    The rules are those of the plan the node was started on (its `route` names its sha256):
    a plan edited since, by anyone, is not accepted, so every action of the node then stops."""
    if route is None or not route.get("node") or not change:
        return ()
    from sdd_git.records.plan import plan_path, read_plan
    from sdd_git.tools.catalog import TOOL_CLASSES

    try:
        plan, digest = read_plan(plan_path(root, change))
    except RecordError:
        plan, digest = None, None
    if plan is None or digest != route.get("plan"):
        return tuple(Rule(t, None) for t, kind in TOOL_CLASSES.items() if kind == "consequential")
    node = plan.node(str(route["node"]))
    return node.rules.ask_first if node is not None else ()


def _for_node(offered: tuple[str, ...], route: dict[str, Any] | None) -> tuple[str, ...]:
    """A network node's owner also returns its result: `return_artifact` (and only there, so a
    small model elsewhere is not offered one more schema)."""
    if route is not None and route.get("node") and "return_artifact" not in offered:
        return (*offered, "return_artifact")
    return offered


def _offered_after(role: RoleProfile, started: Event, events: list[Event]) -> tuple[str, ...]:
    """The tools of a resumed run. Once the person answered the accuracy loop's draft stop, the
    loop is over: its tools are never offered again, and after a deny only read tools are."""
    critic = started["roles"][1] if len(started["roles"]) > 1 else None
    drafts = {
        e.get("stop") for e in events if e.get("event") == "stop" and e.get("kind") == "draft"
    }
    answer = next(
        (
            e.get("choice")
            for e in reversed(events)
            if e.get("event") == "decision" and e.get("stop") and e.get("stop") in drafts
        ),
        None,
    )
    if answer is None:
        return offered_tools(role, critic)
    after = offered_tools(role, None)
    return read_only(after) if answer == "deny" else after


def _accepted_now(root: Root, change: str | None) -> bool:
    """Whether the change has an accepted section as the record stands now (a run resumed after
    she edited accepted text meets the gate again)."""
    if not change:
        return False
    from sdd_git.records import changes

    try:
        return bool(gate.plan_for(root, changes.load(root, change)).sections)
    except RecordError:
        return False


def _no_spec(state: RunState, why: str) -> RunOutcome:
    """The gate on the action: no Allow or Deny, nothing to answer; the run ends at exit 4."""
    state.log.append("stop", stop=None, kind="no-spec", action=why, choices=[])
    state.log.append("run_ended", status="no-spec")
    return RunOutcome(
        state.run_id,
        "no-spec",
        EXIT_NO_SPEC,
        f"stopped before the action: {why}. Accept a section first (sdd accept reading CH or "
        "sdd accept section SPEC#Sn); there is nothing to allow.",
    )


def _drive(state: RunState, pending: list[ToolCall]) -> RunOutcome:
    try:
        while True:
            for index, call in enumerate(pending):
                done = dispatch(state, call)
                if done.no_spec is not None:
                    return _no_spec(state, done.no_spec)
                if done.stop is not None:
                    stop = done.stop
                    state.log.append("run_ended", status="stopped", waiting_for=stop.id)
                    del pending[: index + 1]
                    return RunOutcome(state.run_id, "stopped", EXIT_STOPPED, stop.action, stop=stop)
            pending = []
            if stop_requested(state):
                state.log.append("decision", stop=None, choice="stop_now")
                return end(state, "stopped-now", EXIT_DONE, "stopped now; what was done stays done")
            for text in new_says(state):
                state.says_seen += 1
                state.log.append("say", text=text)
                state.messages.append({"role": "user", "content": text})
            last = state.messages[-1]
            if last.get("role") == "assistant" and not last.get("tool_calls"):
                return _finish(state, str(last.get("content") or ""))
            if state.calls_made >= MAX_PROVIDER_CALLS:
                return end(
                    state,
                    "failed",
                    EXIT_ERROR,
                    f"the run made {MAX_PROVIDER_CALLS} provider calls without finishing",
                )
            state.calls_made += 1
            state.log.append(
                "provider_call",
                role=state.role.name,
                purpose="author",
                call=state.calls_made,
                **{"pass": None},  # numbered 1 to 3 inside the accuracy loop
            )
            reply = call_provider(
                state,
                state.provider,
                state.role.name,
                masked(state, state.messages),
                state.offered,
            )
            state.log.append(
                "reply", role=state.role.name, message=reply.message, usage=reply.usage
            )
            state.messages.append(reply.message)
            check_progress(state, reply.tool_calls)
            pending = list(reply.tool_calls)
    except KeyboardInterrupt:
        return interrupted(state)
    except (ProviderError, RunCannotGoOn) as exc:
        return failed(state, exc)  # the person sees the run id and what was already done
    except (SddError, OSError):
        raise  # a refusal or a plain I/O failure the CLI reports; `start` ends the log
    except Exception as exc:  # a bug must still end the run in its log
        state.log.append("error", message=f"{type(exc).__name__}: {exc}")
        state.log.append("run_ended", status="failed")
        raise SddError(
            f"the run stopped on an internal error ({type(exc).__name__}: {exc})",
            hint=f"this is a bug in sdd; the run log .sdd/role-runs/{state.run_id}.jsonl shows "
            "what happened before it",
        ) from exc


def _finish(state: RunState, reply: str) -> RunOutcome:
    said = conversation.add_message(
        state.root, state.role.name, state.masker, run=state.run_id, **{"from": state.role.name},
        text=reply,
    )  # fmt: skip
    waiting = None
    if state.role.produces == "plan" and state.change:
        waiting = _plan_stop(state)
    if state.role.produces == "reading" and state.change:
        waiting = _reading_stop(state)
    if waiting is not None:
        state.log.append("run_ended", status="stopped", waiting_for=waiting.id)
        return RunOutcome(
            state.run_id,
            "stopped",
            EXIT_STOPPED,
            waiting.action,
            stop=waiting,
            reply=reply,
            reply_id=said["id"],
        )
    return end(state, "done", EXIT_DONE, "done", reply=reply, reply_id=said["id"])


def _plan_stop(state: RunState) -> stops.Stop | None:
    """A lead's drafted plan ends in the person's choice: accept, correct, or not yet. Nobody
    writes for the plan before she accepts it."""
    from sdd_git.records import changes
    from sdd_git.records.plan import plan_accepted, plan_hash

    pack = changes.load(state.root, state.change or "")
    path = pack.folder / "plan.yaml"
    if not path.exists() or plan_accepted(state.root, pack.id) is not None:
        return None
    return _choice_stop(
        state,
        "plan",
        f"Read the drafted plan of {pack.id} (changes/{pack.id}/plan.yaml) and accept it (sdd "
        f"accept plan {pack.id}), correct it (edit the file, then accept it), or leave it for now.",
        stops.PLAN_CHOICES,
        {"hash": plan_hash(path)},
        pack.id,
    )


def _choice_stop(
    state: RunState,
    kind: str,
    action: str,
    choices: tuple[str, ...],
    args: dict[str, Any],
    change: str,
) -> stops.Stop:
    """A stop the person answers with her own commands (accept, correct), never allow/deny."""
    stop = stops.Stop(
        id=stops.new_stop_id(),
        run=state.run_id,
        role=state.role.name,
        kind=kind,
        action=action,
        choices=choices,
        origin=state.origin,
        created_at=state.clock(),
        expires_at=None,
        args=args,
        change=change,
    )
    stops.save(state.root, stop)
    state.log.append("stop", stop=stop.id, kind=kind, action=stop.action, choices=list(choices))
    return stop


def _reading_stop(state: RunState) -> stops.Stop | None:
    """A drafted reading ends in the person's choice: accept, correct, or not yet. Never allow."""
    from sdd_git.records import changes, decisions
    from sdd_git.records.spec import read_spec

    pack = changes.load(state.root, state.change or "")
    section = read_spec(state.root.spec_file(pack.spec)).section("S1")
    if not section.body or decisions.load(state.root).section_acceptance(
        section.full_id, section.hash
    ):
        return None
    return _choice_stop(
        state,
        "reading",
        f"Read the drafted reading of {pack.id} ({section.full_id}) and accept it (sdd accept "
        f'reading {pack.id}), correct it (sdd correct reading {pack.id} "..."), or leave it '
        "for now.",
        stops.READING_CHOICES,
        {"hash": section.hash},
        pack.id,
    )


def answer(
    root: Root,
    stop_id: str,
    choice: str,
    clock: Clock = system_clock,
    on_event: OnEvent | None = None,
    origin: str | None = None,
) -> RunOutcome:
    """The person's answer to an approval or draft stop: allow_once, always_allow or deny; then
    the run continues from its log. `origin` names where she answered (`page`) in the log's
    `decision` event; by default it is where the work was asked from (sdd_git.runner.asked),
    and a command leaves it out.

    A stop file is only a file: what the answer acts on (kind, tool, inputs, choices, expiry)
    comes from the `stop` event in the run log, and the stop file must still be there once the
    role's lock is held, so two answers (or an answer and "Stop now") cannot both act."""
    from sdd_git.records.person import refuse_inside_run
    from sdd_git.trust.state import refuse_tracked_state

    refuse_inside_run()
    refuse_tracked_state(root, "answering a stop")  # a stop and its log that git brought
    shown = stops.load(root, stop_id)
    if shown.kind == "reading":
        raise UsageError(
            "a reading is accepted or corrected, never allowed or denied",
            hint=f'sdd accept reading {shown.change}  or  sdd correct reading {shown.change} "..."',
        )
    if shown.kind == "plan":
        raise UsageError(
            "a plan is accepted or corrected, never allowed or denied",
            hint=f"sdd accept plan {shown.change}  or edit changes/{shown.change}/plan.yaml "
            "and accept it",
        )
    with lockfile.hold(
        role_lock(root, shown.role),
        wait_seconds=0,
        stale_hint=f"its run died; close it and clear the lock with: sdd role stop {shown.role}",
    ):
        stops.load(root, stop_id)  # still unanswered now that the lock is ours
        state, pending = _rebuild(root, shown.run, clock, on_event)
        stop = _logged_stop(root, shown, state)
        if choice == "always_allow" and "always allow" not in stop.choices:
            raise UsageError(
                f"this stop cannot be always allowed: {_why_not_always(stop)}",
                hint=f"sdd allow {stop.id} (once) or sdd deny {stop.id}",
            )
        try:
            origin = origin or asked_from()
            where = {"origin": origin} if origin else {}
            if stop.kind == "draft":
                return _after_draft(state, stop, choice, where)
            return _after_approval(state, stop, choice, pending, where)
        except KeyboardInterrupt:
            return interrupted(state)
        finally:
            if not state.log.ended:  # an error on the way still ends the run in its log
                state.log.append("run_ended", status="failed")


def _logged_stop(root: Root, shown: stops.Stop, state: RunState) -> stops.Stop:
    """The stop as the run log recorded it when it was raised."""
    events = read_events(log_path(root, shown.run))
    event = next(
        (e for e in events if e.get("event") == "stop" and e.get("stop") == shown.id), None
    )
    if event is None or event.get("kind") not in ("approval", "draft"):
        raise RecordError(
            f"stop {shown.id} is not in the log of its run {shown.run}",
            hint="`sdd stops` lists the stops that are really waiting",
        )
    expires = event.get("expires_at")
    return stops.Stop(
        id=shown.id,
        run=shown.run,
        role=state.role.name,
        kind=str(event["kind"]),
        action=str(event.get("action", "")),
        choices=tuple(str(c) for c in event.get("choices") or ()),
        origin=state.origin,
        created_at=shown.created_at,
        expires_at=_epoch(expires) if isinstance(expires, str) else None,
        tool=event.get("tool"),
        args=dict(event.get("args") or {}),
        call_id=event.get("call_id"),
        change=state.change,
    )


def _why_not_always(stop: stops.Stop) -> str:
    if stop.kind == "draft":
        return "it asks about a draft, not a tool with inputs"
    if stop.tool == "run_command":
        return "an ask-first rule matches it, or the command cannot be classified with certainty"
    return "an ask-first rule matches it"


def _after_approval(
    state: RunState,
    stop: stops.Stop,
    choice: str,
    pending: list[ToolCall],
    where: dict[str, str] | None = None,
) -> RunOutcome:
    root = state.root
    call = next((c for c in pending if c.id == stop.call_id), None)
    if call is None:
        stops.remove(root, stop.id)
        raise RecordError(f"stop {stop.id} no longer matches its run {stop.run}")
    # Words that no longer hold allow nothing, and save no rule: the model may ask again.
    changed = _changed_since(state, stop) if choice != "deny" else None
    if choice == "always_allow" and changed is None:
        # First: a role file that cannot take the rule changes nothing.
        _save_rule(root, stop)
        _reload_role(state)  # the rule holds for the rest of this run too
    pending.remove(call)
    state.log.append("run_resumed", stop=stop.id, process=lockfile.this_process())
    if stop.expired(state.clock()):
        state.log.append("decision", stop=stop.id, choice="expired", **(where or {}))
        tool_result(state, call, "The approval expired before the person answered; it did not run.")
        stops.remove(root, stop.id)
        saved = (
            " The rule was saved; nothing ran."
            if choice == "always_allow" and changed is None
            else ""
        )
        return end(
            state,
            "expired",
            EXIT_STOPPED,
            f"stop {stop.id} expired at {stop.as_json()['expires_at']}; its action did not "
            f"run.{saved} Start a new run to try again.",
        )
    state.log.append("decision", stop=stop.id, choice=choice, **(where or {}))
    stops.remove(root, stop.id)
    if choice == "deny":
        tool_result(state, call, "The person denied this action; it was not done.")
    elif changed is not None:
        state.log.append("rejected", tool=call.name, reason="changed", message=changed)
        tool_result(state, call, f"Not done: {changed}. Ask again if it is still needed.")
    else:
        # The wall holds after an answer too: the guard and the gate are checked again.
        done = dispatch(state, call, allowed_by=choice, logged=True)
        if done.no_spec is not None:
            return _no_spec(state, done.no_spec)
    return _drive(state, pending)


def _changed_since(state: RunState, stop: stops.Stop) -> str | None:
    """A write whose stop said "Create" (or named the old file's size) while the file is now
    another: her allow named that action, so it does not run; the model may ask again."""
    from sdd_git.runner.words import write_changed

    if stop.tool != "write_file":
        return None
    return write_changed(stop.args, stop.action, state.root.path)


def _reload_role(state: RunState) -> None:
    from sdd_git.roles.registry import find_role

    state.role, _ = find_role(state.root, state.role.name, use_cache=False)
    state.boundary = None


def _after_draft(
    state: RunState, stop: stops.Stop, choice: str, where: dict[str, str] | None = None
) -> RunOutcome:
    """The loop's one stop: go on with the draft (each action still stops), or decline it and
    let the author close with that denial."""
    state.log.append("run_resumed", stop=stop.id, process=lockfile.this_process())
    expired = stop.expired(state.clock())
    state.log.append(
        "decision", stop=stop.id, choice="expired" if expired else choice, **(where or {})
    )
    stops.remove(state.root, stop.id)
    if expired:
        return end(state, "expired", EXIT_STOPPED, f"stop {stop.id} expired; nothing ran")
    state.offered = prompt.with_connectors(
        prompt.with_skill_tool(offered_tools(state.role, None), state.root),
        state.connectors,
        state.role.tools,
    )
    if choice == "deny":
        note = (
            "The person declined this draft. Do not carry it out; reply in one or two sentences "
            "with what you would need to change it."
        )
        state.offered = read_only(state.offered)
    else:
        note = (
            "The person read the summary of your draft and its critique, and lets you go on: "
            "carry out the draft now. Every action that changes something stops for the person."
        )
    state.messages.append({"role": "user", "content": note})
    state.log.append("message", role="user", content=note)
    return _drive(state, [])


def _save_rule(root: Root, stop: stops.Stop) -> None:
    from sdd_git.roles.manage import add_always_allow

    assert stop.tool is not None
    add_always_allow(
        root, stop.role, stop.tool, {k: v for k, v in stop.args.items() if k != "purpose"}
    )
