"""The OpenAI-compatible provider against a real HTTP server on loopback."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.providers.base import Message, ProviderError, ProviderRequest, ToolSchema
from sdd_git.providers.openai import OpenAIProvider
from tests.providers.loopback import PROXY_VARIABLES, RESET, Loopback, closed_port_url, serve

KEY = "sk-test-SECRET-1234567890"
READ_FILE = ToolSchema(
    name="read_file",
    description="Read a file of the product.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)
SYSTEM: Message = {"role": "system", "content": "You are the builder."}
USER: Message = {"role": "user", "content": "Read the README."}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


@pytest.fixture
def sleeps() -> list[float]:
    return []


def provider(url: str, sleeps: list[float], *, key: str | None = KEY, **kw: Any) -> OpenAIProvider:
    return OpenAIProvider(
        model="gpt-test",
        base_url=f"{url}/v1/",
        api_key=key,
        key_env="OPENAI_API_KEY",
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


def completion(message: dict[str, Any], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage or {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }


def tool_call_message(arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "read_file", "arguments": arguments},
            }
        ],
    }


def failure(server: Loopback, sleeps: list[float], **kw: Any) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        provider(server.url, sleeps, **kw).complete(request())
    error = caught.value
    assert KEY not in str(error) and KEY not in (error.hint or "")
    return error


def test_plain_text_reply(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, completion({"role": "assistant", "content": "Hello."}))
    reply = provider(server.url, sleeps).complete(request())
    assert reply.text == "Hello."
    assert reply.tool_calls == ()
    assert reply.usage == {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "total_tokens": 15,
        "cached_input_tokens": 0,  # added beside the server's own keys
        "cache_write_input_tokens": 0,
    }
    assert reply.message == {
        "role": "assistant",
        "content": "Hello.",
        "tool_calls": [],
        "provider": "openai",
        "raw": {"role": "assistant", "content": "Hello."},
    }
    sent = server.last
    assert sent.path == "/v1/chat/completions"
    assert sent.body == {
        "model": "gpt-test",
        "messages": [SYSTEM, USER],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file of the product.",
                    "parameters": READ_FILE.parameters,
                },
            }
        ],
        "tool_choice": "auto",  # sent whenever tools are: llama-cpp-python drops them otherwise
    }


def test_headers_carry_role_run_and_bearer_key(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, completion({"role": "assistant", "content": "ok"}))
    provider(server.url, sleeps).complete(request())
    headers = server.last.headers
    assert headers["x-sdd-role"] == "builder"
    assert headers["x-sdd-run"] == "run-20250101-0001"
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["content-type"] == "application/json"


def test_no_key_sends_no_authorization_and_no_tools_key(
    server: Loopback, sleeps: list[float]
) -> None:
    server.reply(200, completion({"role": "assistant", "content": "ok"}))
    provider(server.url, sleeps, key=None).complete(request(tools=False))
    assert "authorization" not in server.last.headers
    assert server.last.headers["x-sdd-role"] == "builder"
    assert "tools" not in server.last.body


def test_tool_call_reply_is_parsed(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, completion(tool_call_message('{"path": "README.md"}')))
    reply = provider(server.url, sleeps).complete(request())
    assert reply.text is None
    assert [(c.id, c.name, c.args) for c in reply.tool_calls] == [
        ("call_abc", "read_file", {"path": "README.md"})
    ]
    assert reply.message["tool_calls"] == [
        {"id": "call_abc", "name": "read_file", "args": {"path": "README.md"}}
    ]
    assert reply.message["raw"] == tool_call_message('{"path": "README.md"}')


def test_malformed_arguments_become_a_call_that_says_so(
    server: Loopback, sleeps: list[float]
) -> None:
    server.reply(200, completion(tool_call_message('{"path": "READ')))
    reply = provider(server.url, sleeps).complete(request())
    call = reply.tool_calls[0]
    assert call.name == "read_file" and call.args == {}
    assert call.error is not None and call.error.startswith("your arguments were not valid JSON")
    assert reply.message["tool_calls"][0]["error"] == call.error


def test_conversation_from_another_provider_is_rebuilt(
    server: Loopback, sleeps: list[float]
) -> None:
    messages: list[Message] = [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": "I'll look first.",
            "tool_calls": [{"id": "t1", "name": "read_file", "args": {"path": "README.md"}}],
            "provider": "script",
            "raw": {"say": "I'll look first."},
        },
        {"role": "tool", "tool_call_id": "t1", "name": "read_file", "content": "# Expenses"},
    ]
    server.reply(200, completion({"role": "assistant", "content": "Done."}))
    provider(server.url, sleeps).complete(request(messages))
    assert server.last.body["messages"] == [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": "I'll look first.",
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "# Expenses"},
    ]


def test_own_assistant_message_goes_back_with_standard_fields_only(
    server: Loopback, sleeps: list[float]
) -> None:
    """llama-cpp-python answers HTTP 500 to `content: null` or a replayed `function_call`."""
    wire = tool_call_message('{"path": "README.md"}')
    wire["reasoning_content"] = "The README names the product."
    wire["function_call"] = {"name": "read_file", "arguments": '{"path": "README.md"}'}
    wire["vendor_extra"] = {"kept": True}
    server.reply(200, completion(wire))
    server.reply(200, completion({"role": "assistant", "content": "Done."}))
    chat = provider(server.url, sleeps)
    first = chat.complete(request())
    assert first.message["raw"] == wire  # the log keeps what came
    messages = [
        SYSTEM,
        USER,
        first.message,
        {"role": "tool", "tool_call_id": "call_abc", "name": "read_file", "content": "# Expenses"},
    ]
    chat.complete(request(messages))
    assert server.last.body["messages"][2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "README.md"}'},
            }
        ],
    }
    assert server.last.body["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_abc",
        "content": "# Expenses",
    }


def test_429_waits_retry_after_then_succeeds(server: Loopback, sleeps: list[float]) -> None:
    server.reply(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "1"})
    server.reply(200, completion({"role": "assistant", "content": "ok"}))
    reply = provider(server.url, sleeps).complete(request())
    assert reply.text == "ok"
    assert sleeps == [1.0]
    assert len(server.requests) == 2


def test_retry_after_is_capped(server: Loopback, sleeps: list[float]) -> None:
    server.reply(503, {}, {"Retry-After": "3600"})
    server.reply(200, completion({"role": "assistant", "content": "ok"}))
    provider(server.url, sleeps).complete(request())
    assert sleeps == [30.0]


def test_500_three_times_gives_up(server: Loopback, sleeps: list[float]) -> None:
    for _ in range(3):
        server.reply(500, {"error": {"message": "The server had an error"}})
    error = failure(server, sleeps)
    assert "still failing after 3 attempts (HTTP 500)" in str(error)
    assert f"openai at {server.url}/v1/chat/completions" in str(error)
    assert sleeps == [0.5, 1.0]  # exponential backoff, none after the last attempt
    assert len(server.requests) == 3


def test_connection_reset_is_retried(server: Loopback, sleeps: list[float]) -> None:
    server.reply(RESET)
    server.reply(200, completion({"role": "assistant", "content": "ok"}))
    assert provider(server.url, sleeps).complete(request()).text == "ok"
    assert sleeps == [0.5]


def test_401_says_the_key_was_refused(server: Loopback, sleeps: list[float]) -> None:
    server.reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    error = failure(server, sleeps)
    assert "the API key was refused (HTTP 401)" in str(error)
    assert "OPENAI_API_KEY" in (error.hint or "")
    assert len(server.requests) == 1


def test_404_names_the_unknown_model(server: Loopback, sleeps: list[float]) -> None:
    server.reply(404, {"error": {"message": "The model `gpt-test` does not exist"}})
    error = failure(server, sleeps)
    assert "unknown model or endpoint (HTTP 404): The model `gpt-test` does not exist" in str(error)


def test_400_gives_the_server_message_with_the_key_redacted(
    server: Loopback, sleeps: list[float]
) -> None:
    server.reply(400, {"error": {"message": f"Invalid 'messages': bad header Bearer {KEY}"}})
    error = failure(server, sleeps)
    assert (
        "the server rejected the request (HTTP 400): Invalid 'messages': bad header [secret]"
        in (str(error))
    )


@pytest.mark.parametrize("status", [400, 403, 404, 500])
def test_an_error_echoing_the_key_encoded_or_in_part_is_masked(
    server: Loopback, sleeps: list[float], status: int
) -> None:
    raw = KEY.encode()
    echoes = {
        "base64": base64.b64encode(raw).decode(),
        "base64 at offset 1": base64.b64encode(b"u" + raw).decode(),
        "hex": raw.hex(),
        "reversed": KEY[::-1],
        "partial": KEY[:15],
    }
    for name, echo in echoes.items():
        for _ in range(3 if status >= 500 else 1):
            server.reply(status, {"error": {"message": f"bad credential {echo} in request"}})
        error = failure(server, sleeps)
        assert echo not in str(error), name
        assert "[secret]" in str(error), name


def test_a_non_json_answer_echoing_the_key_is_masked(server: Loopback, sleeps: list[float]) -> None:
    # Wrapped at 76 columns, and the key at offset 1 of the stream.
    wrapped = base64.encodebytes(b"Authorization: Bearer " + KEY.encode() + b"\n" * 60)
    server.reply(200, b"<html>\n" + wrapped + b"</html>")
    error = failure(server, sleeps)
    assert "the answer is not JSON" in str(error) and "[secret]" in str(error)
    shown = str(error).replace("\\n", "")
    for run in re.findall(r"[A-Za-z0-9+/]{8,}", shown):
        for skip in range(4):
            part = run[skip:][: (len(run) - skip) // 4 * 4]
            assert b"SECRET" not in base64.b64decode(part), run


def test_ollama_style_error_string(server: Loopback, sleeps: list[float]) -> None:
    server.reply(404, {"error": 'model "llama9" not found, try pulling it first'})
    error = failure(server, sleeps)
    assert str(error).endswith('(HTTP 404): model "llama9" not found, try pulling it first')


def test_closed_port_cannot_reach(sleeps: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    url = closed_port_url()
    with pytest.raises(ProviderError) as caught:
        provider(url, sleeps).complete(request())
    assert str(caught.value) == (
        f"cannot reach openai at {url}/v1/chat/completions: connection refused"
    )
    assert caught.value.hint == "is the server running? check base_url"
    assert sleeps == []


def test_a_slow_server_times_out_without_blaming_the_server(
    server: Loopback, sleeps: list[float]
) -> None:
    server.reply(200, completion({"role": "assistant", "content": "late"}), delay=1.0)
    error = failure(server, sleeps, timeout=0.2)
    assert "timed out after 0.2 s" in str(error) and "cannot reach" not in str(error)
    assert "is the server running" not in (error.hint or "")
    assert "raise provider.timeout" in (error.hint or "")
    assert len(server.requests) == 1 and sleeps == []  # not retried: it would queue the work


def test_answer_that_is_not_a_completion(server: Loopback, sleeps: list[float]) -> None:
    server.reply(200, {"object": "list", "data": []})
    error = failure(server, sleeps)
    assert "the answer has no choices[0].message" in str(error)


def test_request_body_is_json_serialisable_round_trip(
    server: Loopback, sleeps: list[float]
) -> None:
    # Unicode goes through intact.
    server.reply(200, completion({"role": "assistant", "content": "Grüße ✓"}))
    user: Message = {"role": "user", "content": "Dépenses ✓"}
    assert provider(server.url, sleeps).complete(request([SYSTEM, user])).text == "Grüße ✓"
    assert json.dumps(server.last.body["messages"][1], ensure_ascii=False) == json.dumps(
        user, ensure_ascii=False
    )


def test_redirect_is_reported_not_followed(server: Loopback, sleeps: list[float]) -> None:
    server.reply(307, {}, {"Location": "https://api.example.invalid/v1/chat/completions"})
    error = failure(server, sleeps)
    assert "redirects (HTTP 307) to https://api.example.invalid/v1/chat/completions" in str(error)
    assert len(server.requests) == 1


def test_key_with_a_line_break_is_never_shown(server: Loopback, sleeps: list[float]) -> None:
    error = failure(server, sleeps, key="sk-test-SECRET\n1234567890\n")
    assert "line break" in str(error)
    assert "SECRET" not in str(error) and "OPENAI_API_KEY" in (error.hint or "")
    assert server.requests == []


def test_base_url_without_scheme(sleeps: list[float]) -> None:
    chat = OpenAIProvider("m", "localhost:11434/v1", None, "OPENAI_API_KEY", sleep=sleeps.append)
    with pytest.raises(ProviderError, match="not a valid URL"):
        chat.complete(request())
