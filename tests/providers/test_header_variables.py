"""`$VAR` in a provider's headers (`headers: {api-key: $AZURE_KEY}`): read from the environment
when the run starts, sent only to the host of her confirmed settings, masked everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sdd_git.providers.base import ProviderError, ProviderRequest
from sdd_git.providers.select import make_provider, settings_for
from sdd_git.root import Root
from sdd_git.settings import local_config_file
from tests.conftest import SddRunner
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change
from tests.trusthelp import confirm

AZURE = "az-Secret-Kq7Wm2Zr9Tx4Pn8Vb3"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def _config(root: Root, url: str, headers: str = "{api-key: $AZURE_KEY}") -> None:
    root.config.write_text(
        f"provider: {{kind: openai, model: m, base_url: '{url}/v1', api_key_env: none, "
        f"headers: {headers}}}\n"
    )


def _reply(server: Loopback) -> None:
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "ok"}}]})


def _call(root: Root, model: dict[str, object] | None = None) -> None:
    provider = make_provider(settings_for(root, model))
    provider.complete(
        ProviderRequest("builder", "run-1", 1, [{"role": "user", "content": "Hi"}], [])
    )


def test_a_header_variable_is_read_from_the_environment_and_sent_to_her_server(
    root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_KEY", AZURE)
    _config(root, server.url, "{api-key: $AZURE_KEY, Authorization: 'Bearer ${AZURE_KEY}'}")
    _reply(server)
    _call(root)
    assert server.last.headers["api-key"] == AZURE
    assert server.last.headers["authorization"] == f"Bearer {AZURE}"


def test_a_missing_header_variable_names_the_header_and_the_variable(
    root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AZURE_KEY", raising=False)
    _config(root, server.url)
    with pytest.raises(ProviderError) as caught:
        _call(root)
    assert "the header api-key" in caught.value.message
    assert "$AZURE_KEY, which is not set" in caught.value.message
    assert server.requests == []


def test_provider_show_names_the_variable_never_its_value(
    root: Root, sdd: SddRunner, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_KEY", AZURE)
    _config(root, server.url, "{api-key: $AZURE_KEY, X-Written: literal-value-123}")
    shown = sdd("provider", "show", "--json")
    assert shown.code == 0, shown.stderr
    headers = json.loads(shown.stdout)["headers"]
    assert headers == {"api-key": "$AZURE_KEY", "X-Written": "[secret]"}
    assert AZURE not in shown.stdout


def test_her_header_variable_never_goes_to_a_role_s_own_server(
    root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_KEY", AZURE)
    _config(root, "http://her-server.example")
    _reply(server)
    _call(root, {"kind": "openai", "model": "m", "base_url": f"{server.url}/v1"})
    assert "api-key" not in server.last.headers


def test_a_role_naming_a_variable_in_its_headers_is_refused_unless_listed_for_the_host(
    root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_KEY", AZURE)
    port = server.url.rsplit(":", 1)[1]
    root.config.write_text("provider: {kind: openai, model: m}\n")
    role = {
        "kind": "openai",
        "model": "m",
        "base_url": f"{server.url}/v1",
        "headers": {"api-key": "$AZURE_KEY"},
    }
    with pytest.raises(ProviderError) as caught:
        _call(root, role)
    assert "$AZURE_KEY (header api-key)" in caught.value.message
    assert "does not list AZURE_KEY for that host" in caught.value.message
    assert server.requests == []
    root.config.write_text(
        f"provider: {{kind: openai, model: m, keys: {{'127.0.0.1:{port}': AZURE_KEY}}}}\n"
    )
    _reply(server)
    _call(root, role)
    assert server.last.headers["api-key"] == AZURE


def test_a_header_secret_never_reaches_the_run_log(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    monkeypatch.setenv("HEADER_WORDS", AZURE)  # a name that does not say secret
    local_config_file(root).write_text(
        f"provider: {{kind: openai, model: m, base_url: '{server.url}/v1', api_key_env: none, "
        "headers: {api-key: $HEADER_WORDS}}\n"
    )
    confirm(root, ".sdd/config.local.yaml")
    (root.path / "README.md").write_text(f"the key is {AZURE}\n")
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": "README.md"})},
    }
    server.reply(
        body={
            "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]
        }
    )
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Read it."}}]})
    result = sdd("role", "run", "builder", "--task", "Read the README", "--json")
    assert result.code == 0, result.stderr
    run_id = json.loads(result.stdout)["run"]
    assert server.requests[0].headers["api-key"] == AZURE
    assert AZURE not in json.dumps(server.requests[1].body)  # masked before the model saw it
    log = (root.sdd / "role-runs" / f"{run_id}.jsonl").read_text()
    assert AZURE not in log
