"""Which provider a role's calls go to, and how: environment first, then the role's model, then
config.

A key goes only to the host it belongs to. The person's own settings (SDD_* variables, the
`provider` of `.sdd/config.yaml`) send their key to their own server. A kind's standard variable
(OPENAI_API_KEY, ANTHROPIC_API_KEY) goes only to that kind's own service: a `base_url` of
another host gets a key only where a variable is named for it. A role file is anyone's (shared,
copied, drafted): when its `model` names a server of its own (`base_url`) it never gets the
person's main key, and wherever it names a key variable (`api_key_env`) that variable must be
listed in `.sdd/config.yaml` for the host the key would go to:

    provider: {kind: openai, model: gpt-4.1-mini, api_key_env: OPENAI_API_KEY,
               keys: {'critic.example.com': CRITIC_KEY, '127.0.0.1:8080': [LOCAL_KEY]}}

A host listed without a port matches any port. `api_key_env: none` sends no key at all.

Settings a layer writes count only for the kind it was written for: with SDD_PROVIDER=anthropic,
a config written for openai lends neither its base_url, its model nor its key variable.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.providers.base import Provider, ProviderError
from sdd_git.providers.settings import (
    DEFAULT_BASE_URL,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    ProviderSettings,
    host_text,
    variables_in,
    where,
)
from sdd_git.providers.stored import (
    place,
    same_host,
    same_place,
    stored_key_for,
)
from sdd_git.root import Root

KINDS = ("openai", "anthropic", "ollama", "script")
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
NO_KEY = "none"  # api_key_env: none
MIN_SECRET_LENGTH = 8
TOOL_CHOICES = ("auto", "none", "required")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# Headers sdd sets itself: a setting may not replace them (X-SDD-Role says who calls).
_OWN_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "host",
        "accept-encoding",
        "connection",
        "transfer-encoding",
        "x-sdd-role",
        "x-sdd-run",
    }
)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")

# The keys a `provider:` mapping or a role's `model:` may hold, with a one-line example each.
SETTING_KEYS: dict[str, str] = {
    "kind": "kind: openai  (openai, anthropic or ollama)",
    "model": "model: gpt-4.1-mini",
    "base_url": "base_url: http://localhost:11434/v1",
    "api_key_env": "api_key_env: OPENROUTER_API_KEY  (or none)",
    "timeout": "timeout: 600  (seconds to wait for an answer)",
    "retries": "retries: 2  (tries after the first, on 429, 5xx and resets)",
    "temperature": "temperature: 0.2",
    "max_tokens": "max_tokens: 4096",
    "headers": "headers: {HTTP-Referer: https://example.com}",
    "tool_choice": "tool_choice: auto  (auto, none, required or a tool name)",
    "num_ctx": "num_ctx: 16384  (Ollama's context window; its default is 2048)",
    "context": "context: 32768  (the model's context size in tokens)",
    "cache": "cache: off  (on by default: Anthropic's prompt cache breakpoints)",
}
CONFIG_ONLY_KEYS = {"keys": "keys: {'critic.example.com': CRITIC_KEY}"}


@dataclass(frozen=True)
class Kept:
    """The provider a run started with, as its `run_started` recorded it: a resumed run keeps
    it unless SDD_PROVIDER or SDD_MODEL now says otherwise (an answer given hours later, in
    another terminal, must not quietly go on with another model)."""

    kind: str
    model: str
    script: Path | None = None  # the scripted provider's file


def settings_for(
    root: Root,
    role_model: dict[str, Any] | str | None,
    *,
    role_path: Path | None = None,
    keep: Kept | None = None,
) -> ProviderSettings:
    """The settings a role's calls use. `role_path` (the ROLE.md) lets an error in the role's
    `model:` name its file and line. `keep` is what a resumed run started with: it stands
    below the environment and above the role's and config's settings."""
    config = person_provider(root)
    if isinstance(role_model, str):
        role_model = resolve_alias(root, role_model, role_path)
    role = dict(role_model or {})
    check_settings(role, role_path, "model", config_file=False)

    from_env = os.environ.get("SDD_PROVIDER")
    chosen = from_env or _kept_choice(keep)
    config_kind = str(config.get("kind") or "openai")
    script: Path | None = None
    if chosen:
        kind, _, rest = chosen.partition(":")
        if kind == "script":
            if not rest:
                raise ProviderError(
                    "SDD_PROVIDER=script needs a file", hint="SDD_PROVIDER=script:replies.yaml"
                )
            script = Path(rest).expanduser().resolve()
        # Only her own SDD_PROVIDER makes its kind her own server (SDD_API_KEY may go there);
        # a kept kind is one more kind, its key decided as the config's is.
        person_kind = kind if from_env else config_kind
    else:
        kind = str(role.get("kind") or config_kind)
        person_kind = config_kind
    if kind not in KINDS:
        raise ProviderError(
            f"unknown provider kind '{kind}'", hint="use openai, anthropic, ollama or script:PATH"
        )
    if kind == "script" and script is None:
        raise ProviderError("the script provider is chosen with SDD_PROVIDER=script:PATH")
    # Each layer counts only for the kind it was written for.
    person = config if config_kind == kind else {}
    own = role if str(role.get("kind") or config_kind) == kind else {}
    merged = {**person, **own}

    env_base_url = os.environ.get("SDD_BASE_URL") or None
    base_url = env_base_url or own.get("base_url") or person.get("base_url") or None
    destination = str(base_url or DEFAULT_BASE_URL.get(kind, ""))
    person_base = config.get("base_url") if config_kind == person_kind else None
    person_url = str(env_base_url or person_base or DEFAULT_BASE_URL.get(person_kind, ""))
    config_url = str(config.get("base_url") or DEFAULT_BASE_URL.get(config_kind, ""))
    common = _tuning(merged, kind)
    listed = _listed_keys(config)
    if kind == "script":
        return ProviderSettings(
            kind,
            str(os.environ.get("SDD_MODEL") or "script"),
            None,
            "",
            script,
            shared_key=False,
            listed_keys=listed,
            **common,
        )
    kept_model = keep.model if keep is not None and keep.kind == kind else ""
    model = os.environ.get("SDD_MODEL") or kept_model or str(merged.get("model") or "")
    own_headers = _headers(own.get("headers"))
    own_url = str(own["base_url"]) if own.get("base_url") and not env_base_url else destination
    _refuse_unlisted_headers(own_headers, own_url, config)
    if own.get("base_url") and not env_base_url:
        key_env, no_key = _own_endpoint(str(own["base_url"]), own, config)
        return ProviderSettings(
            kind,
            model,
            str(own["base_url"]),
            key_env,
            None,
            shared_key=False,
            headers=own_headers,
            no_key=no_key,
            listed_keys=listed,
            **common,
        )
    named = own.get("api_key_env")
    if named not in (None, ""):
        key_env, no_key = _variable(named)
        if key_env:
            _refuse_unlisted(key_env, destination, kind, config, config_url)
    elif person and same_host(destination, config_url):
        key_env, no_key = _person_variable(config, kind, destination)
    else:
        key_env, no_key = _default_variable(kind, destination, config), False
    # SDD_API_KEY is the person's main key: it goes only to her own server. So do the headers of
    # her config, which may carry a secret meant for that server.
    shared = not no_key and same_host(destination, person_url)
    headers = own_headers
    if person and same_host(destination, config_url):
        headers = _merge_headers(_headers(person.get("headers")), own_headers)
    return ProviderSettings(
        kind,
        model,
        base_url,
        key_env,
        None,
        shared_key=shared,
        headers=headers,
        no_key=no_key,
        listed_keys=listed,
        stored_key="" if no_key else stored_key_for(root, destination),
        **common,
    )


BUILTIN_MODELS: dict[str, dict[str, Any]] = {
    "sonnet": {"kind": "anthropic", "model": "claude-sonnet-4-5"},
    "haiku": {"kind": "anthropic", "model": "claude-haiku-4-5"},
    "opus": {"kind": "anthropic", "model": "claude-opus-4-1"},
    "gpt": {"kind": "openai", "model": "gpt-4.1"},
}


def model_aliases(root: Root) -> dict[str, dict[str, Any]]:
    """Every model alias: sdd's built-in ones, then her settings' `models:` over them. Each of
    hers is checked in the file it came from."""
    from sdd_git.settings import settings

    found = settings(root)
    section = found.get("models")
    if section is None:
        return dict(BUILTIN_MODELS)
    if not isinstance(section, dict):
        raise ProviderError(
            f"{found.where('models')}: key 'models' must map an alias to its settings",
            hint="models: {sonnet: {kind: anthropic, model: claude-sonnet-4-5}}",
        )
    aliases = dict(BUILTIN_MODELS)
    for name, entry in section.items():
        if not isinstance(entry, dict):
            raise ProviderError(
                f"{found.where('models', str(name))}: key 'models.{name}' must be a mapping "
                "of provider settings",
                hint=f"models: {{{name}: {{kind: anthropic, model: claude-sonnet-4-5}}}}",
            )
        layer = found.origin("models", str(name))
        check_settings(entry, layer.path if layer else None, "models", config_file=False)
        aliases[str(name)] = dict(entry)
    return aliases


def resolve_alias(root: Root, name: str, role_path: Path | None) -> dict[str, Any]:
    """The settings a role's `model: NAME` stands for; an unknown alias names the role's file,
    line and key."""
    aliases = model_aliases(root)
    if name in aliases:
        return dict(aliases[name])
    from sdd_git.config import did_you_mean

    close = did_you_mean(name, aliases)
    known = ", ".join(sorted(aliases))
    raise ProviderError(
        f"{place(role_path, 'model', None)}: key 'model': unknown model alias '{name}'",
        hint=(f"did you mean '{close}'? " if close else "")
        + f"known aliases: {known}; add one to your user settings: "
        f"models: {{{name}: {{kind: anthropic, model: claude-sonnet-4-5}}}}",
    )


def person_provider(root: Root) -> dict[str, Any]:
    """Her `provider:` settings, merged from her layers (user file, `.sdd/config.yaml`,
    `.sdd/config.local.yaml`); each layer's values checked in its own file, so that an error
    names the file and line the bad value is in."""
    from sdd_git.settings import settings

    found = settings(root)
    for layer in found.layers:
        part = layer.data.get("provider")
        if part is None:
            continue
        if not isinstance(part, dict):
            raise ProviderError(
                f"{place(layer.path, 'provider', None)}: key 'provider' must be a mapping",
                hint="provider: {kind: openai, model: gpt-4.1-mini}",
            )
        check_settings(part, layer.path, "provider", config_file=True)
    merged = found.get("provider")
    if not isinstance(merged, dict):
        return {}
    _keys_stay_with_their_address(found.layers, merged)
    return dict(merged)


def _keys_stay_with_their_address(layers: tuple[Any, ...], merged: dict[str, Any]) -> None:
    """A key variable or header a layer names goes only to the address that layer sends to (its
    own `base_url`, or the one in force below it): the layers merge key by key, so a later layer
    (a merged `.sdd/config.yaml`) that only changes `base_url` would otherwise take the key her
    user file set up for her gateway to its own host. Refused, saying which file says what."""
    kind = str(merged.get("kind") or "openai")
    final = str(merged.get("base_url") or DEFAULT_BASE_URL.get(kind, ""))
    address = DEFAULT_BASE_URL.get(kind, "")
    owners: dict[str, tuple[Any, str]] = {}  # what sends a secret -> (its layer, its address)
    for layer in layers:
        part = layer.data.get("provider")
        if not isinstance(part, dict):
            continue
        if part.get("kind") not in (None, kind):
            owners.clear()  # a mapping of another kind lends nothing to this one
            continue
        address = str(part.get("base_url") or address)
        if part.get("api_key_env"):
            owners["api_key_env"] = (layer, address)
        for name in part.get("headers") or {}:
            owners[f"headers.{name}"] = (layer, address)
    for what, (layer, sent_to) in owners.items():
        if sent_to and final and not same_place(sent_to, final):
            raise ProviderError(
                f"{place(layer.path, 'provider', what.split('.')[0])}: provider.{what} is set up "
                f"for {host_text(sent_to)}, but the merged settings send the provider to "
                f"{host_text(final)}; a key goes only to the address named beside it",
                hint="name base_url in the same file as the key, or remove one of the two",
            )


def _kept_choice(keep: Kept | None) -> str | None:
    """The kept kind in SDD_PROVIDER's form; None when there is nothing to keep (a script run
    whose file was not recorded cannot be kept)."""
    if keep is None or keep.kind not in KINDS:
        return None
    if keep.kind == "script":
        return f"script:{keep.script}" if keep.script is not None else None
    return keep.kind


def _tuning(merged: dict[str, Any], kind: str) -> dict[str, Any]:
    timeout = merged.get("timeout")
    retries = merged.get("retries")
    choice = merged.get("tool_choice")
    return {
        "timeout": DEFAULT_TIMEOUT if timeout is None else _seconds(timeout),
        "retries": DEFAULT_RETRIES if retries is None else int(retries),
        "temperature": None if merged.get("temperature") is None else float(merged["temperature"]),
        "max_tokens": merged.get("max_tokens"),
        "tool_choice": str(choice) if choice is not None else "auto",
        "num_ctx": merged.get("num_ctx"),
        "context_size": merged.get("context"),
        "cache": switch(merged.get("cache"), default=True),
    }


def _own_endpoint(
    base_url: str, role_model: dict[str, Any], config: dict[str, Any]
) -> tuple[str, bool]:
    """A role file that names its own server never gets the person's main key: a role shared
    from elsewhere could otherwise send OPENAI_API_KEY to any host it likes. It may name a key
    variable that the config lists for that host."""
    named = role_model.get("api_key_env")
    if named in (None, ""):
        return "", False
    key_env, no_key = _variable(named)
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
    return key_env, no_key


def _variable(named: Any) -> tuple[str, bool]:
    """(variable, no_key) for an explicit api_key_env: `none` sends nothing."""
    text = str(named).strip()
    if text.lower() == NO_KEY:
        return "", True
    return text, False


def _person_variable(config: dict[str, Any], kind: str, destination: str) -> tuple[str, bool]:
    """The variable the person's config sends to its own server. A standard variable
    (OPENAI_API_KEY, ANTHROPIC_API_KEY) still goes only to its own service or a host `keys`
    lists it for: `sdd init` writes `api_key_env: OPENAI_API_KEY`, and pointing base_url at a
    local or third-party server must not carry the OpenAI key along unnoticed."""
    named = config.get("api_key_env")
    if named in (None, ""):
        return _default_variable(kind, destination, config), False
    key_env, no_key = _variable(named)
    if key_env and not _may_go(key_env, destination, config):
        return "", False
    return key_env, no_key


def _may_go(key_env: str, destination: str, config: dict[str, Any]) -> bool:
    """False for a standard variable headed anywhere but its own service (unless listed)."""
    for kind, standard in DEFAULT_KEY_ENV.items():
        if key_env == standard:
            service = DEFAULT_BASE_URL[kind]
            return same_host(destination, service) or _listed(config, key_env, destination)
    return True


def _default_variable(kind: str, destination: str, config: dict[str, Any]) -> str:
    """The variable for a destination nobody named one for: the kind's standard variable, and
    only for the kind's own service (or a host `keys` lists it for). A local server or another
    company's endpoint never gets OPENAI_API_KEY by default."""
    standard = DEFAULT_KEY_ENV.get(kind, "")
    return standard if standard and _may_go(standard, destination, config) else ""


def _refuse_unlisted(
    key_env: str, destination: str, kind: str, config: dict[str, Any], config_url: str
) -> None:
    """A key variable a role file names may go where the config lists it, where the person's own
    settings send it anyway, or (a kind's standard variable) to that kind's own server."""
    if _listed(config, key_env, destination):
        return
    config_kind = str(config.get("kind") or "openai")
    if same_host(destination, config_url):
        person_key, _ = _person_variable(config, config_kind, destination)
        if key_env == person_key:
            return
    own_service = DEFAULT_BASE_URL.get(kind, "")
    if key_env == DEFAULT_KEY_ENV.get(kind) and same_host(destination, own_service):
        return
    raise _unlisted(key_env, destination)


def _refuse_unlisted_headers(
    headers: tuple[tuple[str, str], ...], url: str, config: dict[str, Any]
) -> None:
    """A variable a role's model names in a header is a key too: it goes only to a host her
    config lists it for, as a role's `api_key_env` does. Her own settings' headers go only to
    her own server (see `settings_for`)."""
    for name, text in headers:
        for variable in variables_in(text):
            if not _listed(config, variable, url):
                host = host_text(url)
                raise ProviderError(
                    f"the role's model would send ${variable} (header {name}) to {host}, and "
                    f".sdd/config.yaml does not list {variable} for that host; sdd sends a key "
                    "only to the host it belongs to",
                    hint=f"if {host} should get it, add to .sdd/config.yaml: "
                    f"provider: {{keys: {{'{host}': {variable}}}}}",
                )


def resolve_headers(settings: ProviderSettings) -> tuple[tuple[str, str], ...]:
    """The headers with each `$NAME` read from the environment now. A variable that is not
    set is an error naming the header and the variable: nothing is sent without it."""
    from sdd_git.providers.settings import HEADER_VARIABLE

    resolved = []
    for name, text in settings.headers:

        def value_of(found: re.Match[str], header: str = name) -> str:
            variable = found.group(1) or found.group(2)
            value = os.environ.get(variable, "").strip()
            if not value:
                raise ProviderError(
                    f"the header {header} of the {settings.kind} provider names ${variable}, "
                    "which is not set",
                    hint=f"export {variable}=... (its value goes to {settings.host} only, and "
                    "is masked everywhere sdd writes)",
                )
            if any(ch in value for ch in "\r\n\0"):
                raise ProviderError(
                    f"${variable} (header {header}) holds a line break, which no header may hold",
                    hint=f"set {variable} to the value on one line",
                )
            return value

        resolved.append((name, HEADER_VARIABLE.sub(value_of, text)))
    return tuple(resolved)


def _unlisted(key_env: str, url: str) -> ProviderError:
    host = host_text(url)
    return ProviderError(
        f"the role's model would send {key_env} to {host}, and .sdd/config.yaml does not list "
        f"{key_env} for that host; sdd sends a key only to the host it belongs to",
        hint=f"if {host} should get it, add to .sdd/config.yaml: "
        f"provider: {{keys: {{'{host}': {key_env}}}}}",
    )


def _listed_keys(config: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    keys = config.get("keys") or {}
    return tuple(
        (str(host), tuple([names] if isinstance(names, str) else [str(n) for n in names or []]))
        for host, names in keys.items()
    )


def _matching(config: dict[str, Any], url: str) -> list[str]:
    """The variables `provider.keys` lists for the host of `url`, in order."""
    host, port = where(url)
    found: list[str] = []
    for entry, names in _listed_keys(config):
        listed_host, listed_port = where(entry, default_port=False)
        if listed_host == host and (listed_port is None or listed_port == port):
            found.extend(names)
    return found


def _listed(config: dict[str, Any], key_env: str, url: str) -> bool:
    return key_env in _matching(config, url)


# --- validation -------------------------------------------------------------------------------


def check_settings(
    data: dict[str, Any], source: Path | None, section: str, *, config_file: bool
) -> None:
    """Refuse an unknown key or a value of the wrong type in `provider:` (config_file) or a
    role's `model:`, naming the file, the line and the key. An unknown key is an error, not
    ignored: a misspelt `timout` would otherwise leave the default in force without a word."""
    known = dict(SETTING_KEYS)
    if config_file:
        known.update(CONFIG_ONLY_KEYS)
    for key, value in data.items():
        name = str(key)
        if name not in known:
            from sdd_git.config import did_you_mean

            close = did_you_mean(name, known)
            if name in CONFIG_ONLY_KEYS:
                hint = "provider.keys belongs in .sdd/config.yaml: a role file cannot list keys"
            elif close:
                hint = f"did you mean '{close}'? ({known[close]})"
            else:
                hint = "known keys: " + ", ".join(known)
            raise ProviderError(
                f"{place(source, section, name)}: unknown key '{section}.{name}'", hint=hint
            )
        problem = _problem(name, value)
        if problem:
            raise ProviderError(
                f"{place(source, section, name)}: key '{section}.{name}' {problem}, not {value!r}",
                hint=f"write {known[name]}",
            )


def _problem(key: str, value: Any) -> str | None:
    """What is wrong with one setting's value, or None."""
    if value is None:
        return None  # unset: the default applies
    number = isinstance(value, int | float) and not isinstance(value, bool)
    whole = isinstance(value, int) and not isinstance(value, bool)
    if key == "kind":
        return None if value in KINDS[:3] else "must be openai, anthropic or ollama"
    if key in ("model", "api_key_env"):
        return None if isinstance(value, str) else "must be text"
    if key == "base_url":
        ok = isinstance(value, str) and value.split("://", 1)[0].lower() in ("http", "https")
        return None if ok else "must be a URL starting with http:// or https://"
    if key == "timeout":
        try:
            return None if _seconds(value) > 0 else "must be a number of seconds above 0"
        except ValueError:
            return "must be a number of seconds above 0 (or 90s, 10m)"
    if key == "retries":
        return None if whole and 0 <= value <= 20 else "must be a whole number from 0 to 20"
    if key == "temperature":
        return None if number and 0 <= value <= 2 else "must be a number from 0 to 2"
    if key in ("max_tokens", "num_ctx", "context"):
        return None if whole and value > 0 else "must be a whole number above 0"
    if key == "tool_choice":
        ok = isinstance(value, str) and (value in TOOL_CHOICES or bool(_TOOL_NAME.match(value)))
        return None if ok else "must be auto, none, required or a tool name"
    if key == "cache":
        return None if isinstance(value, bool | str) and value in _SWITCH else "must be on or off"
    if key == "headers":
        return _headers_problem(value)
    if key == "keys":
        return _keys_problem(value)
    return None


def _headers_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must map a header name to its value"
    for name, text in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            return f"holds {name!r}, which is not a header name"
        if name.lower() in _OWN_HEADERS:
            return f"may not set {name}, which sdd sets itself"
        if not isinstance(text, str | int | float) or isinstance(text, bool):
            return f"must give {name} a text value"
        if any(ch in str(text) for ch in "\r\n\0"):
            return f"must give {name} a value on one line"
    return None


def _keys_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must map a host to its key variable"
    for host, names in value.items():
        ok = isinstance(names, str) or (
            isinstance(names, list) and all(isinstance(n, str) for n in names)
        )
        if not ok:
            return f"must give {host!r} a variable name or a list of them"
    return None


# YAML 1.1 reads `off` as false, YAML 1.2 as the text "off": either way it means off.
_SWITCH: dict[Any, bool] = {True: True, False: False, "on": True, "off": False, "true": True,
                            "false": False}  # fmt: skip


def switch(value: Any, *, default: bool) -> bool:
    """An on/off setting: unset is the default."""
    return default if value is None else _SWITCH[value]


def _seconds(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int | float):
        return float(value)
    found = _DURATION.match(str(value))
    if not found:
        raise ValueError(value)
    unit = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[found.group(2) or "s"]
    return float(found.group(1)) * unit


def _headers(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        return ()
    return tuple((str(name), str(text)) for name, text in value.items())


def _merge_headers(
    base: tuple[tuple[str, str], ...], over: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    merged = {name.lower(): (name, text) for name, text in base}
    merged.update({name.lower(): (name, text) for name, text in over})
    return tuple(merged.values())


def make_provider(settings: ProviderSettings) -> Provider:
    if settings.kind == "script":
        from sdd_git.providers.script import ScriptProvider

        assert settings.script is not None
        if not settings.script.is_file():
            raise ProviderError(f"no script file {settings.script}")
        return ScriptProvider(settings.script)
    key = settings.key
    if key is not None and len(key) < MIN_SECRET_LENGTH:
        raise ProviderError(
            f"the API key in {settings.key_source} is shorter than {MIN_SECRET_LENGTH} characters",
            hint="sdd refuses it: masking so short a value would hide ordinary words in logs",
        )
    if not settings.model:
        raise ProviderError(
            f"no model is set for the {settings.kind} provider",
            hint="set provider.model in .sdd/config.yaml, or SDD_MODEL",
        )
    hosted = settings.base_url is None and settings.kind in DEFAULT_KEY_ENV
    if key is None and hosted and not settings.key_env:
        raise ProviderError(
            f"api_key_env is none, and the {settings.kind} service needs a key",
            hint="name the key variable (api_key_env), or point base_url at a local server",
        )
    if key is None and hosted:
        raise ProviderError(
            f"no model key: set {settings.key_env} (the {settings.kind} service needs it)",
            hint=f"export {settings.key_env}=... (or point base_url at a local server)",
        )
    if settings.headers:
        from dataclasses import replace

        settings = replace(settings, headers=resolve_headers(settings))
    if settings.kind == "anthropic":
        from sdd_git.providers.anthropic import AnthropicProvider

        return AnthropicProvider.from_settings(settings, key)
    from sdd_git.providers.openai import OpenAIProvider

    return OpenAIProvider.from_settings(settings, key)
