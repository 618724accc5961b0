"""The person's connectors: `sdd connect`, `sdd disconnect`, `sdd connectors`.

`connect` keeps a token in the OS keyring (asked on hidden input, or borrowed from `gh`/`glab`
or a variable) and, for a service that is not configured yet, adds its entry to
`.sdd/config.yaml` (never the token). `statuses` says, for every built-in service and every
configured connector, whether it is configured and signed in, and from where, and for an MCP
server it starts, where that runs (in the sandbox, or with all her rights, said in words)."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sdd_git.connectors.config import (
    BASE_URL_EXAMPLES,
    DEFAULT_BASE_URLS,
    NO_BASE_URL,
    ConnectorConfig,
    load_connectors,
)
from sdd_git.connectors.kinds import BUILTIN, SERVICES
from sdd_git.connectors.signin import (
    borrow_token,
    delete_token,
    find_token,
    require_keyring,
    store_token,
)
from sdd_git.errors import UsageError
from sdd_git.root import Root


@dataclass(frozen=True)
class Connected:
    name: str
    kind: str
    keyring: str  # the keyring backend's name
    config_added: bool  # its entry was added to .sdd/config.yaml
    note: str | None = None  # e.g. a variable that is set and wins over the keyring


def connect(
    root: Root,
    name: str,
    *,
    token_from: str | None = None,
    base_url: str | None = None,
    ask: Callable[[str], str],
) -> Connected:
    """Sign connector `name` in: its token into the OS keyring, its entry into the config when
    it has none. `ask` reads the token on hidden input when `token_from` is not given (and
    refuses when there is no terminal to read it on)."""
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    config = load_connectors(root).get(name)
    kind = config.kind if config is not None else name
    if config is None and kind not in BUILTIN:
        raise UsageError(
            f"'{name}' is not a connector sdd knows, and .sdd/config.yaml does not configure it",
            hint=f"configure it first: connectors: {{{name}: {{kind: KIND, base_url: URL}}}}; "
            "built in: " + ", ".join(SERVICES),
        )
    needs_url = kind not in DEFAULT_BASE_URLS and kind not in NO_BASE_URL
    if config is None and needs_url and not base_url:
        example = BASE_URL_EXAMPLES.get(kind, "https://api.example.com")
        raise UsageError(
            f"say where your {kind} is: it has no public address",
            hint=f"sdd connect {name} --base-url {example}",
        )
    if base_url is not None:
        _check_url(base_url, name)
    require_keyring(name)  # before anything is asked or borrowed
    if token_from is not None:
        token = borrow_token(token_from, config)
    else:
        token = ask(f"Token for {name} (hidden)")
    token = token.strip()
    if not token:
        raise UsageError("no token was given; nothing was stored", hint=f"sdd connect {name}")
    stored = store_token(name, token)  # first: with no keyring, nothing is written at all
    added = False
    if config is None or (base_url is not None and base_url != config.base_url):
        added = _write_entry(root, name, base_url)
    note = None
    if config is not None and config.token_env:
        note = (
            f"while ${config.token_env} is set, it is used instead of the stored token "
            f"(connectors.{name}.token_env)"
        )
    return Connected(name, kind, stored, added, note)


def _check_url(url: str, name: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--base-url {url!r} is not an http(s) URL")
    if parts.username or parts.password:
        raise UsageError(
            "--base-url holds a sign-in; the token goes to the keyring, never into the config",
            hint=f"sdd connect {name} --base-url {parts.scheme}://{parts.hostname}{parts.path}",
        )


def _write_entry(root: Root, name: str, base_url: str | None) -> bool:
    """Add (or update the base_url of) `connectors.NAME` in the config, keeping the person's
    comments and order. Gives back whether the file changed."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.sink import person_write
    from sdd_git.yamlio import parse_yaml, round_trip_load

    with person_write(root):
        editor = YAML(typ="rt")
        editor.width = 4096
        editor.preserve_quotes = True
        document = round_trip_load(editor, root.config.read_text(encoding="utf-8"), root.config)
        section = document.get("connectors")
        if not isinstance(section, dict):
            section = CommentedMap()
            document["connectors"] = section
        entry = section.get(name)
        if not isinstance(entry, dict):
            entry = CommentedMap()
            entry.fa.set_flow_style()
            section[name] = entry
        if base_url is not None:
            entry["base_url"] = base_url
        buffer = io.StringIO()
        editor.dump(document, buffer)
        text = buffer.getvalue()
        parse_yaml(text, root.config)  # what is written reads back
        if text == root.config.read_text(encoding="utf-8"):
            return False
        from sdd_git.trust import pending

        before = pending.yaml_surface(root.config, root.path)
        write_text_atomic(root.config, text)
        pending.record_settings(root, before, f"sdd connect {name}", existed=True)
    return True


@dataclass(frozen=True)
class Disconnected:
    name: str
    removed: bool
    note: str | None = None


def disconnect(root: Root, name: str) -> Disconnected:
    """Remove connector `name`'s token from the keyring. Its config entry (no secret) stays."""
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    config = load_connectors(root).get(name)
    removed = delete_token(name)
    note = None
    if config is not None and config.token_env:
        note = f"${config.token_env} still signs it in while it is set; unset it to sign out"
    return Disconnected(name, removed, note)


def _needs_token(config: ConnectorConfig) -> bool:
    if config.kind == "script":
        return bool(config.settings.get("needs_token"))
    if config.kind == "mcp":
        return config.token_env is not None
    return True


def statuses(root: Root) -> list[dict[str, Any]]:
    """Every built-in service and every configured connector: name, kind, status."""
    configured = load_connectors(root)
    rows: list[dict[str, Any]] = []
    for name in [*SERVICES, *(n for n in configured if n not in SERVICES)]:
        config = configured.get(name)
        if config is None:
            stored = find_token(ConnectorConfig(name, name, "")).value is not None
            rows.append(
                {
                    "name": name,
                    "kind": name,
                    "configured": False,
                    "signed_in": False,
                    "token_from": "keyring" if stored else None,
                    "base_url": DEFAULT_BASE_URLS.get(name),
                    "status": "not configured, a token is stored" if stored else "not configured",
                    "sandbox": None,
                    "sandbox_warning": None,
                }
            )
            continue
        token = find_token(config)
        needs = _needs_token(config)
        if not config.base_url and config.kind not in NO_BASE_URL:
            status = "configured, no base_url"
        elif token.value:
            status = f"configured, signed in ({token.source})"
        elif needs:
            status = "configured, no token"
        else:
            status = "configured, no token needed"
        sandbox, warning = _where_it_runs(config)
        rows.append(
            {
                "name": name,
                "kind": config.kind,
                "configured": True,
                "signed_in": bool(token.value) or not needs,
                "token_from": token.source or None,
                "base_url": config.base_url or None,
                "status": status,
                "sandbox": sandbox,
                "sandbox_warning": warning,
            }
        )
    return rows


def _where_it_runs(config: ConnectorConfig) -> tuple[str | None, str | None]:
    """(the sandbox an MCP server's command runs in: bwrap, landlock, seatbelt, off or
    `none: <why>`; the words that say it runs with all her rights, when it does). (None, None)
    for a connector that starts no program of its own."""
    if config.kind != "mcp":
        return None, None
    from sdd_git.connectors.base import ConnectorError
    from sdd_git.connectors.mcp_sandbox import placement

    try:
        where = placement(config.name, config.settings)
    except ConnectorError as exc:  # a wrong `sandbox:` value: its server never starts
        return "?", f"{exc.message} (the server does not start until it is fixed)"
    return where.sandbox or None, where.warning or None
