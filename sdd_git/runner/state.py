"""The state of one run, and what every part of the runner shares to act on it: the outcome, the
tool context, results, provider settings, say messages and "Stop now".

The state is rebuilt from the run log whenever a run continues (`run.answer`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdd_git import statefolders
from sdd_git.errors import SddError
from sdd_git.masking.masker import Masker
from sdd_git.masking.reach import child_environment
from sdd_git.netaddress import is_local
from sdd_git.providers.base import (
    Message,
    Provider,
    ProviderReply,
    ProviderRequest,
    ToolCall,
    ToolSchema,
)
from sdd_git.recordjson import record_json
from sdd_git.roles.profile import PRODUCES, RoleProfile, Rule
from sdd_git.root import Root
from sdd_git.runner import logevents, stops
from sdd_git.runner.boundary import BoundaryIndex
from sdd_git.runner.clock import Clock, parse_duration
from sdd_git.runner.logwriter import RunLog
from sdd_git.tools.base import ToolContext
from sdd_git.tools.catalog import CONNECTOR_TOOLS, LOOP_TOOLS, TOOL_CLASSES, offered_by_produces

if TYPE_CHECKING:
    from sdd_git.providers.select import Kept

DEFAULT_TIMEOUT_SECONDS = 600.0
# A stop raised in CI waits for a reviewer who is not at the terminal: a day, unless
# `approvals.ci_timeout` says otherwise.
DEFAULT_CI_TIMEOUT_SECONDS = 86400.0
EXIT_DONE, EXIT_ERROR, EXIT_STOPPED, EXIT_NO_SPEC, EXIT_INTERRUPTED = 0, 1, 3, 4, 130
EVERY_ROLE = ("remember", "handoff")  # offered whatever the role produces

# What each `produces` may use beyond the read tools. A small local model is offered only these:
# every schema costs context (the whole catalog is about 7 KB), and a tool a role cannot use is
# one more way for the model to go astray. The boundary and the gate still judge every call.
#
# Each tool declares which `produces` it serves (`produces` on its class, in tools/); today:
#
#   produces        tools beyond the read tools (and `remember` and `handoff`, which every role has)
#   reading         draft_reading
#   code            write_file, delete_file, run_command, git_commit, git_push, git_tag
#   scenario        draft_scenarios
#   release-notes   write_file
#   plan            draft_plan (a lead's plan: it binds nobody until the person accepts it)
#   review          (none: read only, and its memory)
#   other           every tool
#   (not said)      the read and draft tools only: a role file that does not say what it
#                   produces (a misspelt `prodcues:`, a pack of another tool) never gets
#                   git_push or deploy by default; `produces: other` says so on purpose
#
# Every role also has `handoff`: it stops for the person like any consequential call, and the
# receiver runs under its own boundary. A role whose file lists `tools:` gets the intersection.
# The loop tools come only with --with, and only inside the accuracy loop.
# About four characters a token: close enough for English text, code and JSON, and no tokenizer
# to install. The reply needs room too, so that much is kept free of the request.
CHARS_PER_TOKEN = 4
REPLY_ROOM_TOKENS = 8192  # the most of the context kept for the reply: a quarter, up to this
LOCAL_CONTEXT_TOKENS = 8192  # what llama.cpp, LM Studio and Ollama servers are often given
REMOTE_CONTEXT_TOKENS = 128000


@dataclass(frozen=True)
class RunOutcome:
    run_id: str | None
    status: str  # done, stopped, no-spec, no-draft, expired, stopped-now, interrupted, failed
    exit_code: int
    message: str
    stop: stops.Stop | None = None
    reply: str | None = None
    reply_id: str | None = None  # the reply's id in the role's conversation, for --reply-to
    hint: str | None = None  # what the person can do next, after a failure

    def as_json(self) -> dict[str, Any]:
        return record_json(self, omit=("hint",), rename={"run_id": "run"})


class RunCannotGoOn(SddError):
    """The model's side of a run cannot go on: the run ends failed, with what it already did."""


class ContextOverflow(RunCannotGoOn):
    """A request that cannot fit the provider's context, even with old tool results trimmed."""


class ModelStuck(RunCannotGoOn):
    """The model asked for exactly the same calls again and again."""


# Identical replies in a row (tool calls and arguments) allowed before the run ends: a small model
# can ask for the same listing forever, and each ask costs a provider call and context.
REPEATS_ALLOWED = 3


@dataclass
class RunState:
    """A run in progress, rebuilt from its log whenever it continues."""

    root: Root
    run_id: str
    role: RoleProfile
    provider: Provider
    log: RunLog
    masker: Masker
    clock: Clock
    change: str | None
    origin: str
    offered: tuple[str, ...]
    accepted: bool  # the change has an accepted section: the gate on actions is open
    secret_names: tuple[str, ...] = ()
    context_tokens: int = REMOTE_CONTEXT_TOKENS
    messages: list[Message] = field(default_factory=list)
    calls_made: int = 0
    role_calls: dict[str, int] = field(default_factory=dict)  # calls by role, across resumes
    node_ask_first: tuple[Rule, ...] = ()  # a plan node's or a routine's own ask_first rules
    rehearsal: bool = False  # `sdd routine test`: no consequential action runs, even allowed
    unattended: bool = False  # a routine fired in CI: no saved always_allow rule applies
    in_ci: bool = False  # raised from a CI event or on a CI engine: stops expire on ci_timeout
    connectors: tuple[str, ...] = ()  # attached by `@NAME` in the task; kept in run_started
    last_calls: str = ""  # the previous reply's tool calls, as compared for repeats
    repeats: int = 0
    says_seen: int = 0
    tool_context: ToolContext | None = None
    boundary: BoundaryIndex | None = None
    # (tool, canonical inputs) the person allowed for this run only: rebuilt from the log's
    # `decision` events (allow_for_run) on every resume, never saved in the role file.
    for_run: set[tuple[str, str]] = field(default_factory=set)
    # The masked form of each message already sent, by position, with the message it came from:
    # a long run masks each message once, not its whole history on every turn.
    masked_cache: list[tuple[Message, Message]] = field(default_factory=list)


def control_folder(root: Root, run_id: str) -> Path:
    return root.local / "runs" / run_id


def provider_settings(
    root: Root, role: RoleProfile, keep: Kept | None = None
) -> tuple[Provider, Masker, list[str], int]:
    """The role's provider, a masker for everything the run writes or sends, the names of the
    variables that hold its key (kept out of child processes), and its context size in tokens.
    `keep` is the provider a resumed run started with (`providers.select.Kept`)."""
    from sdd_git.connectors.tokens import connector_secret_names, masker_for
    from sdd_git.providers.select import make_provider, settings_for
    from sdd_git.trust.pending import require_settings

    # A key goes only to an address she confirmed: the settings' and the role's (checked with
    # the role by `trusted.require`; here again, as this is where the key is read).
    require_settings(root, "sending the model's key")
    settings = settings_for(root, role.model, keep=keep)
    provider = make_provider(settings)
    # A header's `$NAME` is a key too: its value is masked, its variable kept from children.
    header_values = [os.environ.get(name, "").strip() for name in settings.header_variables]
    extra = [s for s in (settings.key, os.environ.get("SDD_API_KEY"), *header_values) if s]
    names = [settings.key_env] if settings.key_env else []
    names += settings.header_variables
    names += connector_secret_names(root.path)  # connector tokens never reach a child process
    return provider, masker_for(root.path, extra), names, context_size(settings)


def context_size(settings: object) -> int:
    """The provider's context in tokens: its `context` setting, else a guess from where it is.
    A local server is usually started with a small context; a hosted one has a large one."""
    configured = getattr(settings, "context", None)
    if isinstance(configured, int) and not isinstance(configured, bool) and configured > 0:
        return configured
    base_url = str(getattr(settings, "base_url", None) or "")
    return LOCAL_CONTEXT_TOKENS if is_local(base_url) else REMOTE_CONTEXT_TOKENS


def approval_timeout(root: Root, *, ci: bool = False) -> float:
    """How long a stop nobody answers at once waits: `approvals.timeout` (default 10 minutes);
    for a stop raised in CI, `approvals.ci_timeout` (default 24 hours), same forms."""
    from sdd_git.settings import settings

    approvals = settings(root).get("approvals") or {}
    key, default = (
        ("ci_timeout", DEFAULT_CI_TIMEOUT_SECONDS) if ci else ("timeout", DEFAULT_TIMEOUT_SECONDS)
    )
    value = approvals.get(key) if isinstance(approvals, dict) else None
    return parse_duration(value, default)


LEADS_ONLY = ("draft_plan",)
# `other` is not a key: it is offered every tool.
TOOLS_BY_PRODUCES: dict[str, tuple[str, ...]] = {
    p: offered_by_produces(p) for p in PRODUCES if p != "other"
}
# A role that does not say what it produces: the draft tools but a lead's plan and a network
# node's result (added for a node only), and no handoff either.
UNSAID_TOOLS = tuple(
    name
    for name, kind in TOOL_CLASSES.items()
    if kind == "draft" and name not in (*LEADS_ONLY, "return_artifact")
)


def offered_tools(role: RoleProfile | None, critic: str | None) -> tuple[str, ...]:
    """The tools a role is offered: the read tools and what its `produces` needs (the table
    above), narrowed by its own `tools:` list; the loop tools only in a run with a critic."""
    produces = role.produces if role is not None else "other"
    extra = TOOLS_BY_PRODUCES.get(produces) if produces is not None else UNSAID_TOOLS
    allowed = getattr(role, "tools", None)  # a role file's own allowlist, when it has one
    chosen: list[str] = []
    for name, kind in TOOL_CLASSES.items():
        if name in CONNECTOR_TOOLS:
            continue  # only with a connector attached: prompt.with_connectors
        if kind == "loop":
            if critic is not None and name in LOOP_TOOLS:
                chosen.append(name)  # the runner's own protocol, never narrowed by `tools:`
            continue
        if produces is None and kind != "read" and name not in UNSAID_TOOLS:
            continue  # read and draft only: not even `handoff`
        if extra is not None and kind != "read" and name not in EVERY_ROLE and name not in extra:
            continue
        if extra is None and name in LEADS_ONLY:
            continue  # every tool for `other`, but a plan is drafted by a lead only
        if allowed is not None and name not in allowed:
            continue
        chosen.append(name)
    return tuple(chosen)


def read_only(offered: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(name for name in offered if TOOL_CLASSES.get(name) == "read")


def tool_context(state: RunState) -> ToolContext:
    if state.tool_context is None:
        state.tool_context = ToolContext(
            root=state.root,
            role=state.role.name,
            run_id=state.run_id,
            change=state.change,
            child_env=child_environment(os.environ, state.run_id, state.secret_names),
            mask=state.masker,
            connectors=state.connectors,
        )
    return state.tool_context


def tool_result(
    state: RunState,
    call: ToolCall,
    content: str,
    messages: list[Message] | None = None,
    thread: str | None = None,
    **fields: Any,
) -> None:
    """What the model reads back for one tool call: masked, logged, added to its messages."""
    content = state.masker(content)
    if thread is not None:
        fields["thread"] = thread
    state.log.append(logevents.ToolResult(call.id, call.name, content, extra=fields))
    (state.messages if messages is None else messages).append(
        {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
    )


def masked(state: RunState, messages: list[Message]) -> list[Message]:
    """The messages as a model may see them: every secret masked."""
    if messages is not state.messages:  # the critic's own thread: not cached
        return [_mask_message(state, m) for m in messages]
    cache = state.masked_cache
    out: list[Message] = []
    for index, message in enumerate(messages):
        if index < len(cache) and cache[index][0] is message:
            out.append(cache[index][1])
            continue
        shown = _mask_message(state, message)
        del cache[index:]
        cache.append((message, shown))
        out.append(shown)
    return out


def _mask_message(state: RunState, message: Message) -> Message:
    masked_message: Message = json.loads(state.masker(json.dumps(message, ensure_ascii=False)))
    return masked_message


def tool_schemas(offered: tuple[str, ...]) -> list[ToolSchema]:
    from sdd_git.tools.toolbox import schemas

    return schemas(offered)


def stop_requested(state: RunState) -> bool:
    return (control_folder(state.root, state.run_id) / "stop-now").exists()


def new_says(state: RunState) -> list[str]:
    inbox = control_folder(state.root, state.run_id) / "say.jsonl"
    try:
        text = statefolders.read_text(inbox)
    except FileNotFoundError:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    out = []
    for line in lines[state.says_seen :]:
        try:
            out.append(str(json.loads(line)["text"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def interrupted(state: RunState) -> RunOutcome:
    """Ctrl-C or SIGTERM: the run ends in its log once, however many signals came."""
    if not state.log.ended:
        state.log.append(logevents.Decision(None, "stop_now"))
        state.log.append(logevents.RunEnded("interrupted"))
    return RunOutcome(
        state.run_id, "interrupted", EXIT_INTERRUPTED, "interrupted; completed actions stay"
    )


def failed(state: RunState, exc: SddError) -> RunOutcome:
    """A run that cannot go on (the provider failed, the context overflowed): ended in its log,
    and told to the person with what this run already did, since it stays done."""
    state.log.append(logevents.RunError(exc.message))
    if not state.log.ended:
        state.log.append(logevents.RunEnded("failed"))
    done = actions_done(state)
    message = exc.message
    if done:
        message += ". Already done in this run, and it stays done: " + "; ".join(done)
    where = f"what happened, event by event: sdd role log {state.run_id}"
    return RunOutcome(
        state.run_id,
        "failed",
        exc.exit_code,
        message,
        hint=f"{exc.hint}; {where}" if exc.hint else where,
    )


def actions_done(state: RunState) -> list[str]:
    """The allowed actions this run performed, in a few words each."""
    out = []
    for event in state.log.events():
        if event.get("event") != "action_done":
            continue
        args = event.get("args") or {}
        what = args.get("path") or args.get("command") or args.get("message") or ""
        shown = " ".join(str(what).split())
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        by = {
            "allow_once": "allowed once",
            "allow_for_run": "allowed for this run",
            "for_run": "allowed for this run",
            "always_allow": "allowed always",
        }.get(str(event.get("by")), "by a saved rule")
        out.append(f"{event.get('tool')} {shown} ({by})".replace("  ", " "))
    return out


def end(state: RunState, status: str, code: int, message: str, **extra: Any) -> RunOutcome:
    state.log.append(logevents.RunEnded(status))
    return RunOutcome(state.run_id, status, code, message, **extra)


def count_repeat(state: RunState, calls: tuple[ToolCall, ...]) -> None:
    """Counts replies that repeat the previous one's tool calls exactly; any other resets it.
    Also called while a run is rebuilt from its log, so a stop does not reset the count."""
    signature = ""
    if calls:
        # Through plain JSON first: a replayed script may hold number keys, which sort_keys
        # cannot order next to text keys.
        plain = json.loads(json.dumps([[c.name, c.args, c.error] for c in calls], default=str))
        signature = json.dumps(plain, sort_keys=True)
    state.repeats = state.repeats + 1 if signature and signature == state.last_calls else 0
    state.last_calls = signature


def check_progress(state: RunState, calls: tuple[ToolCall, ...]) -> None:
    """Raises ModelStuck before the same tool calls, with the same arguments, would run for the
    REPEATS_ALLOWED + 1st time in a row. A reply without tool calls resets the count."""
    count_repeat(state, calls)
    if state.repeats >= REPEATS_ALLOWED:
        shown = ", ".join(f"{c.name} {json.dumps(c.args, default=str)[:60]}" for c in calls)
        raise ModelStuck(
            f"the model asked for the same thing {state.repeats + 1} times in a row ({shown}) "
            "and was getting nowhere, so the run ends here; the last ask was not run",
            hint="a larger model, or a task that says what to do first, usually helps",
        )


def call_provider(
    state: RunState,
    provider: Provider,
    role: str,
    outgoing: list[Message],
    tools: tuple[str, ...],
    *,
    context_tokens: int | None = None,
    expected: str | None = None,
) -> ProviderReply:
    """One provider call: the request fitted to the provider's context, `expected` named as the
    one tool to call where the provider can be told so."""
    schemas = tool_schemas(tools)
    limit = state.context_tokens if context_tokens is None else context_tokens
    fitted, trimmed = fit_context(outgoing, schemas, limit)
    if trimmed:
        state.log.append(logevents.ContextTrimmed(role, trimmed, request_tokens(fitted, schemas)))
    state.role_calls[role] = state.role_calls.get(role, 0) + 1
    from sdd_git.runner.streamed import streamed_text

    shown = streamed_text(state.log.listener, state.masker, role)
    reply = provider.complete(
        ProviderRequest(
            role=role,
            run_id=state.run_id,
            call_index=state.calls_made,
            # Known only in a run of one role (a network's node); the accuracy loop's author and
            # critic share one count, as its scripts are written.
            role_call_index=state.role_calls[role] if len(state.role_calls) == 1 else 0,
            messages=fitted,
            tools=schemas,
            tool_choice=expected,  # None: the configured default (`auto`)
            max_reply_tokens=reply_cap(limit),
            on_text=shown,
        )
    )
    if shown is not None:
        shown.flush()
    return reply


def request_tokens(messages: list[Message], schemas: list[ToolSchema]) -> int:
    """The request's size in tokens, estimated at four characters a token. An assistant turn is
    counted as the provider's own form (`raw`) when it has one, since that is what is sent."""
    chars = sum(len(json.dumps(_as_sent(m), ensure_ascii=False)) for m in messages)
    chars += sum(len(s.name) + len(s.description) + len(json.dumps(s.parameters)) for s in schemas)
    return chars // CHARS_PER_TOKEN + 1


def _as_sent(message: Message) -> Any:
    # Anthropic gets its own blocks back (thinking and all); every other provider gets the turn
    # rebuilt from content and tool calls, so `raw` is not part of what it is sent.
    if message.get("provider") == "anthropic" and message.get("raw"):
        return message["raw"]
    return {k: v for k, v in message.items() if k not in ("raw", "provider")}


def reply_room(limit: int) -> int:
    """The tokens kept free for the reply in a context of `limit`, and sent as the reply's cap:
    a small local model that never stops talking then ends at the cap, not after minutes."""
    return max(min(REPLY_ROOM_TOKENS, limit // 4), 1)


def reply_cap(limit: int) -> int | None:
    """The cap sent with a request: the reply room, only where the context is small enough to
    squeeze it. A hosted model's own output limit may be below 8,192 (it would refuse the
    request), and it is not the one that talks until the context is full."""
    room = reply_room(limit)
    return room if room < REPLY_ROOM_TOKENS else None


def fit_context(
    messages: list[Message], schemas: list[ToolSchema], limit: int
) -> tuple[list[Message], int]:
    """The messages cut to fit `limit` tokens with room for the reply: old tool results are
    replaced by a note, oldest first. The system prompt, the task and the last turn (the last
    assistant message and what answers it) are never cut. Returns the messages and how many
    results were trimmed; raises ContextOverflow when even that is not enough."""
    budget = max(limit - reply_room(limit), 1)
    used = request_tokens(messages, schemas)
    if used <= budget:
        return messages, 0
    last_turn = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=len(messages)
    )
    fitted = list(messages)
    trimmed = 0
    for index in range(2, last_turn):
        if used <= budget:
            break
        message = fitted[index]
        content = str(message.get("content") or "")
        if message.get("role") != "tool" or content.startswith("[trimmed:"):
            continue
        note = f"[trimmed: {len(content):,} characters of an old tool result]"
        fitted[index] = {**message, "content": note}
        used -= (len(json.dumps(content)) - len(json.dumps(note))) // CHARS_PER_TOKEN
        trimmed += 1
    used = request_tokens(fitted, schemas)
    if used > budget:
        raise ContextOverflow(
            f"the next request is about {used:,} tokens (with {len(schemas)} tool schemas and "
            f"room for the reply), and the provider's context is {limit:,} tokens; trimming old "
            "tool results was not enough",
            hint="raise the context: start the server with a larger context (Ollama: num_ctx, "
            "llama.cpp: --ctx-size) and set provider `context:` in .sdd/config.yaml to match; "
            "or give a shorter task or smaller attachments",
        )
    return fitted, trimmed
