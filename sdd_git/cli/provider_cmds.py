"""The model provider: which key goes where, a check, the models."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sdd_git.cli.output import current_root, emit_json, json_option

if TYPE_CHECKING:
    from sdd_git.providers.base import Provider
    from sdd_git.providers.settings import ProviderSettings

_ROLE_HELP = "Use this role's model: settings (over the config's)."
# The one trivial tool `check` offers: a model that can call tools calls it with {"word": "pong"}.
_PING_PARAMETERS = {
    "type": "object",
    "properties": {"word": {"type": "string", "description": "The word to send back."}},
    "required": ["word"],
}


def _mask(settings: ProviderSettings, data: Any) -> Any:
    """What a server answered, with every secret within reach masked: a server can echo the
    key it was given back as a model's name or id."""
    import json
    import os

    from sdd_git.connectors.tokens import masker_for
    from sdd_git.errors import SddError
    from sdd_git.root import find_root

    try:
        product = find_root(Path.cwd()).path
    except SddError:  # outside a root: still mask the environment's secrets
        product = Path.cwd()
    keys = [k for k in (settings.key, os.environ.get("SDD_API_KEY")) if k]
    return json.loads(masker_for(product, keys)(json.dumps(data)))


@click.group("provider")
def provider() -> None:
    """The model provider: which key goes where, a check, the models."""


def _settings(role: str | None) -> ProviderSettings:
    from sdd_git.providers.select import settings_for

    root = current_root()
    if role is None:
        return settings_for(root, None)
    from sdd_git.roles.registry import find_role

    profile, _ = find_role(root, role, use_cache=False)
    return settings_for(root, profile.model, role_path=profile.path)


@provider.command("show")
@click.option("--role", default=None, metavar="NAME", help=_ROLE_HELP)
@json_option
def show(role: str | None, as_json: bool) -> None:
    """Which provider, model and base_url, and which key variable goes to which host (names
    only, never values)."""
    settings = _settings(role)
    described = settings.describe()
    if as_json:
        emit_json(described)
        return
    click.echo("\n".join(_show_lines(described)))


def _show_lines(d: dict[str, Any]) -> list[str]:
    key = d["key"]
    if d["provider"] == "script":
        return [f"provider: script ({d['script']})", "key: none (replays a file)"]
    if key["none"]:
        key_line = f"key: none sent to {_host(d['base_url'])} (api_key_env: none)"
    elif key["variable"]:
        state = "set" if key["set"] else "NOT SET"
        key_line = f"key: {key['variable']} ({state}) goes to {key['host']} only"
    else:
        key_line = f"key: none sent to {_host(d['base_url'])} (no key variable is named for it)"
    lines = [
        f"provider: {d['provider']}",
        f"model: {d['model'] or '(not set)'}",
        f"base_url: {d['base_url']}",
        key_line,
    ]
    for host, names in d["keys"].items():
        lines.append(f"  listed in provider.keys: {', '.join(names)} may go to {host}")
    lines.append(f"timeout: {d['timeout']:g} s, retries: {d['retries']}")
    lines.append(f"tool_choice: {d['tool_choice']}")
    lines.append(f"context: {d['context']} tokens")
    if d["provider"] == "anthropic" and not d["cache"]:
        lines.append("cache: off (no prompt cache breakpoints are sent)")
    if d["num_ctx"] is not None:
        lines.append(f"num_ctx: {d['num_ctx']} (sent to Ollama as options.num_ctx)")
    for name in ("temperature", "max_tokens"):
        if d[name] is not None:
            lines.append(f"{name}: {d[name]}")
    if d["headers"]:
        lines.append("headers: " + ", ".join(f"{n}: {v}" for n, v in d["headers"].items()))
    return lines


def _host(url: str | None) -> str:
    from urllib.parse import urlsplit

    return (urlsplit(url).netloc.rpartition("@")[2] or url or "?") if url else "?"


def _provider(role: str | None) -> tuple[ProviderSettings, Provider]:
    from sdd_git.errors import UsageError
    from sdd_git.providers.select import make_provider

    settings = _settings(role)
    if settings.kind == "script":
        raise UsageError(
            "the script provider replays a file: there is no server to check",
            hint="unset SDD_PROVIDER to check the configured provider",
        )
    _require_confirmed(role)  # this sends the key: only to an address she confirmed (§13)
    return settings, make_provider(settings)


def _require_confirmed(role: str | None) -> None:
    from sdd_git.roles.registry import find_role
    from sdd_git.runner import trusted

    root = current_root()
    profile = find_role(root, role, use_cache=False)[0] if role is not None else None
    trusted.require(root, [profile], doing="checking the provider")


@provider.command("check")
@click.option("--role", default=None, metavar="NAME", help=_ROLE_HELP)
@json_option
def check(role: str | None, as_json: bool) -> None:
    """One tiny request with one trivial tool: the model, the latency, and whether the tool call
    comes back well-formed. Exit 1 when it does not."""
    from sdd_git.providers.base import ProviderRequest, ToolSchema

    settings, chat = _provider(role)
    ping = ToolSchema("ping", "Send one word back.", _PING_PARAMETERS)
    request = ProviderRequest(
        role="provider-check",
        run_id="check",
        call_index=1,
        messages=[
            {"role": "system", "content": "You check a connection. Answer only with tool calls."},
            {"role": "user", "content": 'Call the tool ping with {"word": "pong"}.'},
        ],
        tools=[ping],
    )
    started = time.monotonic()
    try:
        reply = chat.complete(request)
    finally:
        close = getattr(chat, "close", None)
        if callable(close):
            close()
    latency = time.monotonic() - started
    calls = reply.tool_calls
    well_formed = bool(calls) and all(c.name == "ping" and c.error is None for c in calls)
    if well_formed:
        verdict = "well-formed"
    elif not calls:
        verdict = "none: the model answered in prose"
    elif calls[0].error:
        verdict = f"malformed: {calls[0].error}"
    else:
        verdict = f"malformed: it called {calls[0].name!r}, not 'ping'"
    document = {
        "provider": settings.kind,
        "base_url": settings.url,
        "model": reply.model or settings.model,
        "latency_ms": round(latency * 1000),
        "tool_calls": verdict,
        "ok": well_formed,
    }
    document = _mask(settings, document)
    verdict = document["tool_calls"]
    if as_json:
        emit_json(document)
    else:
        click.echo(f"provider: {settings.kind} at {settings.url}")
        click.echo(f"model: {document['model']}")
        click.echo(f"latency: {latency:.2f} s")
        click.echo(f"tool calls: {verdict}")
    if not well_formed:
        from sdd_git.errors import SddError

        hint = (
            "roles need tool calls: try provider.tool_choice: required, a model trained for "
            "tool use, or (llama.cpp) a server started with its chat format for tools"
        )
        raise SddError("the model does not return well-formed tool calls", hint=hint)


@provider.command("models")
@click.option("--role", default=None, metavar="NAME", help=_ROLE_HELP)
@json_option
def models(role: str | None, as_json: bool) -> None:
    """The models the server offers (GET /models; Anthropic: GET /v1/models)."""
    settings, chat = _provider(role)
    listing = getattr(chat, "models", None)
    if not callable(listing):  # pragma: no cover - every HTTP provider has it
        raise click.ClickException(f"the {settings.kind} provider cannot list models")
    try:
        found: list[str] = _mask(settings, listing())
    finally:
        close = getattr(chat, "close", None)
        if callable(close):
            close()
    if as_json:
        emit_json(found)
        return
    if not found:
        click.echo(f"{settings.url} lists no models", err=True)
        return
    click.echo("\n".join(found))
