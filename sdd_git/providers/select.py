"""Which provider a role's calls go to: environment first, then the role's model, then config.

A key goes only to the host it belongs to. The person's own settings (SDD_* variables, the
`provider` of `.sdd/config.yaml`) send their key to their own server. A role file is anyone's
(shared, copied, drafted): when its `model` names a server of its own (`base_url`) it never gets
the person's main key, and wherever it names a key variable (`api_key_env`) that variable must be
listed in `.sdd/config.yaml` for the host the key would go to:

    provider: {kind: openai, model: gpt-4.1-mini, api_key_env: OPENAI_API_KEY,
               keys: {'critic.example.com': CRITIC_KEY, '127.0.0.1:8080': [LOCAL_KEY]}}

A host listed without a port matches any port. `api_key_env: none` sends no key at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sdd_git.providers.base import Provider, ProviderError
from sdd_git.root import Root

KINDS = ("openai", "anthropic", "script")
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "script": ""}
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
NO_KEY = "none"  # api_key_env: none
MIN_SECRET_LENGTH = 8


@dataclass(frozen=True)
class ProviderSettings:
    kind: str
    model: str
    base_url: str | None
    key_env: str
    script: Path | None = None
    shared_key: bool = True  # False: a role's own endpoint, which gets only its own key

    @property
    def key(self) -> str | None:
        if self.shared_key and os.environ.get("SDD_API_KEY"):
            return os.environ["SDD_API_KEY"]
        return os.environ.get(self.key_env) if self.key_env else None


def settings_for(root: Root, role_model: dict[str, Any] | None) -> ProviderSettings:
    from sdd_git.yamlio import read_mapping

    config = read_mapping(root.config).get("provider") or {}
    if not isinstance(config, dict):
        raise ProviderError(".sdd/config.yaml: key 'provider' must be a mapping")
    merged: dict[str, Any] = {**config, **(role_model or {})}
    kind = str(merged.get("kind") or "openai")
    script: Path | None = None
    chosen = os.environ.get("SDD_PROVIDER")
    if chosen:
        kind, _, rest = chosen.partition(":")
        if kind == "script":
            if not rest:
                raise ProviderError(
                    "SDD_PROVIDER=script needs a file", hint="SDD_PROVIDER=script:replies.yaml"
                )
            script = Path(rest).expanduser().resolve()
    if kind not in KINDS:
        raise ProviderError(
            f"unknown provider kind '{kind}'", hint="use openai, anthropic or script:PATH"
        )
    if kind == "script" and script is None:
        raise ProviderError("the script provider is chosen with SDD_PROVIDER=script:PATH")
    model = os.environ.get("SDD_MODEL") or str(merged.get("model") or "")
    env_base_url = os.environ.get("SDD_BASE_URL")
    base_url = env_base_url or merged.get("base_url") or None
    role = role_model or {}
    # The key's variable comes from the layer that chose the kind: a config made for openai
    # must not hand its OPENAI_API_KEY name to an anthropic provider chosen by SDD_PROVIDER.
    if chosen:
        return ProviderSettings(kind, model, base_url, DEFAULT_KEY_ENV[kind], script)
    if role.get("base_url") and not env_base_url:
        return _own_endpoint(kind, model, str(role["base_url"]), role, config)
    if role.get("kind") and role.get("kind") != config.get("kind"):
        key_env = _variable(role.get("api_key_env"), DEFAULT_KEY_ENV[kind])
    else:
        key_env = _variable(merged.get("api_key_env"), DEFAULT_KEY_ENV[kind])
    destination = str(base_url or DEFAULT_BASE_URL[kind])
    if key_env and role.get("api_key_env"):
        _refuse_unlisted(key_env, destination, kind, config, env_base_url)
    # SDD_API_KEY is the person's main key: it goes only to her own server.
    shared = bool(key_env) and _same_host(destination, _person_url(config, env_base_url))
    return ProviderSettings(kind, model, base_url, key_env, script, shared_key=shared)


def _own_endpoint(
    kind: str, model: str, base_url: str, role_model: dict[str, Any], config: dict[str, Any]
) -> ProviderSettings:
    """A role file that names its own server never gets the person's main key: a role shared
    from elsewhere could otherwise send OPENAI_API_KEY to any host it likes. It may name a key
    variable that the config lists for that host."""
    key_env = _variable(role_model.get("api_key_env"), "")
    shared = {str(config.get("api_key_env") or ""), *DEFAULT_KEY_ENV.values(), "SDD_API_KEY"}
    if key_env and key_env in shared:
        raise ProviderError(
            f"the role's model sends {key_env} to its own base_url {base_url}; sdd refuses to "
            "hand the main key to a server a role file names",
            hint="give the role a key variable of its own (model: {api_key_env: MY_ROLE_KEY}), "
            "listed for that host in .sdd/config.yaml (provider: {keys: {HOST: MY_ROLE_KEY}})",
        )
    if key_env and not _listed(config, key_env, base_url):
        raise _unlisted(key_env, base_url)
    return ProviderSettings(kind, model, base_url, key_env, None, shared_key=False)


def _variable(named: Any, default: str) -> str:
    """The key variable named in a model setting: '' for `none` (no key), `default` if unset."""
    if named is None or named == "":
        return default
    text = str(named).strip()
    return "" if text.lower() == NO_KEY else text


def _refuse_unlisted(
    key_env: str, destination: str, kind: str, config: dict[str, Any], env_base_url: str | None
) -> None:
    """A key variable a role file names may go where the config lists it, where the person's own
    settings send it anyway, or (a kind's standard variable) to that kind's own server."""
    if _listed(config, key_env, destination):
        return
    person_kind = str(config.get("kind") or "openai")
    person_key = _variable(config.get("api_key_env"), DEFAULT_KEY_ENV.get(person_kind, ""))
    if key_env == person_key and _same_host(destination, _person_url(config, env_base_url)):
        return
    if key_env == DEFAULT_KEY_ENV[kind] and _same_host(destination, DEFAULT_BASE_URL[kind]):
        return
    raise _unlisted(key_env, destination)


def _unlisted(key_env: str, url: str) -> ProviderError:
    host = _host_text(url)
    return ProviderError(
        f"the role's model would send {key_env} to {host}, and .sdd/config.yaml does not list "
        f"{key_env} for that host; sdd sends a key only to the host it belongs to",
        hint=f"if {host} should get it, add to .sdd/config.yaml: "
        f"provider: {{keys: {{'{host}': {key_env}}}}}",
    )


def _person_url(config: dict[str, Any], env_base_url: str | None) -> str:
    kind = str(config.get("kind") or "openai")
    return str(env_base_url or config.get("base_url") or DEFAULT_BASE_URL.get(kind, ""))


def _listed(config: dict[str, Any], key_env: str, url: str) -> bool:
    keys = config.get("keys")
    if keys is None:
        return False
    if not isinstance(keys, dict):
        raise ProviderError(
            ".sdd/config.yaml: provider.keys must map a host to its key variable",
            hint="provider: {keys: {'critic.example.com': CRITIC_KEY}}",
        )
    host, port = _where(url)
    for entry, names in keys.items():
        listed_host, listed_port = _where(str(entry), default_port=False)
        if listed_host != host or (listed_port is not None and listed_port != port):
            continue
        if key_env in ([names] if isinstance(names, str) else [str(n) for n in names or []]):
            return True
    return False


def _same_host(one: str, other: str) -> bool:
    return bool(one and other) and _where(one) == _where(other)


def _where(url: str, *, default_port: bool = True) -> tuple[str, int | None]:
    """Host (lower case) and port of a URL or a bare `host[:port]`; the scheme's port when the
    URL names none (unless `default_port` is off: a listed bare host matches any port)."""
    has_scheme = "://" in url
    parts = urlsplit(url if has_scheme else f"//{url}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None and has_scheme and default_port:
        port = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return (parts.hostname or "").lower(), port


def _host_text(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"//{url}")
    return parts.netloc.rpartition("@")[2].lower() or url


def make_provider(settings: ProviderSettings) -> Provider:
    if settings.kind == "script":
        from sdd_git.providers.script import ScriptProvider

        assert settings.script is not None
        if not settings.script.is_file():
            raise ProviderError(f"no script file {settings.script}")
        return ScriptProvider(settings.script)
    key = settings.key
    if key is not None and len(key) < MIN_SECRET_LENGTH:
        source = (
            "SDD_API_KEY"
            if settings.shared_key and os.environ.get("SDD_API_KEY")
            else settings.key_env
        )
        raise ProviderError(
            f"the API key in {source} is shorter than {MIN_SECRET_LENGTH} characters",
            hint="sdd refuses it: masking so short a value would hide ordinary words in logs",
        )
    if not settings.model:
        raise ProviderError(
            f"no model is set for the {settings.kind} provider",
            hint="set provider.model in .sdd/config.yaml, or SDD_MODEL",
        )
    if key is None and settings.base_url is None and not settings.key_env:
        raise ProviderError(
            f"api_key_env is none, and the {settings.kind} service needs a key",
            hint="name the key variable (api_key_env), or point base_url at a local server",
        )
    if key is None and settings.base_url is None:
        raise ProviderError(
            f"no API key for {settings.kind}: {settings.key_env} is not set",
            hint=f"export {settings.key_env}=... (or point base_url at a local server)",
        )
    if settings.kind == "openai":
        from sdd_git.providers.openai import OpenAIProvider

        return OpenAIProvider(settings.model, settings.base_url, key, settings.key_env)
    from sdd_git.providers.anthropic import AnthropicProvider

    return AnthropicProvider(settings.model, settings.base_url, key, settings.key_env)
