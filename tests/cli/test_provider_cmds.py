"""`sdd provider show | check | models`, through the real entry point, against a loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.trusthelp import confirm

MAIN = "sk-main-Zq8RmYx4TuV7wKp2Nd5H"
LOCAL = "local-Kx9Wm2Pq7Zr4Tv8Yb3"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", MAIN)
    monkeypatch.setenv("LOCAL_KEY", LOCAL)


def local_config(root: Root, server: Loopback, extra: str = "") -> None:
    root.config.write_text(
        f"provider: {{kind: openai, model: qwen, base_url: '{server.url}/v1'{extra}}}\n"
    )
    confirm(root, ".sdd/config.yaml")  # she wrote it herself


def test_show_names_the_variable_and_its_host_never_the_value(sdd: SddRunner, root: Root) -> None:
    result = sdd("provider", "show")
    assert result.code == 0, result.stderr
    assert "key: OPENAI_API_KEY (set) goes to api.openai.com only" in result.stdout
    assert MAIN not in result.stdout + result.stderr
    root.config.write_text(
        "provider: {kind: openai, model: m, base_url: 'https://openrouter.ai/api/v1', "
        "headers: {X-Token: secret-header-value-1}}\n"
    )
    result = sdd("provider", "show", "--json")
    shown = json.loads(result.stdout)
    assert shown["key"] == {"variable": None, "host": None, "set": False, "none": False}
    assert shown["headers"] == {"X-Token": "[secret]"}
    assert "secret-header-value-1" not in result.stdout
    assert "no key variable is named" in sdd("provider", "show").stdout


def test_show_reports_a_config_error_with_file_and_line(sdd: SddRunner, root: Root) -> None:
    root.config.write_text("provider:\n  kind: openai\n  model: m\n  timeut: 9\n")
    result = sdd("provider", "show")
    assert result.code == 1
    assert ".sdd/config.yaml:4: unknown key 'provider.timeut'" in result.stderr
    assert "timeout" in result.stderr


def test_check_reports_model_latency_and_well_formed_tool_calls(
    sdd: SddRunner, root: Root, server: Loopback
) -> None:
    local_config(root, server, ", api_key_env: LOCAL_KEY")
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "ping", "arguments": '{"word": "pong"}'},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    server.reply(body={"model": "qwen2.5:7b", "choices": [{"message": message}]})
    result = sdd("provider", "check", "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["model"] == "qwen2.5:7b" and report["ok"] is True
    assert report["tool_calls"] == "well-formed" and report["latency_ms"] >= 0
    sent = server.last.body
    assert [t["function"]["name"] for t in sent["tools"]] == ["ping"]
    assert sent["tool_choice"] == "auto"
    assert server.last.headers["authorization"] == f"Bearer {LOCAL}"


def test_check_fails_when_the_model_answers_in_prose(
    sdd: SddRunner, root: Root, server: Loopback
) -> None:
    local_config(root, server)
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "pong"}}]})
    result = sdd("provider", "check")
    assert result.code == 1
    assert "tool calls: none: the model answered in prose" in result.stdout
    assert "tool_choice: required" in result.stderr
    assert "authorization" not in server.last.headers  # a local server gets no OpenAI key


def test_check_of_a_server_that_is_down_is_one_clear_error(sdd: SddRunner, root: Root) -> None:
    from tests.providers.loopback import closed_port_url

    root.config.write_text(
        f"provider: {{kind: openai, model: m, base_url: '{closed_port_url()}/v1'}}\n"
    )
    confirm(root, ".sdd/config.yaml")
    result = sdd("provider", "check")
    assert result.code == 1 and "connection refused" in result.stderr


def test_models_lists_what_the_server_offers(sdd: SddRunner, root: Root, server: Loopback) -> None:
    local_config(root, server)
    server.reply(body={"data": [{"id": "qwen2.5"}, {"id": "llama3.2"}]})
    result = sdd("provider", "models")
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == ["llama3.2", "qwen2.5"]
    server.reply(body={"data": []})
    assert json.loads(sdd("provider", "models", "--json").stdout) == []


def test_check_refuses_the_script_provider(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = root.path / "replies.yaml"
    script.write_text("calls: []\n")
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")
    assert sdd("provider", "check").code == 2
    assert "provider: script" in sdd("provider", "show").stdout


def test_check_sends_no_key_to_an_address_she_has_not_confirmed(
    sdd: SddRunner, root: Root, server: Loopback
) -> None:
    """Settings that arrived by a merge name another host: `provider check` would send her key
    there. It waits for her confirmation instead (CONTRACT §13)."""
    root.config.write_text(
        f"provider: {{kind: openai, model: qwen, base_url: '{server.url}/v1'}}\n"
    )
    result = sdd("provider", "check")
    assert result.code == 3 and "sdd trust review" in result.stderr
    assert server.requests == []
