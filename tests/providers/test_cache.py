"""Prompt caching on the wire, against a real HTTP server on loopback: Anthropic's cache_control
breakpoints, the order of each body's keys, and the cached-token figures each provider reports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.errors import SddError
from sdd_git.providers.anthropic import AnthropicProvider
from sdd_git.providers.base import Message, ProviderRequest, ToolSchema
from sdd_git.providers.openai import OpenAIProvider
from sdd_git.root import Root
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve

EPHEMERAL = {"type": "ephemeral"}
TOOLS = [
    ToolSchema(
        name=name,
        description=f"The {name} tool.",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    for name in ("read_file", "list_files", "search_files")
]
SYSTEM: Message = {"role": "system", "content": "You are the builder."}
USER: Message = {"role": "user", "content": "Read the three files."}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def anthropic(url: str, **kw: Any) -> AnthropicProvider:
    return AnthropicProvider("claude-test", url, "sk-test-1234567890", "ANTHROPIC_API_KEY", **kw)


def request(messages: list[Message], tool_choice: str | None = None) -> ProviderRequest:
    return ProviderRequest("builder", "run-1", 1, messages, list(TOOLS), tool_choice=tool_choice)


def conversation(turns: int) -> list[Message]:
    """The system prompt, the task, and `turns` assistant turns of two reads each, answered."""
    messages: list[Message] = [SYSTEM, USER]
    for turn in range(1, turns + 1):
        calls = [
            {"id": f"toolu_{turn}_{n}", "name": "read_file", "args": {"path": f"f{turn}{n}.py"}}
            for n in (1, 2)
        ]
        raw = [{"type": "text", "text": f"Reading {turn}."}] + [
            {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}
            for c in calls
        ]
        messages.append(
            {
                "role": "assistant",
                "content": f"Reading {turn}.",
                "tool_calls": calls,
                "provider": "anthropic",
                "raw": raw,
            }
        )
        messages.extend(
            {"role": "tool", "tool_call_id": c["id"], "name": "read_file", "content": "x" * 50}
            for c in calls
        )
    return messages


def anthropic_answer(usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": "Done."}],
        "usage": usage or {"input_tokens": 10, "output_tokens": 2},
    }


def marked(body: dict[str, Any]) -> list[str]:
    """Where the body carries a breakpoint, as `tools[i]`, `system[i]`, `messages[i][j]`."""
    places = [f"tools[{i}]" for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        places += [f"system[{i}]" for i, b in enumerate(system) if "cache_control" in b]
    for i, turn in enumerate(body["messages"]):
        places += [
            f"messages[{i}][{j}]" for j, b in enumerate(turn["content"]) if "cache_control" in b
        ]
    return places


def test_anthropic_marks_the_last_tool_the_system_and_the_two_latest_user_turns(
    server: Loopback,
) -> None:
    server.reply(body=anthropic_answer())
    messages = conversation(3)
    raws = json.dumps([m.get("raw") for m in messages])
    anthropic(server.url).complete(request(messages))
    body = server.last.body
    # user, assistant, user(results), assistant, user(results), assistant, user(results)
    assert marked(body) == ["tools[2]", "system[0]", "messages[4][1]", "messages[6][1]"]
    assert len(marked(body)) <= 4  # the API's limit
    assert body["system"] == [
        {"type": "text", "text": "You are the builder.", "cache_control": EPHEMERAL}
    ]
    assert body["messages"][6]["content"][1]["cache_control"] == EPHEMERAL
    assert json.dumps([m.get("raw") for m in messages]) == raws  # the run's own turns untouched


def test_anthropic_first_call_marks_the_task(server: Loopback) -> None:
    server.reply(body=anthropic_answer())
    anthropic(server.url).complete(request([SYSTEM, USER]))
    assert marked(server.last.body) == ["tools[2]", "system[0]", "messages[0][0]"]


def test_anthropic_body_keys_go_in_the_order_the_prompt_is_read(server: Loopback) -> None:
    server.reply(body=anthropic_answer())
    anthropic(server.url, temperature=0.2).complete(request(conversation(1), "read_file"))
    assert list(server.last.body) == [
        "model",
        "max_tokens",
        "tools",
        "system",
        "messages",
        "tool_choice",  # may change per call (the accuracy loop names a tool), so after
        "temperature",
    ]


def test_anthropic_cache_off_sends_no_breakpoint(server: Loopback) -> None:
    server.reply(body=anthropic_answer())
    anthropic(server.url, cache=False).complete(request(conversation(2)))
    body = server.last.body
    assert "cache_control" not in json.dumps(body)
    assert body["system"] == "You are the builder."


def test_anthropic_cache_figures_are_kept_beside_its_own(server: Loopback) -> None:
    usage = {
        "input_tokens": 40,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 2500,
        "output_tokens": 12,
    }
    server.reply(body=anthropic_answer(usage))
    reply = anthropic(server.url).complete(request([SYSTEM, USER]))
    assert reply.usage == {**usage, "cached_input_tokens": 2500, "cache_write_input_tokens": 300}


def test_anthropic_no_usage_claims_no_figures(server: Loopback) -> None:
    server.reply(body={"content": [{"type": "text", "text": "ok"}]})
    assert anthropic(server.url).complete(request([SYSTEM, USER])).usage == {}


def openai(url: str) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", f"{url}/v1", "sk-test-1234567890", "OPENAI_API_KEY")


def openai_answer(usage: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": "Done."}}], "usage": usage}


def test_openai_body_has_tools_before_the_messages_and_per_call_fields_after(
    server: Loopback,
) -> None:
    server.reply(body=openai_answer({"prompt_tokens": 5}))
    provider = OpenAIProvider(
        "gpt-test", f"{server.url}/v1", None, "", temperature=0.1, max_tokens=100
    )
    provider.complete(request([SYSTEM, USER], "read_file"))
    assert list(server.last.body) == [
        "model",
        "tools",
        "messages",
        "tool_choice",
        "temperature",
        "max_tokens",
    ]


def test_openai_cached_tokens_are_logged_as_cached_input_tokens(server: Loopback) -> None:
    usage = {
        "prompt_tokens": 2600,
        "completion_tokens": 20,
        "total_tokens": 2620,
        "prompt_tokens_details": {"cached_tokens": 2304},
    }
    server.reply(body=openai_answer(usage))
    reply = openai(server.url).complete(request([SYSTEM, USER]))
    assert reply.usage == {**usage, "cached_input_tokens": 2304, "cache_write_input_tokens": 0}


def test_deepseek_and_openrouter_cache_fields_are_read_too(server: Loopback) -> None:
    server.reply(body=openai_answer({"prompt_tokens": 900, "prompt_cache_hit_tokens": 640}))
    server.reply(
        body=openai_answer(
            {
                "prompt_tokens": 900,
                "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 850},
            }
        )
    )
    chat = openai(server.url)
    first = chat.complete(request([SYSTEM, USER]))
    second = chat.complete(request([SYSTEM, USER]))
    assert (first.usage["cached_input_tokens"], first.usage["cache_write_input_tokens"]) == (640, 0)
    assert (second.usage["cached_input_tokens"], second.usage["cache_write_input_tokens"]) == (
        0,
        850,
    )


def test_cache_is_on_unless_the_config_says_off(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.providers.select import make_provider, settings_for

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-1234567890")
    root.config.write_text("provider: {kind: anthropic, model: claude-test}\n")
    assert settings_for(root, None).cache is True
    for written in ("off", "false", "'off'"):
        root.config.write_text(
            f"provider: {{kind: anthropic, model: claude-test, cache: {written}}}\n"
        )
        settings = settings_for(root, None)
        assert settings.cache is False
        provider = make_provider(settings)
        assert isinstance(provider, AnthropicProvider) and provider.cache is False
    assert settings_for(root, None).describe()["cache"] is False


def test_a_cache_setting_that_is_not_on_or_off_names_the_fix(root: Root) -> None:
    from sdd_git.providers.select import settings_for

    root.config.write_text("provider: {kind: anthropic, model: claude-test, cache: sometimes}\n")
    with pytest.raises(SddError) as caught:
        settings_for(root, None)
    assert "must be on or off" in caught.value.message and "cache: off" in (caught.value.hint or "")
