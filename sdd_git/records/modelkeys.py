"""`sdd keys set | list | remove`: model keys in the OS keyring, each for one host.

The key itself goes to the OS keyring (`sdd_git.secretstore`, as a connector's token does);
the host it is for is written to her user settings (`model_keys: {NAME: {url: URL}}`), which
is grant surface: the person command records it in this product's trust ledger, and another
product sends the key only once she has confirmed her user file there (CONTRACT §13). A
provider sends a stored key when no variable gives one, and only to a destination on its
host (`providers.stored.stored_key_for`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sdd_git.errors import UsageError
from sdd_git.providers.select import MIN_SECRET_LENGTH
from sdd_git.providers.stored import MODEL_KEYS, StoredKey, stored_keys
from sdd_git.root import Root

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")


@dataclass(frozen=True)
class Listed:
    key: StoredKey
    stored: bool  # the keyring holds a value for it

    def as_json(self) -> dict[str, Any]:
        return {**self.key.as_json(), "stored": self.stored}


def check_name(name: str) -> None:
    if not _NAME.match(name):
        raise UsageError(
            f"'{name}' is not a key name: lowercase letters, digits, '.', '-' and '_', "
            "1-40 characters",
            hint="sdd keys set openai",
        )


def default_url(root: Root) -> str:
    """The URL of her configured provider: where a key set without --for-url goes. Read only
    from settings she has confirmed, in every layer: a merged `.sdd/config.yaml` that names
    another host must not bind her key to it."""
    from sdd_git.providers.select import settings_for
    from sdd_git.trust.pending import require_settings

    require_settings(root, "keeping a key for your provider's URL")
    url = settings_for(root, None).url
    if not url:
        raise UsageError(
            "your settings name no provider URL to keep the key for",
            hint="sdd keys set NAME --for-url https://api.openai.com/v1",
        )
    return url


def check_url(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"--for-url {url!r} is not an http(s) URL",
            hint="sdd keys set openai --for-url https://api.openai.com/v1",
        )
    if parts.username or parts.password:
        raise UsageError(
            "--for-url holds a sign-in; a key never goes in a URL",
            hint="give the address alone: --for-url https://HOST/PATH",
        )
    return url.strip()


def require_keyring() -> None:
    """Before she is asked for the key: is there a keyring to keep it in?"""
    from sdd_git import secretstore

    secretstore.require_keyring(_env_route())


def set_key(root: Root, name: str, secret: str, url: str) -> tuple[StoredKey, str]:
    """Keep `secret` under NAME for `url`'s host; gives back the entry and the keyring's name."""
    from sdd_git import secretstore

    check_name(name)
    url = check_url(url)
    secret = secret.strip()
    if not secret:
        raise UsageError("no key was given; nothing was stored", hint=f"sdd keys set {name}")
    if any(ch.isspace() for ch in secret):
        raise UsageError("a key holds no spaces or line breaks; nothing was stored")
    if len(secret) < MIN_SECRET_LENGTH:
        raise UsageError(
            f"the key is shorter than {MIN_SECRET_LENGTH} characters; nothing was stored",
            hint="masking so short a value would hide ordinary words in logs",
        )
    others = [k for k in stored_keys(root) if k.name != name and _same_host(k.url, url)]
    if others:
        raise UsageError(
            f"the key {others[0].name} is for {others[0].host} already; sdd keeps one key a host",
            hint=f"sdd keys remove {others[0].name} first, or set {others[0].name} again",
        )
    backend = secretstore.store_secret(
        secretstore.MODEL_KEY_PREFIX + name, secret, f"the model key {name}", _env_route()
    )
    _write_entry(root, name, {"url": url}, "sdd keys set")
    return StoredKey(name, url), backend


def remove_key(root: Root, name: str) -> bool:
    """Delete the key from the keyring and its entry from her user file; False when neither
    was there."""
    from sdd_git import secretstore

    check_name(name)
    removed = secretstore.delete_secret(secretstore.MODEL_KEY_PREFIX + name, f"the key {name}")
    listed = any(k.name == name for k in stored_keys(root))
    if listed:
        _write_entry(root, name, None, "sdd keys remove")
    return removed or listed


def list_keys(root: Root) -> list[Listed]:
    from sdd_git.secretstore import model_key

    return [Listed(key, model_key(key.name) is not None) for key in stored_keys(root)]


def _write_entry(root: Root, name: str, entry: dict[str, Any] | None, how: str) -> None:
    """Set (or, with None, remove) `model_keys.NAME` in her user file, comments kept, and
    record the file in this product's ledger when what it replaced was hers."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.settings import USER, read_layer, user_config_file
    from sdd_git.sink import person_write
    from sdd_git.trust import pending
    from sdd_git.yamlio import dump_yaml, edit_mapping

    path = user_config_file()
    with person_write(root):
        existed = path.is_file()
        before = pending.yaml_surface(path, None) if existed else None
        data = read_layer(USER, path, None) if existed else {}
        section = dict(data.get(MODEL_KEYS) or {})
        if entry is None:
            section.pop(name, None)
        else:
            section[name] = entry
        if existed and path.read_text(encoding="utf-8").strip():
            text = edit_mapping(path, {MODEL_KEYS: section}, None)
        else:
            text = dump_yaml({MODEL_KEYS: section})
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_text_atomic(path, text)
        pending.record_layer(root, path, before, how, existed=existed)


def _same_host(one: str, other: str) -> bool:
    from sdd_git.providers.settings import where

    return where(one) == where(other)


def _env_route() -> str:
    return (
        "put the key in an environment variable and name it in your settings: "
        "provider: {api_key_env: MY_KEY}"
    )
