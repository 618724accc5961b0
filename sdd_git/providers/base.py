"""What a provider takes and gives back. Providers import nothing else of sdd's but errors.

Messages are plain, provider-neutral dicts (they go into the run log as they are):

    {"role": "system", "content": "..."}
    {"role": "user", "content": "..."}
    {"role": "assistant", "content": "..." | None,
     "tool_calls": [{"id": "...", "name": "...", "args": {...}}],
     "provider": "openai" | "anthropic" | "script",   # who produced `raw`
     "raw": <the provider's own message, verbatim>}     # replayed exactly to the same provider
    {"role": "tool", "tool_call_id": "...", "name": "...", "content": "..."}

Anthropic's assistant messages go back to Anthropic as their `raw` blocks (its API requires the
thinking blocks, signatures and all). Every other assistant message is rebuilt from `content`
and `tool_calls` with standard fields only (`content: ""`, never null): local OpenAI-compatible
servers answer HTTP 500 to a replayed `function_call` or `reasoning_content`. No provider relies
on server-side state. A tool call whose arguments could not be read carries `error` in its
neutral form, as on ToolCall.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sdd_git.errors import SddError

Message = dict[str, Any]


class ProviderError(SddError):
    """The provider could not answer: the message says which provider, what happened, and why."""


@dataclass(frozen=True)
class ToolSchema:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON Schema object


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    args: dict[str, Any]
    # Set when the model's arguments were not a JSON object (args is then {}): the runner tells
    # the model exactly this instead of running the tool with empty arguments.
    error: str | None = None


def neutral_call(call: ToolCall) -> dict[str, Any]:
    """A tool call as it goes into a neutral assistant message (and the run log)."""
    neutral: dict[str, Any] = {"id": call.id, "name": call.name, "args": call.args}
    if call.error:
        neutral["error"] = call.error
    return neutral


@dataclass(frozen=True)
class ProviderRequest:
    role: str  # exactly one role id per call
    run_id: str
    call_index: int  # 1-based, counted across resumes of the run
    messages: list[Message]  # the system message first
    tools: list[ToolSchema]
    # None: the configured default (provider.tool_choice, `auto` unless set). Else `auto`,
    # `none`, `required`, or the name of the one tool the model must call (the accuracy loop).
    # Sent only when tools are offered.
    tool_choice: str | None = None
    # The most the reply may take, in tokens: the room the runner left for it in the context.
    # A configured `max_tokens` wins. None: no cap.
    max_reply_tokens: int | None = None
    role_call_index: int = 0  # 1-based count of this role's calls, in a run of one role; else 0
    # Told each piece of the reply's text as it arrives, where the provider can stream it (the
    # person watches in a terminal); None asks for the whole answer at once.
    on_text: Callable[[str], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ProviderReply:
    text: str | None
    tool_calls: tuple[ToolCall, ...]
    message: Message  # the assistant message to append to the conversation (with `raw`)
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None  # the model the server says answered (`sdd provider check`)


class Provider(Protocol):
    name: str  # "openai", "anthropic" or "script"
    model: str

    def complete(self, request: ProviderRequest) -> ProviderReply: ...
