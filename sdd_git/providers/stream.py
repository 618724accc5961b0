"""A streamed answer (server-sent events), read as it arrives and put back together as the
answer a plain request would have had: the text is handed on as it comes, and the reply is then
parsed by the provider's own `parse_reply`, so a streamed run and a plain one agree.

OpenAI-compatible servers send `data: {chunk}` lines ending with `data: [DONE]`; each chunk's
`choices[0].delta` holds a piece of the text or of a tool call, and, with
`stream_options.include_usage`, a last chunk holds the usage. Anthropic sends named events
(`message_start`, `content_block_start`, `content_block_delta`, `content_block_stop`,
`message_delta`, `message_stop`, `error`) whose pieces rebuild the message's content blocks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sdd_git.providers.base import ProviderError

OnText = Callable[[str], None]


class EventFeed:
    """Bytes in, each complete event's (name, data) out to `on_event`. A line may arrive in
    pieces; an event ends at a blank line."""

    def __init__(self, on_event: Callable[[str, str], None]) -> None:
        self.on_event = on_event
        self._pending = b""
        self._name = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        while b"\n" in self._pending:
            raw, self._pending = self._pending.split(b"\n", 1)
            line = raw.rstrip(b"\r").decode("utf-8", errors="replace")
            if not line:
                self._dispatch()
            elif line.startswith(":"):
                continue  # a comment, sent to keep the connection open
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    self._name = value
                elif field == "data":
                    self._data.append(value)

    def close(self) -> None:
        if self._pending.strip():
            self.feed(b"\n")
        self._dispatch()

    def _dispatch(self) -> None:
        if self._data:
            self.on_event(self._name, "\n".join(self._data))
        self._name, self._data = "", []


def _json(data: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except ValueError:
        raise ProviderError(f"{where}: a streamed event is not JSON: {data[:80]!r}") from None
    if not isinstance(value, dict):
        raise ProviderError(f"{where}: a streamed event is not a JSON object")
    return value


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class OpenAiStream:
    """Chat Completions chunks, gathered into `{"choices": [{"message": ...}], "usage": ...}`."""

    def __init__(self, on_text: OnText, where: str) -> None:
        self.on_text = on_text
        self.where = where
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.model: str | None = None
        self.done = False
        self.feed = EventFeed(self._event)

    def _event(self, name: str, data: str) -> None:
        if data.strip() == "[DONE]":
            self.done = True
            return
        chunk = _json(data, self.where)
        if isinstance(chunk.get("error"), dict):
            message = chunk["error"].get("message") or "an error"
            raise ProviderError(f"{self.where}: the server stopped with {message}")
        self.model = chunk.get("model") if isinstance(chunk.get("model"), str) else self.model
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = _dict(choice.get("delta"))
            piece = delta.get("content")
            if isinstance(piece, str) and piece:
                self.text.append(piece)
                self.on_text(piece)
            for call in delta.get("tool_calls") or ():
                if isinstance(call, dict):
                    self._call_piece(call)
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])

    def _call_piece(self, piece: dict[str, Any]) -> None:
        index = piece.get("index", len(self.calls))
        call = self.calls.setdefault(
            int(index) if isinstance(index, int) else len(self.calls),
            {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if isinstance(piece.get("id"), str):
            call["id"] = piece["id"]
        function = _dict(piece.get("function"))
        if isinstance(function.get("name"), str):
            call["function"]["name"] += function["name"]
        if isinstance(function.get("arguments"), str):
            call["function"]["arguments"] += function["arguments"]

    def answer(self) -> dict[str, Any]:
        self.feed.close()
        if not self.done and self.finish is None:
            raise ProviderError(f"{self.where}: the streamed answer ended before it was whole")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        answer: dict[str, Any] = {
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": self.usage,
        }
        if self.model is not None:
            answer["model"] = self.model
        return answer


class AnthropicStream:
    """Messages API events, gathered into the message a plain request returns."""

    def __init__(self, on_text: OnText, where: str) -> None:
        self.on_text = on_text
        self.where = where
        self.message: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.stopped = False
        self.feed = EventFeed(self._event)

    def _event(self, name: str, data: str) -> None:
        event = _json(data, self.where)
        kind = event.get("type") or name
        if kind == "error":
            error = _dict(event.get("error"))
            raise ProviderError(
                f"{self.where}: the server stopped with {error.get('type') or 'an error'}: "
                f"{error.get('message') or ''}".rstrip(": ")
            )
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self.message = dict(event["message"])
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            self.blocks[int(event.get("index", len(self.blocks)))] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            self._delta(int(event.get("index", 0)), event["delta"])
        elif kind == "content_block_stop":
            self._finish_block(int(event.get("index", 0)))
        elif kind == "message_delta":
            delta = _dict(event.get("delta"))
            self.message.update({k: v for k, v in delta.items() if v is not None})
            if isinstance(event.get("usage"), dict):
                usage = self.message.get("usage")
                self.message["usage"] = {**(usage if isinstance(usage, dict) else {}),
                                         **event["usage"]}  # fmt: skip
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            block["text"] = block.get("text", "") + delta["text"]
            self.on_text(delta["text"])
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self.json_parts.setdefault(index, []).append(delta["partial_json"])
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            block["signature"] = block.get("signature", "") + delta["signature"]

    def _finish_block(self, index: int) -> None:
        block = self.blocks.get(index)
        if block is None or block.get("type") != "tool_use":
            return
        text = "".join(self.json_parts.pop(index, []))
        try:
            block["input"] = json.loads(text) if text.strip() else {}
        except ValueError:
            raise ProviderError(
                f"{self.where}: a streamed tool call's input is not JSON: {text[:80]!r}"
            ) from None

    def answer(self) -> dict[str, Any]:
        self.feed.close()
        if not self.stopped:
            raise ProviderError(f"{self.where}: the streamed answer ended before it was whole")
        return {**self.message, "content": [self.blocks[i] for i in sorted(self.blocks)]}
