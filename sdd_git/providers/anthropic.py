"""Anthropic's Messages API. Stateless: the whole conversation goes with every call, and an
assistant turn Anthropic produced goes back as its own content blocks (thinking signatures and all).
"""

from __future__ import annotations

import time
from typing import Any

from sdd_git.providers.base import (
    Message,
    ProviderError,
    ProviderReply,
    ProviderRequest,
    ToolCall,
    ToolSchema,
)
from sdd_git.providers.http import Sleep, post_json

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        key_env: str,
        max_tokens: int = 8192,
        timeout: float = 120.0,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.key_env = key_env
        self.max_tokens = max_tokens
        self.timeout = timeout
        self._api_key = api_key.strip() if api_key else None  # a stray newline breaks HTTP
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, request: ProviderRequest) -> ProviderReply:
        url = f"{self.base_url}/v1/messages"
        system, messages = wire_messages(request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = wire_tools(request.tools)
        headers = {
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "X-SDD-Role": request.role,
            "X-SDD-Run": request.run_id,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        answer = post_json(
            url,
            body,
            headers,
            timeout=self.timeout,
            sleep=self._sleep,
            provider=self.name,
            key_env=self.key_env,
        )
        return parse_reply(answer, where=f"{self.name} at {url}")


def wire_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Neutral messages as (system, Messages API messages).

    System messages become the top-level `system`. Tool results become `tool_result` blocks in
    a user message; messages of the same role in a row are merged into one, since the API wants
    user and assistant to alternate, and within a user message the tool results come first.
    """
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            if content:
                system.append(str(content))
        elif role == "user":
            _add(wire, "user", [{"type": "text", "text": str(content or "")}])
        elif role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": str(content or ""),
            }
            _add(wire, "user", [block])
        elif role == "assistant":
            raw = message.get("raw")
            if message.get("provider") == "anthropic" and isinstance(raw, list):
                _add(wire, "assistant", raw)  # verbatim: thinking blocks keep their signature
                continue
            blocks: list[dict[str, Any]] = []
            if content:
                blocks.append({"type": "text", "text": str(content)})
            blocks.extend(
                {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["args"]}
                for call in message.get("tool_calls") or []
            )
            _add(wire, "assistant", blocks)
        else:
            raise ProviderError(f"anthropic: cannot send a message with role {role!r}")
    for turn in wire:
        if turn["role"] == "user":  # tool results first (a stable sort keeps their order)
            turn["content"].sort(key=lambda block: block.get("type") != "tool_result")
    return "\n\n".join(system), wire


def _add(wire: list[dict[str, Any]], role: str, blocks: list[Any]) -> None:
    if not blocks:
        return
    if wire and wire[-1]["role"] == role:
        wire[-1]["content"].extend(blocks)
    else:
        wire.append({"role": role, "content": list(blocks)})


def wire_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
        for tool in tools
    ]


def parse_reply(answer: dict[str, Any], *, where: str) -> ProviderReply:
    """The response's content blocks as a reply; the block list is kept verbatim as `raw`."""
    raw = answer.get("content")
    if not isinstance(raw, list):
        raise ProviderError(f"{where}: the answer has no content list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in raw:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            args = block.get("input")
            calls.append(
                ToolCall(
                    id=str(block.get("id") or f"toolu_{len(calls) + 1}"),
                    name=str(block.get("name") or ""),
                    args=args if isinstance(args, dict) else {"_unparsed": str(args)},
                )
            )
    text = "".join(texts) or None
    usage = answer.get("usage")
    message: Message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [{"id": c.id, "name": c.name, "args": c.args} for c in calls],
        "provider": "anthropic",
        "raw": raw,
    }
    return ProviderReply(
        text=text,
        tool_calls=tuple(calls),
        message=message,
        usage=usage if isinstance(usage, dict) else {},
    )
