"""Any OpenAI-compatible Chat Completions server: OpenAI, xAI Grok, Ollama, vLLM, llama.cpp
server, LM Studio, OpenRouter. Stateless: the whole conversation goes with every call."""

from __future__ import annotations

import json
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
from sdd_git.providers.http import HttpProvider, Sleep, whole_characters

if TYPE_CHECKING:
    from sdd_git.providers.settings import ProviderSettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OLLAMA_PORT = 11434


class OpenAIProvider(HttpProvider):
    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        key_env: str,
        timeout: float = 120.0,
        sleep: Sleep = time.sleep,
        *,
        retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
        headers: Mapping[str, str] | None = None,
        tool_choice: str = "auto",
        num_ctx: int | None = None,
        ollama: bool | None = None,
        name: str = "openai",
    ) -> None:
        self.name = name
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.key_env = key_env
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.tool_choice = tool_choice
        self.num_ctx = num_ctx
        # Ollama is the one server that reads options.num_ctx; others may refuse the field.
        self.ollama = _is_ollama(self.base_url) if ollama is None else ollama
        self._connect(
            api_key, headers, timeout=timeout, retries=retries, sleep=sleep, key_env=key_env
        )

    @classmethod
    def from_settings(cls, settings: ProviderSettings, api_key: str | None) -> OpenAIProvider:
        return cls(
            settings.model,
            settings.url,
            api_key,
            settings.key_source or "",
            settings.timeout,
            retries=settings.retries,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            headers=dict(settings.headers),
            tool_choice=settings.tool_choice,
            num_ctx=settings.num_ctx,
            ollama=settings.ollama,
            name=settings.kind,
        )

    def complete(self, request: ProviderRequest) -> ProviderReply:
        url = f"{self.base_url}/chat/completions"
        # Tools before the messages and anything that may change per call after them, so each
        # request's body starts with the previous one's, byte for byte. (OpenAI and vLLM match
        # the rendered prompt, tools first, and cache it when the prefix repeats exactly.)
        body: dict[str, Any] = {"model": self.model}
        if request.tools:
            body["tools"] = wire_tools(request.tools)
        body["messages"] = wire_messages(request.messages)
        if request.tools:
            # Sent whenever tools are offered: llama-cpp-python drops the tools without it.
            body["tool_choice"] = wire_tool_choice(request.tool_choice or self.tool_choice)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        cap = self.max_tokens if self.max_tokens is not None else request.max_reply_tokens
        if cap is not None:
            body[reply_cap_field(self.base_url)] = cap
        if self.ollama and self.num_ctx is not None:
            body["options"] = {"num_ctx": self.num_ctx}
        where = f"{self.name} at {url}"
        if request.on_text is None:
            answer = self._http.post_json(url, body, self._request_headers(request))
            return parse_reply(answer, where=where)
        from sdd_git.providers.stream import OpenAiStream

        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        stream = OpenAiStream(request.on_text, where)
        whole = self._http.post_stream(url, body, self._request_headers(request), stream.feed.feed)
        # A server that does not stream answers with the whole document: shown once, at the end.
        answer = stream.answer() if whole is None else whole
        return parse_reply(answer, where=where)

    def models(self) -> list[str]:
        """The model ids the server offers (GET /models)."""
        answer = self._http.get_json(f"{self.base_url}/models", self._request_headers(None))
        data = answer.get("data")
        if not isinstance(data, list):  # Ollama's native /api/tags shape, for a bare base_url
            data = answer.get("models")
        found = [
            str(item.get("id") or item.get("name"))
            for item in data or []
            if isinstance(item, dict) and (item.get("id") or item.get("name"))
        ]
        return sorted(found)

    def _key_headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"}


def reply_cap_field(base_url: str) -> str:
    """The body field that caps the reply: OpenAI's own API wants the newer name (its reasoning
    models refuse `max_tokens`); every compatible server we know reads `max_tokens`."""
    return "max_completion_tokens" if base_url.startswith(DEFAULT_BASE_URL) else "max_tokens"


def _is_ollama(base_url: str) -> bool:
    from urllib.parse import urlsplit

    try:
        return urlsplit(base_url).port == OLLAMA_PORT
    except ValueError:
        return False


def wire_tool_choice(choice: str) -> Any:
    """`auto`, `none` and `required` as they are; a tool's name as the object that forces it."""
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages as Chat Completions messages, with standard fields only.

    An assistant turn is rebuilt, never replayed: `content` is "" rather than null, and nothing
    a server added (a legacy `function_call`, `reasoning_content`, `refusal`...) goes back. A
    local server such as llama-cpp-python answers HTTP 500 to those.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "user"):
            wire.append({"role": role, "content": _text(message.get("content"))})
        elif role == "assistant":
            out: dict[str, Any] = {"role": "assistant", "content": _text(message.get("content"))}
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
                    "content": _text(message.get("content")),
                }
            )
        else:
            raise ProviderError(f"openai: cannot send a message with role {role!r}")
    return wire


def _text(content: Any) -> str:
    return content if isinstance(content, str) else ("" if content is None else str(content))


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
    if isinstance(usage, dict) and usage:
        usage = {**usage, **cache_figures(usage)}
    message: Message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [neutral_call(c) for c in calls],
        "provider": "openai",
        "raw": raw,
    }
    model = answer.get("model")
    return ProviderReply(
        text=text,
        tool_calls=calls,
        message=message,
        usage=usage if isinstance(usage, dict) else {},
        model=model if isinstance(model, str) else None,
    )


def cache_figures(usage: dict[str, Any]) -> dict[str, int]:
    """The prompt tokens read from the server's cache, and written to it, in sdd's names.

    OpenAI (and vLLM, OpenRouter) report `prompt_tokens_details.cached_tokens`, already part of
    `prompt_tokens`; OpenRouter adds `cache_write_tokens` beside it; DeepSeek says
    `prompt_cache_hit_tokens`. OpenAI caches on its own and charges nothing to write."""
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    read = _count(details.get("cached_tokens")) or _count(usage.get("prompt_cache_hit_tokens"))
    return {
        "cached_input_tokens": read,
        "cache_write_input_tokens": _count(details.get("cache_write_tokens")),
    }


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _tool_call(call: Any, n: int) -> ToolCall:
    function = call.get("function") if isinstance(call, dict) else None
    function = function if isinstance(function, dict) else {}
    call_id = call.get("id") if isinstance(call, dict) else None
    args, error = parse_arguments(function.get("arguments"))
    return ToolCall(
        id=str(call_id) if call_id else f"call_{n}",
        name=str(function.get("name") or ""),
        args=args,
        error=error,
    )


def parse_arguments(arguments: Any) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as (args, error). Raw newlines and tabs inside strings, which
    small local models often write, are read anyway (strict=False); what still is not a JSON
    object becomes ({}, a sentence the runner passes to the model)."""
    if isinstance(arguments, dict):  # some servers send an object, not a JSON string
        try:
            return whole_characters(arguments), None
        except RecursionError:
            return {}, "your arguments were nested too deep; send one flat JSON object"
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}, None
    try:
        decoded = whole_characters(json.loads(str(arguments), strict=False))
    except (ValueError, RecursionError) as exc:
        return (
            {},
            f"your arguments were not valid JSON ({_json_problem(exc)}); send one JSON object",
        )
    if not isinstance(decoded, dict):
        kind = _KINDS.get(type(decoded).__name__, "a value")
        return {}, f"your arguments were not a JSON object but {kind}; send one JSON object"
    return decoded, None


_KINDS = {
    "list": "a list",
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "bool": "true or false",
    "NoneType": "null",
}


def _json_problem(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at character {exc.pos}"
    if isinstance(exc, RecursionError):
        return "nested too deep"
    return str(exc)
