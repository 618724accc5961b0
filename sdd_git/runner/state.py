"""The state of one run, and what every part of the runner shares to act on it: the outcome, the
tool context, results, provider settings, say messages and "Stop now".

The state is rebuilt from the run log whenever a run continues (`run.answer`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdd_git.providers.base import Message, Provider, ToolCall, ToolSchema
from sdd_git.roles.profile import RoleProfile
from sdd_git.root import Root
from sdd_git.runner import stops
from sdd_git.runner.boundary import BoundaryIndex
from sdd_git.runner.clock import Clock, parse_duration
from sdd_git.runner.masking import Masker, child_environment
from sdd_git.runner.runlog import RunLog
from sdd_git.tools.base import ToolContext
from sdd_git.tools.catalog import TOOL_CLASSES

DEFAULT_TIMEOUT_SECONDS = 600.0
EXIT_DONE, EXIT_ERROR, EXIT_STOPPED, EXIT_NO_SPEC, EXIT_INTERRUPTED = 0, 1, 3, 4, 130
LOOP_TOOLS = ("submit_draft", "report_gaps", "submit_revision")


@dataclass(frozen=True)
class RunOutcome:
    run_id: str | None
    status: str  # done, stopped, no-spec, no-draft, expired, stopped-now, interrupted, failed
    exit_code: int
    message: str
    stop: stops.Stop | None = None
    reply: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "status": self.status,
            "exit_code": self.exit_code,
            "message": self.message,
            "stop": self.stop.as_json() if self.stop else None,
            "reply": self.reply,
        }


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
    messages: list[Message] = field(default_factory=list)
    calls_made: int = 0
    says_seen: int = 0
    tool_context: ToolContext | None = None
    boundary: BoundaryIndex | None = None
    # The masked form of each message already sent, by position, with the message it came from:
    # a long run masks each message once, not its whole history on every turn.
    masked_cache: list[tuple[Message, Message]] = field(default_factory=list)


def control_folder(root: Root, run_id: str) -> Path:
    return root.local / "runs" / run_id


def role_lock(root: Root, role: str) -> Path:
    return root.local / "locks" / f"role-{role}.lock"


def provider_settings(root: Root, role: RoleProfile) -> tuple[Provider, Masker, list[str]]:
    """The role's provider, a masker for everything the run writes or sends, and the names of
    the variables that hold its key (kept out of child processes)."""
    from sdd_git.providers.select import make_provider, settings_for
    from sdd_git.runner.masking import masker_for

    settings = settings_for(root, role.model)
    provider = make_provider(settings)
    extra = [s for s in (settings.key, os.environ.get("SDD_API_KEY")) if s]
    names = [settings.key_env] if settings.key_env else []
    return provider, masker_for(root.path, extra), names


def approval_timeout(root: Root) -> float:
    from sdd_git.yamlio import read_mapping

    approvals = read_mapping(root.config).get("approvals") or {}
    value = approvals.get("timeout") if isinstance(approvals, dict) else None
    return parse_duration(value, DEFAULT_TIMEOUT_SECONDS)


def offered_tools(critic: str | None) -> tuple[str, ...]:
    return tuple(
        name
        for name, kind in TOOL_CLASSES.items()
        if name != "handoff" and (kind != "loop" or (critic is not None and name in LOOP_TOOLS))
    )


def tool_context(state: RunState) -> ToolContext:
    if state.tool_context is None:
        state.tool_context = ToolContext(
            root=state.root,
            role=state.role.name,
            run_id=state.run_id,
            change=state.change,
            child_env=child_environment(os.environ, state.run_id, state.secret_names),
            mask=state.masker,
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
    state.log.append("tool_result", call_id=call.id, tool=call.name, content=content, **fields)
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
    if not inbox.exists():
        return []
    lines = [line for line in inbox.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for line in lines[state.says_seen :]:
        try:
            out.append(str(json.loads(line)["text"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def end(state: RunState, status: str, code: int, message: str, **extra: Any) -> RunOutcome:
    state.log.append("run_ended", status=status)
    return RunOutcome(state.run_id, status, code, message, **extra)
