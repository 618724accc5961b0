"""What a provider takes and gives back. Providers import nothing else of sdd's but errors.

Messages are plain, provider-neutral dicts (they go into the run log as they are):

    {"role": "system", "content": "..."}
    {"role": "user", "content": "..."}
    {"role": "assistant", "content": "..." | None,
     "tool_calls": [{"id": "...", "name": "...", "args": {...}}],
     "provider": "openai" | "anthropic" | "script",   # who produced `raw`
     "raw": <the provider's own message, verbatim>}     # replayed exactly to the same provider
    {"role": "tool", "tool_call_id": "...", "name": "...", "content": "..."}

An assistant message whose `provider` matches the provider being called is sent back as its
`raw` form, byte for byte in meaning (reasoning blocks, thinking signatures and all); otherwise it
is rebuilt from `content` and `tool_calls`. No provider relies on server-side state.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class ProviderRequest:
    role: str  # exactly one role id per call
    run_id: str
    call_index: int  # 1-based, counted across resumes of the run
    messages: list[Message]  # the system message first
    tools: list[ToolSchema]


@dataclass(frozen=True)
class ProviderReply:
    text: str | None
    tool_calls: tuple[ToolCall, ...]
    message: Message  # the assistant message to append to the conversation (with `raw`)
    usage: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    name: str  # "openai", "anthropic" or "script"
    model: str

    def complete(self, request: ProviderRequest) -> ProviderReply: ...
