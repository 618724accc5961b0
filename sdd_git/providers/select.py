"""Which provider a role's calls go to: environment first, then the role's model, then config."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.providers.base import Provider, ProviderError
from sdd_git.root import Root

KINDS = ("openai", "anthropic", "script")
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "script": ""}
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
    base_url = os.environ.get("SDD_BASE_URL") or merged.get("base_url") or None
    # The key's variable comes from the layer that chose the kind: a config made for openai
    # must not hand its OPENAI_API_KEY name to an anthropic provider chosen by SDD_PROVIDER.
    if chosen:
        key_env = DEFAULT_KEY_ENV[kind]
    elif role_model and role_model.get("base_url") and not os.environ.get("SDD_BASE_URL"):
        return _own_endpoint(kind, model, str(role_model["base_url"]), role_model, config)
    elif role_model and role_model.get("kind") and role_model.get("kind") != config.get("kind"):
        key_env = str(role_model.get("api_key_env") or DEFAULT_KEY_ENV[kind])
    else:
        key_env = str(merged.get("api_key_env") or DEFAULT_KEY_ENV[kind])
    return ProviderSettings(kind, model, base_url, key_env, script)


def _own_endpoint(
    kind: str, model: str, base_url: str, role_model: dict[str, Any], config: dict[str, Any]
) -> ProviderSettings:
    """A role file that names its own server never gets the person's main key: a role shared
    from elsewhere could otherwise send OPENAI_API_KEY to any host it likes. It may name a key
    variable of its own, which the person sets on purpose."""
    key_env = str(role_model.get("api_key_env") or "")
    shared = {str(config.get("api_key_env") or ""), *DEFAULT_KEY_ENV.values(), "SDD_API_KEY"}
    if key_env and key_env in shared:
        raise ProviderError(
            f"the role's model sends {key_env} to its own base_url {base_url}; sdd refuses to "
            "hand the main key to a server a role file names",
            hint="give the role a key variable of its own (model: {api_key_env: MY_ROLE_KEY})",
        )
    return ProviderSettings(kind, model, base_url, key_env, None, shared_key=False)


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
