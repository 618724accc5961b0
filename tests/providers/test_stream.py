"""Streamed replies on the wire: a real server on loopback sends OpenAI's and Anthropic's
server-sent events, pieces split where a real server splits them (mid-word, mid-JSON); the
provider hands on the text as it comes and returns the same reply a plain request gives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.providers.anthropic import AnthropicProvider
from sdd_git.providers.base import ProviderError, ProviderRequest
from sdd_git.providers.openai import OpenAIProvider
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def _request(pieces: list[str]) -> ProviderRequest:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "Hi"}]
    return ProviderRequest("builder", "run-1", 1, messages, [], on_text=pieces.append)


def _sse(events: list[tuple[str, dict[str, Any] | str]], split: int = 7) -> list[bytes]:
    """The events as a server writes them, cut into pieces of `split` bytes."""
    text = "".join(
        (f"event: {name}\n" if name else "")
        + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        for name, data in events
    ).encode()
    return [text[i : i + split] for i in range(0, len(text), split)]


def _openai(server: Loopback) -> OpenAIProvider:
    return OpenAIProvider("m", f"{server.url}/v1", "sk-test-0123456789", "TEST_KEY")


OPENAI_EVENTS: list[tuple[str, dict[str, Any] | str]] = [
    ("", {"model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
    ("", {"choices": [{"index": 0, "delta": {"content": "I'll read "}}]}),
    ("", {"choices": [{"index": 0, "delta": {"content": "it first."}}]}),
    ("", {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "call_1", "type": "function",
         "function": {"name": "read_file", "arguments": '{"pa'}}]}}]}),
    ("", {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": 'th": "README.md"}'}}]}}]}),
    ("", {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ("", {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5,
                                   "prompt_tokens_details": {"cached_tokens": 8}}}),
    ("", "[DONE]"),
]  # fmt: skip


def test_openai_text_streams_and_the_reply_is_whole(server: Loopback) -> None:
    server.reply(body=_sse(OPENAI_EVENTS))
    pieces: list[str] = []
    reply = _openai(server).complete(_request(pieces))
    assert pieces == ["I'll read ", "it first."]
    assert reply.text == "I'll read it first."
    assert [(c.name, c.args) for c in reply.tool_calls] == [("read_file", {"path": "README.md"})]
    assert reply.usage["cached_input_tokens"] == 8 and reply.usage["completion_tokens"] == 5
    sent = server.last.body
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert server.last.headers["accept"] == "text/event-stream"


def test_a_server_that_does_not_stream_still_gives_its_answer(server: Loopback) -> None:
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Whole."}}]})
    pieces: list[str] = []
    assert _openai(server).complete(_request(pieces)).text == "Whole."
    assert pieces == []


def test_a_stream_cut_off_before_its_end_is_an_error_not_half_a_reply(server: Loopback) -> None:
    server.reply(body=_sse(OPENAI_EVENTS[:3]))  # no finish, no [DONE]: the connection ended
    with pytest.raises(ProviderError, match="ended before it was whole"):
        _openai(server).complete(_request([]))
    assert len(server.requests) == 1  # never asked again: a second answer is another answer


def test_an_error_event_in_the_stream_is_the_servers_error(server: Loopback) -> None:
    events = [OPENAI_EVENTS[1], ("", {"error": {"message": "overloaded"}})]
    server.reply(body=_sse(events))
    with pytest.raises(ProviderError, match="overloaded"):
        _openai(server).complete(_request([]))


ANTHROPIC_EVENTS: list[tuple[str, dict[str, Any] | str]] = [
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [], "stop_reason": None,
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("ping", {"type": "ping"}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "Reading "}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "the file."}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1,
                             "delta": {"type": "input_json_delta", "partial_json": '{"path": '}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1,
                             "delta": {"type": "input_json_delta", "partial_json": '"a.md"}'}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                       "usage": {"output_tokens": 30}}),
    ("message_stop", {"type": "message_stop"}),
]  # fmt: skip


def _anthropic(server: Loopback) -> AnthropicProvider:
    return AnthropicProvider("claude-test", server.url, "sk-ant-test-01234", "TEST_KEY")


def test_anthropic_text_streams_and_the_reply_is_whole(server: Loopback) -> None:
    server.reply(body=_sse(ANTHROPIC_EVENTS, split=11))
    pieces: list[str] = []
    reply = _anthropic(server).complete(_request(pieces))
    assert pieces == ["Reading ", "the file."]
    assert reply.text == "Reading the file."
    assert [(c.name, c.args) for c in reply.tool_calls] == [("read_file", {"path": "a.md"})]
    assert reply.usage["cached_input_tokens"] == 90 and reply.usage["output_tokens"] == 30
    assert server.last.body["stream"] is True


def test_anthropic_error_event_and_a_cut_stream_are_errors(server: Loopback) -> None:
    server.reply(body=_sse([ANTHROPIC_EVENTS[0], ("error", {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}})]))  # fmt: skip
    with pytest.raises(ProviderError, match="overloaded_error: Overloaded"):
        _anthropic(server).complete(_request([]))
    server.reply(body=_sse(ANTHROPIC_EVENTS[:5]))
    with pytest.raises(ProviderError, match="ended before it was whole"):
        _anthropic(server).complete(_request([]))


def test_without_a_listener_nothing_is_streamed(server: Loopback) -> None:
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Whole."}}]})
    messages = [{"role": "user", "content": "Hi"}]
    _openai(server).complete(ProviderRequest("builder", "run-1", 1, messages, []))
    assert "stream" not in server.last.body
