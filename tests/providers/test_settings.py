"""Provider settings as people write them in .sdd/config.yaml and a role's `model:`: each key
read, unknown keys refused with file, line and key, and each key sent only to its own host."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.providers.base import ProviderError
from sdd_git.providers.select import settings_for
from sdd_git.root import Root

MAIN = "sk-main-Zq8RmYx4TuV7wKp2Nd5H"
ROUTER = "sk-or-Pq7Zr4Tv8Yb3NhQKx9Wm2"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", MAIN)
    monkeypatch.setenv("OPENROUTER_API_KEY", ROUTER)


def config(root: Root, text: str) -> None:
    root.config.write_text(text)


def test_every_setting_is_read(root: Root) -> None:
    config(
        root,
        "provider:\n"
        "  kind: openai\n"
        "  model: qwen2.5-coder\n"
        "  base_url: http://localhost:11434/v1\n"
        "  timeout: 10m\n"
        "  retries: 0\n"
        "  temperature: 0.2\n"
        "  max_tokens: 2048\n"
        "  headers: {X-Title: sdd}\n"
        "  tool_choice: required\n"
        "  num_ctx: 16384\n"
        "  context: 16384\n",
    )
    settings = settings_for(root, None)
    assert settings.timeout == 600.0 and settings.retries == 0 and settings.attempts == 1
    assert settings.temperature == 0.2 and settings.max_tokens == 2048
    assert settings.headers == (("X-Title", "sdd"),)
    assert settings.tool_choice == "required"
    assert settings.num_ctx == 16384 and settings.ollama  # port 11434
    assert settings.context == 16384
    # A role's model overrides one setting and keeps the rest.
    role = settings_for(root, {"timeout": 30, "tool_choice": "auto"})
    assert role.timeout == 30.0 and role.tool_choice == "auto" and role.num_ctx == 16384


def test_defaults_and_the_context_by_where_the_server_is(root: Root) -> None:
    settings = settings_for(root, None)
    assert settings.timeout == 120.0 and settings.retries == 2 and settings.tool_choice == "auto"
    assert settings.context == 128_000 and not settings.local
    config(root, "provider: {kind: openai, model: m, base_url: 'http://127.0.0.1:8080/v1'}\n")
    local = settings_for(root, None)
    assert local.local and local.context == 8192 and not local.ollama
    config(root, "provider: {kind: ollama, model: llama3.2}\n")
    ollama = settings_for(root, None)
    assert ollama.ollama and ollama.url == "http://localhost:11434/v1" and ollama.key is None


@pytest.mark.parametrize(
    ("text", "line", "key", "hint"),
    [
        ("provider:\n  kind: openai\n  model: m\n  timout: 600\n", 4, "timout", "'timeout'"),
        ("provider: {kind: openai, model: m, num-ctx: 4}\n", 1, "num-ctx", "'num_ctx'"),
        ("messaging: on\nprovider:\n  kind: openai\n  colour: blue\n", 4, "colour", "known"),
    ],
)
def test_an_unknown_key_names_file_line_and_key(
    root: Root, text: str, line: int, key: str, hint: str
) -> None:
    config(root, text)
    with pytest.raises(ProviderError) as caught:
        settings_for(root, None)
    assert caught.value.message.endswith(f".sdd/config.yaml:{line}: unknown key 'provider.{key}'")
    assert hint in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("timeout: -1", "number of seconds above 0"),
        ("retries: many", "whole number from 0 to 20"),
        ("temperature: 7", "from 0 to 2"),
        ("max_tokens: 0", "above 0"),
        ("tool_choice: 'a tool'", "auto, none, required or a tool name"),
        ("headers: {Content-Type: text/plain}", "sdd sets itself"),
        ("headers: [a]", "map a header name"),
        ("num_ctx: 2k", "whole number above 0"),
        ("base_url: localhost:11434", "http:// or https://"),
    ],
)
def test_a_wrong_value_names_file_line_and_key(root: Root, setting: str, words: str) -> None:
    config(root, f"provider:\n  kind: openai\n  model: m\n  {setting}\n")
    with pytest.raises(ProviderError) as caught:
        settings_for(root, None)
    key = setting.split(":")[0]
    assert f".sdd/config.yaml:4: key 'provider.{key}' " in caught.value.message
    assert words in caught.value.message
    assert (caught.value.hint or "").startswith("write ")


def test_a_role_model_key_error_names_the_role_file(root: Root, tmp_path: Path) -> None:
    role = tmp_path / "ROLE.md"
    role.write_text("---\nname: critic\nmodel:\n  model: m\n  temprature: 0.1\n---\nA critic.\n")
    with pytest.raises(ProviderError) as caught:
        settings_for(root, {"model": "m", "temprature": 0.1}, role_path=role)
    assert caught.value.message.endswith("ROLE.md:5: unknown key 'model.temprature'")
    assert "'temperature'" in (caught.value.hint or "")
    with pytest.raises(ProviderError) as caught:
        settings_for(root, {"keys": {"evil.example": "OPENAI_API_KEY"}})
    assert caught.value.message == "the role's model: unknown key 'model.keys'"
    assert "a role file cannot list keys" in (caught.value.hint or "")


def test_sdd_provider_openai_never_sends_the_openai_key_to_the_configs_other_host(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    config(
        root,
        "provider: {kind: openai, model: m, base_url: 'https://openrouter.ai/api/v1', "
        "api_key_env: OPENROUTER_API_KEY}\n",
    )
    monkeypatch.setenv("SDD_PROVIDER", "openai")
    settings = settings_for(root, None)
    assert settings.key == ROUTER and settings.key_source == "OPENROUTER_API_KEY"
    # With no variable named for that host, nothing goes there (and never OPENAI_API_KEY).
    config(root, "provider: {kind: openai, model: m, base_url: 'https://openrouter.ai/api/v1'}\n")
    assert settings_for(root, None).key is None
    # `sdd init` writes api_key_env: OPENAI_API_KEY; moving base_url must not carry it along.
    config(
        root,
        "provider: {kind: openai, model: m, base_url: 'https://llm.example.com/v1', "
        "api_key_env: OPENAI_API_KEY}\n",
    )
    assert settings_for(root, None).key is None
    # Unless the person lists it for that host.
    config(
        root,
        "provider: {kind: openai, model: m, base_url: 'https://llm.example.com/v1', "
        "api_key_env: OPENAI_API_KEY, keys: {llm.example.com: OPENAI_API_KEY}}\n",
    )
    assert settings_for(root, None).key == MAIN


def test_sdd_provider_of_another_kind_borrows_nothing_from_the_config(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    config(
        root,
        "provider: {kind: openai, model: gpt-x, base_url: 'https://openrouter.ai/api/v1', "
        "api_key_env: OPENROUTER_API_KEY}\n",
    )
    monkeypatch.setenv("SDD_PROVIDER", "anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Zq8RmYx4TuV7wKp2")
    settings = settings_for(root, None)
    assert settings.url == "https://api.anthropic.com" and settings.model == ""
    assert settings.key_source == "ANTHROPIC_API_KEY"


@pytest.mark.parametrize("named", ["''", "null"])
def test_an_empty_api_key_env_sends_no_openai_key_to_a_local_server(root: Root, named: str) -> None:
    config(
        root,
        f"provider: {{kind: openai, model: m, base_url: 'http://localhost:8000/v1', "
        f"api_key_env: {named}}}\n",
    )
    settings = settings_for(root, None)
    assert settings.key is None and settings.key_source is None


def test_config_headers_go_only_to_the_persons_server(root: Root) -> None:
    config(
        root,
        "provider: {kind: openai, model: m, base_url: 'https://gw.example.com/v1', "
        "headers: {X-Gateway-Token: gw-secret-value-123}}\n",
    )
    assert dict(settings_for(root, None).headers) == {"X-Gateway-Token": "gw-secret-value-123"}
    own = settings_for(
        root, {"base_url": "https://other.example/v1", "headers": {"X-Title": "critic"}}
    )
    assert dict(own.headers) == {"X-Title": "critic"}  # never the gateway's token
    described = settings_for(root, None).describe()
    assert described["headers"] == {"X-Gateway-Token": "[secret]"}
    assert "gw-secret-value-123" not in repr(described)
