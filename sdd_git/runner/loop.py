"""The accuracy loop: the author drafts, a different role critiques against the accepted spec,
the author revises the gaps it was shown. At most three passes; the runner checks every cite.

A pass is one author call (the draft, or a revision) and one critic call, each carrying its own
role id, each in its own context: the critic never sees the author's conversation, only the
draft. A critique whose gaps cite anything but this run's plan check ids, or a section id with
its live decision id, spends its pass; so does a revision that names a gap never raised. An empty
gap list ends the loop. A fourth pass calls nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from sdd_git.errors import SddError
from sdd_git.providers.base import Message, Provider, ProviderError, ToolCall
from sdd_git.recordjson import record_json
from sdd_git.roles.profile import RoleProfile
from sdd_git.root import Root
from sdd_git.runner import logevents, prompt, stops
from sdd_git.runner.dispatch import dispatch
from sdd_git.runner.gate import Plan
from sdd_git.runner.notify import start_waiting
from sdd_git.runner.state import (
    EXIT_DONE,
    EXIT_STOPPED,
    RunCannotGoOn,
    RunOutcome,
    RunState,
    approval_timeout,
    call_provider,
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
from sdd_git.tools.catalog import TOOL_CLASSES

MAX_PASSES = 3
READ_TOOLS = tuple(name for name, kind in TOOL_CLASSES.items() if kind == "read")
T = TypeVar("T")

AUTHOR_RULES = """\
A different role will critique your draft against the accepted spec. Submit the draft itself
with submit_draft (text only; you cannot write files or run commands during the critique). When
gaps come back, fix them and call submit_revision, naming the ids of the gaps you changed."""

CRITIC_RULES = """\
You critique a draft written by another role, against external evidence: the accepted spec
sections and their checks listed below, never your own taste. Call report_gaps once. Each gap has
an id (G1, G2, ...), a text saying what is missing or wrong, and cites: each cite is a check id
from the list (e.g. {example}) or a section id with its decision id (e.g. {section}). A gap with
any other cite is thrown away with your whole critique. Report an empty list when the draft
meets every check."""


@dataclass(frozen=True)
class Gap:
    id: str
    cites: tuple[str, ...]
    text: str

    def as_json(self) -> dict[str, Any]:
        return record_json(self)

    def words(self) -> str:
        return f"{self.id} ({', '.join(self.cites)}): {self.text}"


class _Bad(Exception):
    """A critique or revision the runner refuses; it spends its pass."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class CiteChecker:
    """Which cites are real: this run's plan check ids, or a section id with its live decision."""

    def __init__(self, root: Root, plan: Plan) -> None:
        self.root = root
        self.checks = set(plan.checks)
        self.sections = set(plan.sections)
        self.short: dict[str, list[str]] = {}
        for check in plan.checks:
            self.short.setdefault(check.rsplit("/", 1)[-1], []).append(check)

    def problem(self, cite: str) -> str | None:
        if cite in self.checks or len(self.short.get(cite, [])) == 1:
            return None
        section, _, decision = cite.rpartition("/")
        if section and decision.startswith("D-") and "#S" in section:
            if section not in self.sections:
                return f"{section} is not an accepted section of this run's plan"
            return self._decision_problem(section, decision)
        known = ", ".join(sorted(self.checks)) or "none"
        return f"{cite} is not a check id of this run's plan ({known})"

    def _decision_problem(self, section_id: str, decision_id: str) -> str | None:
        from sdd_git.errors import RecordError
        from sdd_git.records import decisions
        from sdd_git.records.spec import read_spec

        root = self.root
        spec_id, _, number = section_id.partition("#")
        try:
            section = read_spec(root.spec_file(spec_id)).section(number)
        except (RecordError, ValueError, OSError):
            return f"{section_id} is not a section of this product"
        current = decisions.load(root).section_acceptance(section.full_id, section.hash)
        if current is None or current.id != decision_id:
            return (
                f"{section_id}/{decision_id} does not hold: {decision_id} is not the decision that "
                f"accepts the section's current text"
            )
        return None


class _StopNow(Exception):
    """The person asked the run to stop now, between two provider calls."""


def run(state: RunState, critic: RoleProfile, plan: Plan) -> RunOutcome:
    """Draft, critique, revise; then one plain-language stop for the person. Stop now, Ctrl-C
    and a failing provider end the run in its log like any other run."""
    try:
        return _loop(state, critic, plan)
    except _StopNow:
        state.log.append(logevents.Decision(None, "stop_now"))
        return end(state, "stopped-now", EXIT_DONE, "stopped now; what was done stays done")
    except KeyboardInterrupt:
        return interrupted(state)
    except (ProviderError, RunCannotGoOn) as exc:
        return failed(state, exc)  # the person sees the run id and what was already done
    except SddError as exc:
        state.log.append(logevents.RunError(exc.message))
        state.log.append(logevents.RunEnded("failed"))
        raise


def _loop(state: RunState, critic: RoleProfile, plan: Plan) -> RunOutcome:
    critic_provider, critic_masker, _, critic_context = provider_settings(state.root, critic)
    checker = CiteChecker(state.root, plan)
    # Each role reads with the read tools it may use; nothing else is offered in the loop.
    author_reads = read_only(state.offered)
    critic_reads = read_only(prompt.with_skill_tool(offered_tools(critic, None), state.root))
    state.messages[0] = {
        "role": "system",
        "content": f"{state.messages[0]['content']}\n\n{AUTHOR_RULES}",
    }
    critic_messages: list[Message] = [
        {"role": "system", "content": _critic_system(critic, plan)},
    ]
    _log_message(state, critic_messages[0], "critic")
    draft: str | None = None
    open_gaps: list[Gap] = []
    checked = False
    passes = 0
    spent: str | None = None  # why the last pass was spent, for the author's next message
    critic_spent: str | None = None  # why the critic's last critique was refused
    for number in range(1, MAX_PASSES + 1):
        passes = number
        revising = draft is not None and bool(open_gaps)
        wanted = "submit_revision" if revising else "submit_draft"
        if spent is not None:
            # A spent pass the model is never told about is a pass it repeats the same way.
            how = ", naming the ids of the gaps you changed" if revising else ""
            _tell_author(state, f"Pass {number - 1} was spent: {spent}. Now call {wanted}{how}.")
            spent = None
        reply_calls = _call(
            state,
            state.role,
            state.provider,
            state.messages,
            (*author_reads, wanted),
            number,
            "revision" if revising else "author",
            "author",
            expected=wanted,
        )
        try:
            if revising:
                draft, changed = _loop_call(
                    state, state.role.name, reply_calls, wanted, state.messages, "author",
                    author_reads, partial(_revision, open_gaps=open_gaps),
                )  # fmt: skip
                state.log.append(logevents.Revision(number, changed, draft))
                shown = f"Revision of {', '.join(changed)}:\n{draft}"
            else:
                draft = _loop_call(
                    state, state.role.name, reply_calls, wanted, state.messages, "author",
                    author_reads, _draft,
                )  # fmt: skip
                state.log.append(logevents.Draft(number, draft))
                shown = f"The draft to critique:\n{draft}"
        except _Bad as bad:
            state.log.append(logevents.Rejected(wanted, bad.reason, bad.message, pass_=number))
            spent = bad.message  # a bad draft or revision spends its pass
            continue
        if critic_spent is not None:
            shown = f"Your last critique was refused: {critic_spent}.\n\n{shown}"
            critic_spent = None
        critic_messages.append({"role": "user", "content": shown})
        _log_message(state, critic_messages[-1], "critic")
        critique_calls = _call(
            state,
            critic,
            critic_provider,
            critic_messages,
            (*critic_reads, "report_gaps"),
            number,
            "critic",
            "critic",
            masker=critic_masker,
            context_tokens=critic_context,
            expected="report_gaps",
        )
        try:
            gaps = _loop_call(
                state, critic.name, critique_calls, "report_gaps", critic_messages, "critic",
                critic_reads, lambda call: _gaps(call, checker),
            )  # fmt: skip
        except _Bad as bad:
            state.log.append(
                logevents.Rejected("report_gaps", bad.reason, bad.message, pass_=number)
            )
            critic_spent = bad.message
            spent = f"{critic.name}'s critique of it did not hold up ({bad.message})"
            continue
        checked = True
        open_gaps = gaps
        state.log.append(logevents.Critique(number, critic.name, [g.as_json() for g in gaps]))
        if not gaps:
            break
        feedback = "\n".join(f"- {g.words()}" for g in gaps)
        state.messages.append(
            {
                "role": "user",
                "content": f"{critic.name} found gaps in your draft:\n{feedback}\n"
                "Revise the draft with submit_revision, naming the gap ids you changed.",
            }
        )
        state.log.append(logevents.Message("user", state.messages[-1]["content"]))
    return _summary_stop(state, critic, plan, draft, open_gaps, checked, passes)


def _tell_author(state: RunState, text: str) -> None:
    state.messages.append({"role": "user", "content": text})
    state.log.append(logevents.Message("user", text))


def _critic_system(critic: RoleProfile, plan: Plan) -> str:
    example = plan.checks[0] if plan.checks else "SPEC-0001#S1/C1"
    section = f"{plan.sections[0]}/{plan.decisions[0]}" if plan.sections else "SPEC-0001#S1/D-0001"
    checks = "\n".join(f"- {c}" for c in plan.checks) or "- (no accepted check)"
    sections = ", ".join(f"{s}/{d}" for s, d in zip(plan.sections, plan.decisions, strict=True))
    return (
        f'{critic.description.strip()}\n\nYou are the role "{critic.name}". Your one job: '
        f"{critic.job}\n\n{CRITIC_RULES.format(example=example, section=section)}\n\n"
        f"The accepted sections: {sections or 'none'}. Their checks:\n{checks}"
    )


def _log_message(state: RunState, message: Message, thread: str) -> None:
    state.log.append(logevents.Message(message["role"], message["content"], thread=thread))


def _call(
    state: RunState,
    role: RoleProfile,
    provider: Provider,
    messages: list[Message],
    tools: tuple[str, ...],
    number: int,
    purpose: str,
    thread: str,
    masker: Any = None,
    context_tokens: int | None = None,
    expected: str | None = None,
) -> tuple[ToolCall, ...]:
    """One provider call for one role, logged before it is made, its reply logged after."""
    if stop_requested(state):
        raise _StopNow
    if thread == "author":
        for text in new_says(state):
            state.says_seen += 1
            state.log.append(logevents.Say(text))
            messages.append({"role": "user", "content": text})
    state.calls_made += 1
    state.log.append(logevents.ProviderCall(role.name, purpose, state.calls_made, number))
    outgoing = masked(state, messages)
    if masker is not None:
        outgoing = [json.loads(masker(json.dumps(m, ensure_ascii=False))) for m in outgoing]
    # The one tool expected is named: a small local model offered tools with `auto` often
    # answers in prose, which would spend the pass for nothing.
    reply = call_provider(
        state, provider, role.name, outgoing, tools, context_tokens=context_tokens,
        expected=expected,
    )  # fmt: skip
    state.log.append(logevents.Reply(role.name, reply.message, reply.usage, thread))
    messages.append(reply.message)
    return reply.tool_calls


def _loop_call(
    state: RunState,
    role: str,
    calls: tuple[ToolCall, ...],
    wanted: str,
    messages: list[Message],
    thread: str,
    reads: tuple[str, ...],
    check: Callable[[ToolCall], T],
) -> T:
    """Answer every tool call of a loop reply; return what `check` made of the loop tool call,
    or refuse the pass. The loop call is checked before it is answered, so the model reads
    why it was refused rather than "Received." for a draft that spent its pass."""
    found = False
    value: list[T] = []  # what `check` made of the loop call, once it held
    refused: _Bad | None = None
    for call in calls:
        if call.name == wanted and not found:
            found = True
            state.log.append(logevents.ToolCall(role, call.name, call.args, call.id, thread))
            try:
                if call.error:
                    raise _Bad("bad_arguments", f"your arguments were not valid JSON: {call.error}")
                value.append(check(call))
            except _Bad as bad:
                refused = bad
            answer = "Received." if refused is None else f"Refused: {refused.message}."
            tool_result(state, call, answer, messages, thread)
        elif TOOL_CLASSES.get(call.name) == "read":
            dispatch(state, call, offered=reads, messages=messages, thread=thread, caller=role)
        else:
            state.log.append(logevents.ToolCall(role, call.name, call.args, call.id, thread))
            state.log.append(
                logevents.Rejected(call.name, "not_in_loop", "not offered during the critique")
            )
            tool_result(
                state,
                call,
                "During the critique only read tools and the loop's own tool are available.",
                messages,
                thread,
            )
    if not found:
        raise _Bad("missing_" + wanted, f"the reply did not call {wanted}")
    if refused is not None:
        raise refused
    return value[0]


def _draft(call: ToolCall) -> str:
    text = call.args.get("text")
    if not isinstance(text, str) or not text.strip():
        raise _Bad("empty_draft", "submit_draft needs the draft's text")
    return text


def _revision(call: ToolCall, open_gaps: list[Gap]) -> tuple[str, list[str]]:
    text = call.args.get("text")
    changed = call.args.get("changed")
    raised = {gap.id for gap in open_gaps}
    if not isinstance(text, str) or not text.strip():
        raise _Bad("empty_revision", "submit_revision needs the revised text")
    if not isinstance(changed, list) or not changed or not all(isinstance(c, str) for c in changed):
        raise _Bad("bad_revision", "a revision names the gap ids it changed")
    never = [c for c in changed if c not in raised]
    if never:
        raise _Bad(
            "bad_revision",
            f"the revision names {', '.join(never)}, which no critique raised "
            f"(open gaps: {', '.join(sorted(raised))})",
        )
    return text, list(changed)


def _gaps(call: ToolCall, checker: CiteChecker) -> list[Gap]:
    raw = call.args.get("gaps")
    if not isinstance(raw, list):
        raise _Bad("bad_critique", "report_gaps needs a list of gaps (an empty list when none)")
    gaps: list[Gap] = []
    for item in raw:
        if not isinstance(item, dict):
            raise _Bad("bad_critique", "each gap is an object with id, cites and text")
        gap_id, cites, text = item.get("id"), item.get("cites"), item.get("text")
        if not isinstance(gap_id, str) or not gap_id.strip() or any(g.id == gap_id for g in gaps):
            raise _Bad("bad_critique", f"gap ids must be unique text, not {gap_id!r}")
        if not isinstance(text, str) or not text.strip():
            raise _Bad("bad_critique", f"gap {gap_id} says nothing")
        if not isinstance(cites, list) or not cites or not all(isinstance(c, str) for c in cites):
            raise _Bad("bad_cite", f"gap {gap_id} cites nothing; each gap cites the spec")
        for cite in cites:
            problem = checker.problem(cite)
            if problem is not None:
                raise _Bad("bad_cite", f"gap {gap_id}: {problem}")
        gaps.append(Gap(gap_id, tuple(cites), text))
    return gaps


def _summary_stop(
    state: RunState,
    critic: RoleProfile,
    plan: Plan,
    draft: str | None,
    open_gaps: list[Gap],
    checked: bool,
    passes: int,
) -> RunOutcome:
    author = state.role.name
    if draft is None:
        state.log.append(logevents.RunEnded("no-draft"))
        return RunOutcome(
            state.run_id,
            "no-draft",
            1,
            f"{author} submitted no usable draft in {MAX_PASSES} passes; nothing to show",
        )
    first = " ".join(draft.split())
    first = first if len(first) <= 140 else first[:137] + "..."
    what = f'{author} drafted: "{first}"' + ("" if first.endswith((".", "!", "?")) else ".")
    against = ", ".join(plan.sections) or "no accepted section"
    if checked and not open_gaps:
        verdict = (
            f" {critic.name}, a second role, checked it in {passes} pass(es): it matches the "
            f"reading you accepted ({against})."
        )
    elif checked:
        verdict = (
            f" {critic.name}, a second role, checked it; after {passes} passes these gaps are "
            f"still open: " + "; ".join(g.words() for g in open_gaps) + "."
        )
    else:
        verdict = f" No critique from {critic.name} held up, so no second role has checked it."
    action = state.masker(
        what + verdict + f" Allow {author} to go on with this draft (each action still stops)?"
    )
    now = state.clock()
    stop = stops.Stop(
        id=stops.new_stop_id(),
        run=state.run_id,
        role=author,
        kind="draft",
        action=action,
        choices=stops.ASK_FIRST_CHOICES,
        origin=state.origin,
        created_at=now,
        expires_at=None
        if state.origin == "person"
        else now + approval_timeout(state.root, ci=state.in_ci),
        args={"gaps": [g.as_json() for g in open_gaps], "passes": passes},
        change=state.change,
    )
    start_waiting(state.root, stop)
    state.log.append(logevents.Stop(stop.id, "draft", action, choices=list(stop.choices)))
    state.log.append(logevents.RunEnded("stopped", waiting_for=stop.id))
    return RunOutcome(state.run_id, "stopped", EXIT_STOPPED, action, stop=stop)
