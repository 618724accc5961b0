"""Any OpenAI-compatible Chat Completions server: OpenAI, xAI Grok, Ollama, vLLM, llama.cpp
server, LM Studio, OpenRouter. Stateless: the whole conversation goes with every call."""

from __future__ import annotations

import json
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
from sdd_git.providers.http import Sleep, post_json, whole_characters

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        key_env: str,
        timeout: float = 120.0,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.key_env = key_env
        self.timeout = timeout
        self._api_key = api_key.strip() if api_key else None  # a stray newline breaks HTTP
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"OpenAIProvider(model={self.model!r}, base_url={self.base_url!r})"

    def complete(self, request: ProviderRequest) -> ProviderReply:
        url = f"{self.base_url}/chat/completions"
        body: dict[str, Any] = {"model": self.model, "messages": wire_messages(request.messages)}
        if request.tools:
            body["tools"] = wire_tools(request.tools)
        headers = {"X-SDD-Role": request.role, "X-SDD-Run": request.run_id}
        if self._api_key:  # a local server (Ollama, llama.cpp) needs none
            headers["Authorization"] = f"Bearer {self._api_key}"
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


def wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages as Chat Completions messages."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "user"):
            wire.append({"role": role, "content": message.get("content") or ""})
        elif role == "assistant":
            if message.get("provider") == "openai" and isinstance(message.get("raw"), dict):
                wire.append(message["raw"])  # exact replay: reasoning_content and all
                continue
            out: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
            calls = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
                }
                for call in message.get("tool_calls") or []
            ]
            if calls:  # an empty tool_calls list is refused by the API
                out["tool_calls"] = calls
            wire.append(out)
        elif role == "tool":
            wire.append(
                {
                    "role": "tool",
                    "tool_call_id": message["tool_call_id"],
                    "content": message.get("content") or "",
                }
            )
        else:
            raise ProviderError(f"openai: cannot send a message with role {role!r}")
    return wire


def wire_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def parse_reply(answer: dict[str, Any], *, where: str) -> ProviderReply:
    """`choices[0].message` as a reply; the wire message is kept verbatim as `raw`."""
    choices = answer.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    raw = first.get("message") if isinstance(first, dict) else None
    if not isinstance(raw, dict):
        raise ProviderError(f"{where}: the answer has no choices[0].message")
    content = raw.get("content")
    text = content if isinstance(content, str) and content else None
    calls = tuple(_tool_call(call, n) for n, call in enumerate(raw.get("tool_calls") or [], 1))
    usage = answer.get("usage")
    message: Message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [{"id": c.id, "name": c.name, "args": c.args} for c in calls],
        "provider": "openai",
        "raw": raw,
    }
    return ProviderReply(
        text=text,
        tool_calls=calls,
        message=message,
        usage=usage if isinstance(usage, dict) else {},
    )


def _tool_call(call: Any, n: int) -> ToolCall:
    function = call.get("function") if isinstance(call, dict) else None
    function = function if isinstance(function, dict) else {}
    call_id = call.get("id") if isinstance(call, dict) else None
    arguments = function.get("arguments")
    args: dict[str, Any]
    if isinstance(arguments, dict):  # some servers send an object, not a JSON string
        args = arguments
    elif arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        args = {}
    else:
        try:
            decoded = whole_characters(json.loads(arguments))  # JSON inside JSON: clean it too
        except (TypeError, ValueError):
            decoded = None
        args = decoded if isinstance(decoded, dict) else {"_unparsed": str(arguments)}
    return ToolCall(
        id=str(call_id) if call_id else f"call_{n}",
        name=str(function.get("name") or ""),
        args=args,
    )
