"""Anthropic's Messages API. Stateless: the whole conversation goes with every call, and an
assistant turn Anthropic produced goes back as its own content blocks (thinking signatures and all).

Prompt caching: Anthropic reads a prefix from its cache only where the request marks a breakpoint
(`cache_control`), and only when everything before it (tools, then system, then messages, in
that order) is exactly what an earlier request wrote. So the body is built to stay the same from
one call to the next, with the parts that can change per call (tool_choice) after the messages,
and four breakpoints at most, as the API allows: the last tool schema and the system block (the
fixed prefix), the latest turn's last block (the conversation so far, written for the next call)
and the user turn before it (read back even when a wide turn puts the newest breakpoint past the
API's lookback of about 20 blocks). `cache=False` sends none of them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sdd_git.providers.base import (
    Message,
    ProviderError,
    ProviderReply,
    ProviderRequest,
    ToolCall,
    ToolSchema,
    neutral_call,
)
from sdd_git.providers.http import HttpProvider, Sleep

if TYPE_CHECKING:
    from sdd_git.providers.settings import ProviderSettings

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192  # the Messages API requires max_tokens
EPHEMERAL = {"type": "ephemeral"}  # the 5-minute cache; the only kind that needs no beta header
# Blocks the API refuses a breakpoint on: a thinking block keeps its signature, nothing else.
_NO_BREAKPOINT = frozenset({"thinking", "redacted_thinking"})


class AnthropicProvider(HttpProvider):
    name = "anthropic"

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        key_env: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 120.0,
        sleep: Sleep = time.sleep,
        *,
        retries: int = 2,
        temperature: float | None = None,
        headers: Mapping[str, str] | None = None,
        tool_choice: str = "auto",
        cache: bool = True,
    ) -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.key_env = key_env
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.temperature = temperature
        self.tool_choice = tool_choice
        self.cache = cache
        self._connect(
            api_key, headers, timeout=timeout, retries=retries, sleep=sleep, key_env=key_env
        )

    @classmethod
    def from_settings(cls, settings: ProviderSettings, api_key: str | None) -> AnthropicProvider:
        return cls(
            settings.model,
            settings.url,
            api_key,
            settings.key_source or "",
            settings.max_tokens or DEFAULT_MAX_TOKENS,
            settings.timeout,
            retries=settings.retries,
            temperature=settings.temperature,
            headers=dict(settings.headers),
            tool_choice=settings.tool_choice,
            cache=settings.cache,
        )

    def complete(self, request: ProviderRequest) -> ProviderReply:
        url = f"{self.base_url}/v1/messages"
        system, messages = wire_messages(request.messages)
        # Keys in the order the prompt is read (tools, system, messages), so each request's body
        # starts with the previous one's; what may change from call to call comes after.
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens}
        if request.tools:
            body["tools"] = wire_tools(request.tools)
        if system:
            body["system"] = [{"type": "text", "text": system}] if self.cache else system
        body["messages"] = messages
        if request.tools:
            body["tool_choice"] = wire_tool_choice(request.tool_choice or self.tool_choice)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.cache:
            mark_breakpoints(body)
        where = f"{self.name} at {url}"
        if request.on_text is None:
            answer = self._http.post_json(url, body, self._request_headers(request))
            return parse_reply(answer, where=where)
        from sdd_git.providers.stream import AnthropicStream

        body["stream"] = True
        stream = AnthropicStream(request.on_text, where)
        whole = self._http.post_stream(url, body, self._request_headers(request), stream.feed.feed)
        # A server that does not stream answers with the whole document: shown once, at the end.
        answer = stream.answer() if whole is None else whole
        return parse_reply(answer, where=where)

    def models(self) -> list[str]:
        """The model ids the server offers (GET /v1/models), every page of them."""
        found: list[str] = []
        after: str | None = None
        for _ in range(50):  # a bound: a server that always says has_more cannot loop us
            query = "?limit=1000" + (f"&after_id={after}" if after else "")
            answer = self._http.get_json(
                f"{self.base_url}/v1/models{query}", self._request_headers(None)
            )
            data = answer.get("data")
            found.extend(
                str(item["id"]) for item in data or [] if isinstance(item, dict) and item.get("id")
            )
            last = answer.get("last_id")
            if not answer.get("has_more") or not isinstance(last, str) or not last:
                break
            after = last
        return found

    def _wire_headers(self) -> dict[str, str]:
        return {"anthropic-version": API_VERSION}

    def _key_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key}


def wire_tool_choice(choice: str) -> dict[str, Any]:
    """sdd's tool_choice words in the Messages API's shape (`required` is its `any`)."""
    if choice in ("auto", "none"):
        return {"type": choice}
    if choice == "required":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def mark_breakpoints(body: dict[str, Any]) -> None:
    """Adds `cache_control` to the last tool, the system block, and the last block of the
    latest turn and of the user turn before it (4 at most, the API's limit). Each marked block
    is a copy: an assistant turn's blocks are the run's own `raw`, which must not carry a
    breakpoint into later calls."""
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    system = body.get("system")
    if isinstance(system, list) and system:
        system[-1] = {**system[-1], "cache_control": EPHEMERAL}
    turns = body["messages"]
    # The latest turn, and the user turn before it: the previous call's last breakpoint, so
    # what that call wrote is read back whatever the lookback.
    marked = turns[-1:] + [t for t in turns[:-1] if t["role"] == "user"][-1:]
    for turn in marked:
        blocks = turn["content"]
        for index in range(len(blocks) - 1, -1, -1):
            block = blocks[index]
            if isinstance(block, dict) and block.get("type") not in _NO_BREAKPOINT:
                blocks[index] = {**block, "cache_control": EPHEMERAL}
                break


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
                    args=args if isinstance(args, dict) else {},
                    error=None
                    if isinstance(args, dict)
                    else "your arguments were not a JSON object; send one JSON object",
                )
            )
    text = "".join(texts) or None
    usage = answer.get("usage")
    if isinstance(usage, dict) and usage:
        # Anthropic's input_tokens leaves out what was read from or written to the cache.
        usage = {
            **usage,
            "cached_input_tokens": _count(usage.get("cache_read_input_tokens")),
            "cache_write_input_tokens": _count(usage.get("cache_creation_input_tokens")),
        }
    message: Message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [neutral_call(c) for c in calls],
        "provider": "anthropic",
        "raw": raw,
    }
    model = answer.get("model")
    return ProviderReply(
        text=text,
        tool_calls=tuple(calls),
        message=message,
        usage=usage if isinstance(usage, dict) else {},
        model=model if isinstance(model, str) else None,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
