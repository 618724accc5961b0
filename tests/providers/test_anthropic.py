"""The Anthropic Messages provider against a real HTTP server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.providers.anthropic import AnthropicProvider
from sdd_git.providers.base import Message, ProviderError, ProviderRequest, ToolSchema
from tests.providers.loopback import PROXY_VARIABLES, RESET, Loopback, closed_port_url, serve

KEY = "sk-test-SECRET-1234567890"
EPHEMERAL = {"type": "ephemeral"}
READ_FILE = ToolSchema(
    name="read_file",
    description="Read a file of the product.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)
SYSTEM: Message = {"role": "system", "content": "You are the builder."}
USER: Message = {"role": "user", "content": "Read the README."}
USAGE = {"input_tokens": 20, "output_tokens": 5}
THINKING = {
    "type": "thinking",
    "thinking": "The README should name the product.",
    "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
}
TOOL_USE = {
    "type": "tool_use",
    "id": "toolu_01A",
    "name": "read_file",
    "input": {"path": "README.md"},
}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


@pytest.fixture
def sleeps() -> list[float]:
    return []


def provider(url: str, sleeps: list[float], **kw: Any) -> AnthropicProvider:
    return AnthropicProvider(
        model="claude-test",
        base_url=url,
        api_key=KEY,
        key_env="ANTHROPIC_API_KEY",
        max_tokens=1024,
        sleep=sleeps.append,
        **kw,
    )


def request(messages: list[Message] | None = None, tools: bool = True) -> ProviderRequest:
    return ProviderRequest(
        role="builder",
        run_id="run-20250101-0001",
        call_index=1,
        messages=messages or [SYSTEM, USER],
        tools=[READ_FILE] if tools else [],
    )


def answer(*blocks: dict[str, Any], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": list(blocks),
        "stop_reason": stop,
        "usage": USAGE,
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def failure(server: Loopback, sleeps: list[float], **kw: Any) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        provider(server.url, sleeps, **kw).complete(request())
    error = caught.value
    assert KEY not in str(error) and KEY not in (error.hint or "")
    return error


def test_plain_text_reply(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, answer(text("Hello"), text(" there.")))
    reply = provider(server.url, sleeps, cache=False).complete(request())
    assert reply.text == "Hello there."
    assert reply.tool_calls == ()
    assert reply.usage == {**USAGE, "cached_input_tokens": 0, "cache_write_input_tokens": 0}
    assert reply.message == {
        "role": "assistant",
        "content": "Hello there.",
        "tool_calls": [],
        "provider": "anthropic",
        "raw": [text("Hello"), text(" there.")],
    }
    sent = server.last
    assert sent.path == "/v1/messages"
    assert sent.body == {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": "You are the builder.",
        "messages": [{"role": "user", "content": [text("Read the README.")]}],
        "tools": [
            {
                "name": "read_file",
                "description": "Read a file of the product.",
                "input_schema": READ_FILE.parameters,
            }
        ],
        "tool_choice": {"type": "auto"},
    }


def test_headers_carry_role_run_key_and_version(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, answer(text("ok")))
    provider(server.url, sleeps).complete(request(tools=False))
    headers = server.last.headers
    assert headers["x-sdd-role"] == "builder"
    assert headers["x-sdd-run"] == "run-20250101-0001"
    assert headers["x-api-key"] == KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers
    assert "tools" not in server.last.body


def test_tool_use_reply_is_parsed(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, answer(THINKING, text("I'll look first."), TOOL_USE, stop="tool_use"))
    reply = provider(server.url, sleeps).complete(request())
    assert reply.text == "I'll look first."
    assert [(c.id, c.name, c.args) for c in reply.tool_calls] == [
        ("toolu_01A", "read_file", {"path": "README.md"})
    ]
    assert reply.message["tool_calls"] == [
        {"id": "toolu_01A", "name": "read_file", "args": {"path": "README.md"}}
    ]
    assert reply.message["raw"] == [THINKING, text("I'll look first."), TOOL_USE]


def test_non_object_input_does_not_crash(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, answer({**TOOL_USE, "input": '{"path": "READ'}, stop="tool_use"))
    reply = provider(server.url, sleeps).complete(request())
    call = reply.tool_calls[0]
    assert call.args == {} and call.error is not None and "not a JSON object" in call.error


def test_tool_results_and_user_text_merge_into_one_user_message(
    server: Loopback, sleeps: list[float]
) -> None:
    messages: list[Message] = [
        SYSTEM,
        {"role": "system", "content": "Stay in the product."},
        USER,
        {
            "role": "assistant",
            "content": "Two reads.",
            "tool_calls": [
                {"id": "t1", "name": "read_file", "args": {"path": "README.md"}},
                {"id": "t2", "name": "read_file", "args": {"path": "NOTES.md"}},
            ],
            "provider": "openai",  # another provider's raw is never sent here
            "raw": {"role": "assistant", "content": "Two reads.", "tool_calls": []},
        },
        {"role": "tool", "tool_call_id": "t1", "name": "read_file", "content": "# Expenses"},
        {"role": "tool", "tool_call_id": "t2", "name": "read_file", "content": "notes"},
        {"role": "user", "content": "Now summarise."},
    ]
    server.reply(200, answer(text("Done.")))
    provider(server.url, sleeps, cache=False).complete(request(messages))
    body = server.last.body
    assert body["system"] == "You are the builder.\n\nStay in the product."
    assert body["messages"] == [
        {"role": "user", "content": [text("Read the README.")]},
        {
            "role": "assistant",
            "content": [
                text("Two reads."),
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "read_file",
                    "input": {"path": "README.md"},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "read_file",
                    "input": {"path": "NOTES.md"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "# Expenses"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "notes"},
                text("Now summarise."),
            ],
        },
    ]


def test_own_turn_replays_thinking_with_signature_verbatim(
    server: Loopback, sleeps: list[float]
) -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
    server.reply(200, answer(THINKING, redacted, TOOL_USE, stop="tool_use"))
    server.reply(200, answer(text("Done.")))
    chat = provider(server.url, sleeps)
    first = chat.complete(request())
    assert first.text is None
    tool: Message = {
        "role": "tool",
        "tool_call_id": "toolu_01A",
        "name": "read_file",
        "content": "# Expenses",
    }
    chat.complete(request([SYSTEM, USER, first.message, tool]))
    # The assistant turn goes back verbatim; the cache breakpoints sit on the two user turns.
    assert server.last.body["messages"] == [
        {"role": "user", "content": [{**text("Read the README."), "cache_control": EPHEMERAL}]},
        {"role": "assistant", "content": [THINKING, redacted, TOOL_USE]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A",
                    "content": "# Expenses",
                    "cache_control": EPHEMERAL,
                }
            ],
        },
    ]
    assert first.message["raw"] == [THINKING, redacted, TOOL_USE]  # not marked in place


def test_429_waits_retry_after_then_succeeds(server: Loopback, sleeps: list[float]) -> None:
    overloaded = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    server.reply(429, overloaded, {"Retry-After": "1"})
    server.reply(200, answer(text("ok")))
    assert provider(server.url, sleeps).complete(request()).text == "ok"
    assert sleeps == [1.0]
    assert len(server.requests) == 2


def test_500_three_times_gives_up(server: Loopback, sleeps: list[float]) -> None:
    for _ in range(3):
        server.reply(500, {"type": "error", "error": {"type": "api_error", "message": "boom"}})
    error = failure(server, sleeps)
    assert "still failing after 3 attempts (HTTP 500): boom" in str(error)
    assert str(error).startswith(f"anthropic at {server.url}/v1/messages: ")
    assert sleeps == [0.5, 1.0]
    assert len(server.requests) == 3


def test_connection_reset_is_retried(server: Loopback, sleeps: list[float]) -> None:
    server.reply(RESET)
    server.reply(200, answer(text("ok")))
    assert provider(server.url, sleeps).complete(request()).text == "ok"


def test_401_says_the_key_was_refused(server: Loopback, sleeps: list[float]) -> None:
    body = {"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}}
    server.reply(401, body)
    error = failure(server, sleeps)
    assert (
        str(error) == f"anthropic at {server.url}/v1/messages: the API key was refused (HTTP 401)"
    )
    assert "ANTHROPIC_API_KEY" in (error.hint or "")


def test_403_says_why_with_the_key_redacted(server: Loopback, sleeps: list[float]) -> None:
    message = f"key {KEY} may not use this model"
    server.reply(403, {"type": "error", "error": {"type": "permission_error", "message": message}})
    error = failure(server, sleeps)
    assert str(error).endswith("(HTTP 403): key [secret] may not use this model")


def test_404_names_the_unknown_model(server: Loopback, sleeps: list[float]) -> None:
    body = {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-test"}}
    server.reply(404, body)
    error = failure(server, sleeps)
    assert str(error).endswith("unknown model or endpoint (HTTP 404): model: claude-test")


def test_400_gives_the_server_message(server: Loopback, sleeps: list[float]) -> None:
    message = "messages.1.content.0.thinking.signature: Field required"
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    server.reply(400, body)
    error = failure(server, sleeps)
    assert str(error).endswith(f"the server rejected the request (HTTP 400): {message}")
    assert len(server.requests) == 1


def test_closed_port_cannot_reach(sleeps: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    url = closed_port_url()
    with pytest.raises(ProviderError) as caught:
        provider(url, sleeps).complete(request())
    assert str(caught.value) == f"cannot reach anthropic at {url}/v1/messages: connection refused"
    assert caught.value.hint == "is the server running? check base_url"
