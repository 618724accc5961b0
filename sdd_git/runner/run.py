"""One run of a role, from the person's task to a reply or a stop, resumable from its log.

Every tool call crosses the one dispatch (`dispatch.dispatch`): guard, gate, boundary, execute,
log. Nothing else in sdd executes a tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sdd_git import lockfile
from sdd_git.connectors.base import run_lifetime
from sdd_git.errors import RecordError, SddError, UsageError
from sdd_git.providers.base import ProviderError, ToolCall
from sdd_git.roles.profile import RoleProfile
from sdd_git.root import Root
from sdd_git.runner import (
    conversation,
    draftstops,
    gate,
    logevents,
    prompt,
    replay,
    runstart,
    stops,
    trusted,
)
from sdd_git.runner.asked import asked_from
from sdd_git.runner.clock import Clock, system_clock
from sdd_git.runner.dispatch import dispatch
from sdd_git.runner.logwriter import RunLog
from sdd_git.runner.runlog import OnEvent, new_run_id, role_lock
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
    end,
    failed,
    interrupted,
    masked,
    new_says,
    offered_tools,
    provider_settings,
    read_only,
    stop_requested,
    tool_result,
)
from sdd_git.trust.ledger import on_ci_engine

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
    # What connectors keep open for the run (an MCP server's session) ends with it, however it
    # ends, and before the role's lock is let go: the next run of the role starts its own.
    with (
        lockfile.hold(
            role_lock(root, author.name),
            wait_seconds=0,
            stale_hint="its run died; close it and clear the lock with: "
            f"sdd role stop {author.name}",
        ),
        run_lifetime(),
    ):
        log = RunLog.open(root, run_id, masker, clock)
        log.listener = on_event
        roles = [author.name] + ([request.critic] if request.critic else [])
        try:
            started = {
                **runstart.provider_fields(provider),
                "process": lockfile.this_process(),  # alive or not: `sdd role runs` tells
                "sandbox": _sandbox(),
                **({"via": via} if (via := asked_from()) else {}),
                **runstart.routine_fields(request.routine),
                **({} if saved_rules else {"saved_rules": False}),
                # Attached by `@NAME`: a resumed run keeps them (and only them).
                **({"connectors": list(mentions.connectors)} if mentions.connectors else {}),
            }
            log.append(
                logevents.RunStarted(
                    roles, request.task, plan.change, request.origin, extra=started
                )
            )
            if request.route is not None:
                log.append(logevents.Route.from_fields(request.route))
            for warning in mentions.warnings:
                log.append(logevents.RunWarning(warning))
            if author.produces in gate.GATED and not plan.sections:
                why = f"{author.name} produces {author.produces}, and " + (
                    f"{plan.change} has no accepted spec section"
                    if plan.change
                    else "there is no change with an accepted spec section"
                )
                log.append(logevents.Stop(None, "no-spec", why))
                log.append(logevents.RunEnded("no-spec"))
                return RunOutcome(
                    run_id,
                    "no-spec",
                    EXIT_NO_SPEC,
                    f"stopped before any draft: {why}. Accept a section first (sdd accept "
                    "reading CH or sdd accept section SPEC#Sn); there is nothing to allow.",
                )
            log.append(
                logevents.Plan(
                    plan.change, list(plan.sections), list(plan.checks), list(plan.decisions)
                )
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
            log.append(logevents.Message("system", system))
            log.append(logevents.Message("user", user, conversation_id=person["id"]))
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
                runstart.for_node(
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
                node_ask_first=runstart.node_ask_first(root, plan.change, request.route)
                + runstart.routine_ask_first(request.routine),
                rehearsal=bool((request.routine or {}).get("rehearsal")),
                unattended=bool((request.routine or {}).get("unattended"))
                or not saved_rules
                or on_ci_engine(),  # in CI nobody answers: no saved rule runs an action
                in_ci=bool((request.routine or {}).get("unattended")) or on_ci_engine(),
                connectors=mentions.connectors,
            )
            if critic is not None:
                from sdd_git.runner import loop

                return loop.run(state, critic, plan)
            return _drive(state, pending=[])
        except KeyboardInterrupt:
            if not log.ended:  # before the first turn: nothing was done yet
                log.append(logevents.RunEnded("interrupted"))
            raise
        finally:
            if not log.ended:  # an error before the first turn still closes the log
                log.append(logevents.RunEnded("failed"))


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


def _no_spec(state: RunState, why: str) -> RunOutcome:
    """The gate on the action: no Allow or Deny, nothing to answer; the run ends at exit 4."""
    state.log.append(logevents.Stop(None, "no-spec", why))
    state.log.append(logevents.RunEnded("no-spec"))
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
                    state.log.append(logevents.RunEnded("stopped", waiting_for=stop.id))
                    del pending[: index + 1]
                    return RunOutcome(state.run_id, "stopped", EXIT_STOPPED, stop.action, stop=stop)
            pending = []
            if stop_requested(state):
                state.log.append(logevents.Decision(None, "stop_now"))
                return end(state, "stopped-now", EXIT_DONE, "stopped now; what was done stays done")
            for text in new_says(state):
                state.says_seen += 1
                state.log.append(logevents.Say(text))
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
                logevents.ProviderCall(state.role.name, "author", state.calls_made, None)
            )
            reply = call_provider(
                state,
                state.provider,
                state.role.name,
                masked(state, state.messages),
                state.offered,
            )
            state.log.append(logevents.Reply(state.role.name, reply.message, reply.usage))
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
        state.log.append(logevents.RunError(f"{type(exc).__name__}: {exc}"))
        state.log.append(logevents.RunEnded("failed"))
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
        waiting = draftstops.plan_stop(state)
    if state.role.produces == "reading" and state.change:
        waiting = draftstops.reading_stop(state)
    if waiting is not None:
        state.log.append(logevents.RunEnded("stopped", waiting_for=waiting.id))
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


def answer(
    root: Root,
    stop_id: str,
    choice: str,
    clock: Clock = system_clock,
    on_event: OnEvent | None = None,
    origin: str | None = None,
    prefix: tuple[str, ...] | None = None,
) -> RunOutcome:
    """The person's answer to an approval or draft stop: allow_once, allow_for_run,
    always_allow or deny; then the run continues from its log. `prefix` (with always_allow):
    save a command-prefix rule with those words instead of the exact inputs. `origin` names
    where she answered (`page`) in the log's `decision` event; by default it is where the work
    was asked from (sdd_git.runner.asked), and a command leaves it out.

    A stop file is only a file: what the answer acts on (kind, tool, inputs, choices, expiry)
    comes from the `stop` event in the run log, and the stop file must still be there once the
    role's lock is held, so two answers (or an answer and "Stop now") cannot both act."""
    from sdd_git.sink import refuse_inside_run
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
    with (
        lockfile.hold(
            role_lock(root, shown.role),
            wait_seconds=0,
            stale_hint="its run died; close it and clear the lock with: "
            f"sdd role stop {shown.role}",
        ),
        run_lifetime(),  # the resumed run's own sessions: the stopped process's are gone
    ):
        stops.load(root, stop_id)  # still unanswered now that the lock is ours
        state, pending = replay.rebuild(root, shown.run, clock, on_event)
        stop = replay.logged_stop(root, shown, state)
        _refuse_decided(root, stop)
        offered = {"allow_once": "allow once", "deny": "deny"}.get(choice)
        if offered is not None and offered not in stop.choices:
            raise UsageError(
                f"stop {stop.id} does not offer '{offered}'; its choices are: "
                + ", ".join(stop.choices)
            )
        if choice == "always_allow" and "always allow" not in stop.choices:
            raise UsageError(
                f"this stop cannot be always allowed: {_why_not_always(stop, state.in_ci)}",
                hint=f"sdd allow {stop.id} (once) or sdd deny {stop.id}",
            )
        if choice == "allow_for_run" and "allow for this run" not in stop.choices:
            raise UsageError(
                "this stop cannot be allowed for the whole run: "
                + _why_not_always(stop, state.in_ci),
                hint=f"sdd allow {stop.id} (once) or sdd deny {stop.id}",
            )
        if prefix is not None:
            _check_prefix(stop, choice, prefix)
        try:
            origin = origin or asked_from()
            where = {"origin": origin} if origin else {}
            if stop.kind == "draft":
                return _after_draft(state, stop, choice, where)
            return _after_approval(state, stop, choice, pending, where, prefix)
        except KeyboardInterrupt:
            return interrupted(state)
        finally:
            if not state.log.ended:  # an error on the way still ends the run in its log
                state.log.append(logevents.RunEnded("failed"))


def _refuse_decided(root: Root, stop: stops.Stop) -> None:
    """A stop file put back (a copied folder, a CI job run again from the same artifact) asks
    nothing: the log's `decision` for the stop is the answer, and a second one never acts."""
    from sdd_git.runner.runlog import log_path, read_events

    decided = next(
        (
            e
            for e in read_events(log_path(root, stop.run))
            if e.get("event") == "decision" and e.get("stop") == stop.id
        ),
        None,
    )
    if decided is not None:
        stops.remove(root, stop.id)
        raise RecordError(
            f"stop {stop.id} was already answered ({decided.get('choice')}) in the log of its "
            f"run {stop.run}; nothing was done again",
            hint=f"sdd role log {stop.run} shows what happened",
        )


def _why_not_always(stop: stops.Stop, in_ci: bool = False) -> str:
    if in_ci:
        return "it was raised in CI, where a reviewer allows or denies one stop at a time"
    if stop.kind == "draft":
        return "it asks about a draft, not a tool with inputs"
    if stop.tool == "run_command":
        return "an ask-first rule matches it, or no working sandbox would hold the command"
    return "an ask-first rule matches it"


def _after_approval(
    state: RunState,
    stop: stops.Stop,
    choice: str,
    pending: list[ToolCall],
    where: dict[str, str] | None = None,
    prefix: tuple[str, ...] | None = None,
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
        _save_rule(root, stop, state.clock(), prefix)
        _reload_role(state)  # the rule holds for the rest of this run too
    pending.remove(call)
    state.log.append(logevents.RunResumed(stop.id, lockfile.this_process()))
    if stop.expired(state.clock()):
        state.log.append(logevents.Decision(stop.id, "expired", (where or {}).get("origin")))
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
    state.log.append(logevents.Decision(stop.id, choice, (where or {}).get("origin")))
    stops.remove(root, stop.id)
    if choice == "allow_for_run" and changed is None:
        state.for_run.add(replay.for_run_key(stop.tool, stop.args))
        state.boundary = None  # rebuilt with it at the next consequential call
    if choice == "deny":
        tool_result(state, call, "The person denied this action; it was not done.")
    elif changed is not None:
        state.log.append(logevents.Rejected(call.name, "changed", changed))
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
    state.log.append(logevents.RunResumed(stop.id, lockfile.this_process()))
    expired = stop.expired(state.clock())
    decided = "expired" if expired else choice
    state.log.append(logevents.Decision(stop.id, decided, (where or {}).get("origin")))
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
    state.log.append(logevents.Message("user", note))
    return _drive(state, [])


def _check_prefix(stop: stops.Stop, choice: str, prefix: tuple[str, ...]) -> None:
    """A prefix rule is saved only from a stop whose own command it matches, for certain."""
    from sdd_git.shellpolicy.prefix import matches_prefix, prefix_problem

    words = " ".join(prefix)
    if choice != "always_allow":
        raise UsageError("--prefix saves a rule: give it with --always")
    if stop.tool != "run_command":
        raise UsageError(f"--prefix is for a command, and this stop asks to use {stop.tool}")
    problem = prefix_problem(prefix)
    if problem is not None:
        raise UsageError(f"the prefix '{words}' cannot be a rule: {problem}")
    command = stop.args.get("command")
    if not isinstance(command, str) or not matches_prefix(command, prefix):
        raise UsageError(
            f"the stop's command is not, for certain, one plain command beginning with '{words}'",
            hint="a prefix rule allows only such commands; `sdd allow "
            f"{stop.id} --always` saves this exact command instead",
        )
    if set(stop.args) - {"command", "purpose"}:
        raise UsageError(
            "this command asks for more than a command (the network): a prefix rule never "
            "allows that",
            hint=f"sdd allow {stop.id} --always saves this exact call instead",
        )


def _save_rule(
    root: Root, stop: stops.Stop, now: float, prefix: tuple[str, ...] | None = None
) -> None:
    from sdd_git.roles.manage import add_always_allow

    assert stop.tool is not None
    saved = {"at": stops.iso(now), "stop": stop.id}
    if prefix is not None:
        add_always_allow(
            root,
            stop.role,
            "run_command",
            None,
            prefix=list(prefix),
            match=[str(stop.args["command"])],
            saved=saved,
        )
        return
    inputs = {k: v for k, v in stop.args.items() if k != "purpose"}
    add_always_allow(root, stop.role, stop.tool, inputs, saved=saved)
