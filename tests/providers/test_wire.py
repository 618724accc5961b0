"""What real local servers (llama-cpp-python, Ollama) and hosted ones need on the wire, against
a real HTTP/1.1 server on loopback: keep-alive, gzip, User-Agent, tool_choice, num_ctx, a
validation error that is not retried, and tool-call arguments as small models write them."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git import __version__
from sdd_git.providers.anthropic import AnthropicProvider
from sdd_git.providers.base import ProviderError, ProviderRequest, ToolSchema
from sdd_git.providers.openai import OpenAIProvider, reply_cap_field
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve

KEY = "sk-test-SECRET-1234567890"
GATEWAY = "gw-Zq8RmYx4TuV7wKp2Nd5H"
TOOL = ToolSchema("read_file", "Read a file.", {"type": "object", "properties": {}})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def request(tool_choice: str | None = None, tools: bool = True) -> ProviderRequest:
    return ProviderRequest(
        "builder",
        "run-1",
        1,
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        [TOOL] if tools else [],
        tool_choice=tool_choice,
    )


def openai(url: str, sleeps: list[float] | None = None, **kw: Any) -> OpenAIProvider:
    sleep = sleeps.append if sleeps is not None else (lambda seconds: None)
    return OpenAIProvider("m", f"{url}/v1", KEY, "OPENAI_API_KEY", sleep=sleep, **kw)


def ok(text: str = "ok") -> dict[str, Any]:
    return {
        "model": "served-model",
        "choices": [{"message": {"role": "assistant", "content": text}}],
    }


def with_arguments(arguments: str) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "write", "arguments": arguments}}
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}


def test_one_connection_serves_every_call_of_a_provider(server: Loopback) -> None:
    chat = openai(server.url)
    for _ in range(3):
        server.reply(body=ok())
        chat.complete(request())
    assert len({r.client_port for r in server.requests}) == 1
    chat.close()


def test_a_connection_the_server_closed_is_opened_again(server: Loopback) -> None:
    chat = openai(server.url)
    server.reply(body=ok(), headers={"Connection": "close"})
    server.reply(body=ok("again"))
    chat.complete(request())
    assert chat.complete(request()).text == "again"
    assert len(server.requests) == 2


def test_gzip_is_asked_for_and_read_and_the_user_agent_is_sdd(server: Loopback) -> None:
    server.reply(body=ok("compressed"), gzip=True)
    reply = openai(server.url).complete(request())
    assert reply.text == "compressed" and reply.model == "served-model"
    assert "gzip" in server.last.headers["accept-encoding"]
    assert server.last.headers["user-agent"] == f"sdd/{__version__}"


def test_tool_choice_is_sent_with_tools_and_a_named_tool_is_forced(server: Loopback) -> None:
    chat = openai(server.url)
    server.reply(body=ok())
    chat.complete(request())
    assert server.last.body["tool_choice"] == "auto"
    server.reply(body=ok())
    chat.complete(request("record_verdict"))
    assert server.last.body["tool_choice"] == {
        "type": "function",
        "function": {"name": "record_verdict"},
    }
    server.reply(body=ok())
    chat.complete(request(tools=False))
    assert "tool_choice" not in server.last.body and "tools" not in server.last.body
    server.reply(body=ok())
    openai(server.url, tool_choice="required").complete(request())
    assert server.last.body["tool_choice"] == "required"


def test_anthropic_tool_choice_words(server: Loopback) -> None:
    answer = {"content": [{"type": "text", "text": "ok"}], "model": "claude-x"}
    chat = AnthropicProvider("c", server.url, KEY, "ANTHROPIC_API_KEY", tool_choice="required")
    for choice, wire in [
        (None, {"type": "any"}),
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("record_verdict", {"type": "tool", "name": "record_verdict"}),
    ]:
        server.reply(body=answer)
        assert chat.complete(request(choice)).model == "claude-x"
        assert server.last.body["tool_choice"] == wire


def test_settings_reach_the_body_and_num_ctx_only_ollama(server: Loopback) -> None:
    server.reply(body=ok())
    openai(server.url, temperature=0.1, max_tokens=99, num_ctx=16384).complete(request())
    body = server.last.body
    assert body["temperature"] == 0.1 and body["max_tokens"] == 99
    assert "options" not in body  # not Ollama: another server may refuse the field
    server.reply(body=ok())
    openai(server.url, num_ctx=16384, ollama=True).complete(request())
    assert server.last.body["options"] == {"num_ctx": 16384}


def test_the_runners_reply_cap_is_sent_unless_max_tokens_is_configured(server: Loopback) -> None:
    capped = dataclasses.replace(request(), max_reply_tokens=1024)
    server.reply(body=ok())
    openai(server.url).complete(capped)
    assert server.last.body["max_tokens"] == 1024
    server.reply(body=ok())
    openai(server.url, max_tokens=99).complete(capped)
    assert server.last.body["max_tokens"] == 99  # the person's setting wins
    server.reply(body=ok())
    openai(server.url).complete(request())
    assert "max_tokens" not in server.last.body  # no cap asked for, none sent
    assert reply_cap_field("https://api.openai.com/v1") == "max_completion_tokens"
    assert reply_cap_field(f"{server.url}/v1") == "max_tokens"


def test_extra_headers_are_sent_and_masked_in_errors(server: Loopback) -> None:
    server.reply(401, {"error": {"message": f"bad gateway token {GATEWAY}"}})
    with pytest.raises(ProviderError) as caught:
        openai(server.url, headers={"X-Gateway-Token": GATEWAY}).complete(request())
    assert server.last.headers["x-gateway-token"] == GATEWAY
    assert server.last.headers["x-sdd-role"] == "builder"
    assert GATEWAY not in str(caught.value) + str(caught.value.hint)


@pytest.mark.parametrize("status", [400, 422])
def test_a_validation_error_is_not_retried_and_says_rejected(server: Loopback, status: int) -> None:
    sleeps: list[float] = []
    server.reply(status, {"detail": [{"msg": "field required", "loc": ["body", "x"]}]})
    with pytest.raises(ProviderError) as caught:
        openai(server.url, sleeps).complete(request())
    assert f"the server rejected the request (HTTP {status}): " in caught.value.message
    assert "field required" in caught.value.message
    assert "overloaded" not in (caught.value.hint or "")
    assert len(server.requests) == 1 and sleeps == []


def test_a_context_overflow_gets_a_context_hint(server: Loopback) -> None:
    message = "Requested tokens (9000) exceed context window of 8192"
    server.reply(400, {"error": {"message": message}})
    with pytest.raises(ProviderError) as caught:
        openai(server.url).complete(request())
    assert "provider.context" in (caught.value.hint or "")


def test_a_500_keeps_its_retries(server: Loopback) -> None:
    sleeps: list[float] = []
    server.reply(500, {"error": "boom"})
    server.reply(body=ok("after"))
    assert openai(server.url, sleeps).complete(request()).text == "after"
    assert sleeps == [0.5]
    server.reply(500, {"error": "boom"})
    with pytest.raises(ProviderError, match="still failing after 1 attempts"):
        openai(server.url, sleeps, retries=0).complete(request())


def test_raw_newlines_inside_argument_strings_are_recovered(server: Loopback) -> None:
    server.reply(body=with_arguments('{"path": "a.py", "text": "line one\nline two\tend"}'))
    call = openai(server.url).complete(request()).tool_calls[0]
    assert call.error is None
    assert call.args == {"path": "a.py", "text": "line one\nline two\tend"}


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ('{"path": "a.py", ', "your arguments were not valid JSON"),
        ("path=a.py", "your arguments were not valid JSON"),
        ('["a.py"]', "not a JSON object but a list"),
    ],
)
def test_arguments_that_still_do_not_parse_say_so(
    server: Loopback, arguments: str, words: str
) -> None:
    server.reply(body=with_arguments(arguments))
    reply = openai(server.url).complete(request())
    call = reply.tool_calls[0]
    assert call.name == "write" and call.args == {} and call.error is not None
    assert words in call.error
    # Sent back, the turn stays standard: "{}" arguments, no error field, content "".
    echo = [
        {"role": "user", "content": "Hi"},
        reply.message,
        {"role": "tool", "tool_call_id": "c1", "name": "write", "content": call.error},
    ]
    server.reply(body=ok())
    chat = openai(server.url)
    chat.complete(ProviderRequest("builder", "run-1", 2, echo, [TOOL]))
    sent = server.last.body["messages"][1]
    assert sent["content"] == ""
    assert json.loads(sent["tool_calls"][0]["function"]["arguments"]) == {}
    assert set(sent) == {"role", "content", "tool_calls"}


def test_models_are_listed(server: Loopback) -> None:
    server.reply(body={"object": "list", "data": [{"id": "qwen2.5"}, {"id": "llama3.2"}]})
    assert openai(server.url).models() == ["llama3.2", "qwen2.5"]
    assert server.last.method == "GET" and server.last.path == "/v1/models"
    assert server.last.headers["authorization"] == f"Bearer {KEY}"
    pages = [
        {"data": [{"id": "claude-a"}], "has_more": True, "last_id": "claude-a"},
        {"data": [{"id": "claude-b"}], "has_more": False, "last_id": "claude-b"},
    ]
    for page in pages:
        server.reply(body=page)
    chat = AnthropicProvider("c", server.url, KEY, "ANTHROPIC_API_KEY")
    assert chat.models() == ["claude-a", "claude-b"]
    assert server.last.path == "/v1/models?limit=1000&after_id=claude-a"
    assert server.last.headers["x-api-key"] == KEY
