"""A key goes only to the host it belongs to: which variable's value a role's calls carry, and
where to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.providers.base import ProviderError, ProviderRequest
from sdd_git.providers.select import make_provider, settings_for
from sdd_git.root import Root
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve

GITHUB = "ghp_Gh7Rk2Zx9Qm4Tv8Wp3Ny6Lb5Jc1Hd0FsAk"
MAIN = "sk-main-Zq8RmYx4TuV7wKp2Nd5H"
SDD = "sddk_Ak3Zr8Qm5Wx2Tp9Vn7Ug"
CRITIC = "crit_Kx9Wm2Pq7Zr4Tv8Yb3NhQ"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)
    monkeypatch.setenv("OPENAI_API_KEY", MAIN)
    monkeypatch.setenv("CRITIC_KEY", CRITIC)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def config(root: Root, provider: str) -> None:
    root.config.write_text(f"provider: {provider}\n")


def call(settings_model: dict[str, Any], root: Root) -> None:
    provider = make_provider(settings_for(root, settings_model))
    provider.complete(
        ProviderRequest("critic", "run-1", 1, [{"role": "user", "content": "Hi"}], [])
    )


def reply_ok(server: Loopback) -> None:
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "ok"}}]})


def test_a_role_naming_its_own_server_and_a_token_gets_nothing_unless_listed(root: Root) -> None:
    model = {
        "kind": "openai",
        "model": "m",
        "base_url": "http://evil.example",
        "api_key_env": "GITHUB_TOKEN",
    }
    with pytest.raises(ProviderError) as caught:
        settings_for(root, model)
    assert "does not list GITHUB_TOKEN for that host" in caught.value.message
    assert "keys: {'evil.example': GITHUB_TOKEN}" in (caught.value.hint or "")
    # Listed for another host: still refused.
    config(root, "{kind: openai, model: m, keys: {'good.example': GITHUB_TOKEN}}")
    with pytest.raises(ProviderError):
        settings_for(root, model)
    # Listed for this host: the person said so.
    config(root, "{kind: openai, model: m, keys: {'evil.example': [GITHUB_TOKEN]}}")
    settings = settings_for(root, model)
    assert settings.key == GITHUB and not settings.shared_key


def test_the_listed_key_reaches_the_listed_host_and_no_other(
    root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_API_KEY", SDD)
    port = server.url.rsplit(":", 1)[1]
    model = {"kind": "openai", "model": "m", "base_url": f"{server.url}/v1"}
    with pytest.raises(ProviderError):
        call({**model, "api_key_env": "CRITIC_KEY"}, root)  # not listed: nothing is sent
    config(root, f"{{kind: openai, model: m, keys: {{'127.0.0.1:{int(port) + 1}': CRITIC_KEY}}}}")
    with pytest.raises(ProviderError):
        call({**model, "api_key_env": "CRITIC_KEY"}, root)  # listed for another port
    assert server.requests == []
    config(root, f"{{kind: openai, model: m, keys: {{'127.0.0.1:{port}': CRITIC_KEY}}}}")
    reply_ok(server)
    call({**model, "api_key_env": "CRITIC_KEY"}, root)
    assert server.last.headers["authorization"] == f"Bearer {CRITIC}"
    reply_ok(server)
    call(model, root)  # no key named: none sent, and never the main one
    assert "authorization" not in server.last.headers


def test_a_role_never_gets_the_main_key_for_its_own_server(root: Root) -> None:
    config(root, "{kind: openai, model: m, keys: {'evil.example': OPENAI_API_KEY}}")
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SDD_API_KEY"):
        model = {"model": "m", "base_url": "https://evil.example/v1", "api_key_env": name}
        with pytest.raises(ProviderError, match="refuses to hand the main key"):
            settings_for(root, model)


def test_a_role_without_a_server_may_not_redirect_another_key_to_the_main_one(
    root: Root,
) -> None:
    with pytest.raises(ProviderError, match="does not list GITHUB_TOKEN"):
        settings_for(root, {"model": "m", "api_key_env": "GITHUB_TOKEN"})
    # The person's own variable to the person's own server is what she set up.
    assert settings_for(root, {"model": "m", "api_key_env": "OPENAI_API_KEY"}).key == MAIN
    # Another kind's standard variable to that kind's own server.
    switched = settings_for(root, {"kind": "anthropic", "model": "c"})
    assert switched.key_env == "ANTHROPIC_API_KEY"


def test_api_key_env_none_sends_no_key(
    root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_API_KEY", SDD)
    config(root, f"{{kind: openai, model: m, base_url: '{server.url}/v1', api_key_env: none}}")
    settings = settings_for(root, None)
    assert settings.key is None
    reply_ok(server)
    call({}, root)
    assert "authorization" not in server.last.headers
    # A role may say none too, on the person's server.
    config(root, f"{{kind: openai, model: m, base_url: '{server.url}/v1'}}")
    assert settings_for(root, {"api_key_env": "none"}).key is None


def test_sdd_api_key_goes_only_to_the_persons_server(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_API_KEY", SDD)
    assert settings_for(root, None).key == SDD
    assert settings_for(root, {"model": "other"}).key == SDD  # same server, other model
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-Zq8RmYx4TuV7wKp2")
    switched = settings_for(root, {"kind": "anthropic", "model": "c"})
    assert switched.key == "sk-ant-Zq8RmYx4TuV7wKp2"  # not the main key
