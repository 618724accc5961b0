"""Her stored model keys (`sdd keys set`: the host each is for), as the provider's selection reads
them, and the two small helpers both share: one host or not, and where in a file a key sits."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.providers.base import ProviderError
from sdd_git.providers.settings import host_text, where
from sdd_git.root import Root

MODEL_KEYS = "model_keys"  # in her settings: {NAME: {url: URL}}, written by `sdd keys set`


@dataclass(frozen=True)
class StoredKey:
    """A model key `sdd keys set` keeps in the OS keyring: its name and the one host it is for."""

    name: str
    url: str

    @property
    def host(self) -> str:
        return host_text(self.url)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "host": self.host}


def stored_keys(root: Root) -> list[StoredKey]:
    """The model keys her user file records (`model_keys:`), each with the URL it is for. Only
    her user file says which host a key in her keyring is for: `sdd keys set` writes it there,
    and a product's layers (tracked, or arriving by a merge past .gitignore) never rebind her
    keyring's keys to another host. An entry that names no http(s) URL is an error naming its
    file and line."""
    from sdd_git.settings import USER, line_of, settings

    user = next((each for each in settings(root).layers if each.name == USER), None)
    if user is None:
        return []
    section = user.data.get(MODEL_KEYS)
    if section is None:
        return []

    def where(*keys: str) -> str:
        line = line_of(user, keys)
        return f"{user.shown}:{line}" if line else user.shown

    if not isinstance(section, dict):
        raise ProviderError(
            f"{where(MODEL_KEYS)}: key '{MODEL_KEYS}' must map a key's name to its URL",
            hint="sdd keys set NAME --for-url URL writes it",
        )
    out = []
    for name, entry in section.items():
        url = entry.get("url") if isinstance(entry, dict) else None
        if not isinstance(url, str) or url.split("://", 1)[0].lower() not in ("http", "https"):
            raise ProviderError(
                f"{where(MODEL_KEYS, str(name))}: key '{MODEL_KEYS}.{name}' must give the "
                "http(s) URL the key is for",
                hint=f"{MODEL_KEYS}: {{{name}: {{url: https://api.openai.com/v1}}}} "
                "(sdd keys set writes it)",
            )
        out.append(StoredKey(str(name), url))
    return out


def stored_key_for(root: Root, destination: str) -> str:
    """The name of the stored model key recorded for the scheme, host and port of
    `destination`, or "". The scheme counts: a key kept for https://HOST:443 never goes over
    plain http to the same host and port. Two for the same place is an error: sdd never
    guesses which key to send."""
    if not destination:
        return ""
    matching = [k for k in stored_keys(root) if same_place(k.url, destination)]
    if len(matching) > 1:
        names = ", ".join(k.name for k in matching)
        raise ProviderError(
            f"the model keys {names} are all for {host_text(destination)}; sdd does not guess "
            "which to send",
            hint=f"remove one with: sdd keys remove {matching[-1].name}",
        )
    return matching[0].name if matching else ""


def same_place(one: str, other: str) -> bool:
    """One scheme, host and port (a bare `host[:port]` has no scheme to differ in)."""
    return same_host(one, other) and _scheme(one) == _scheme(other)


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].strip().lower() if "://" in url else ""


# The model aliases sdd knows without being told; her settings' `models:` adds to them and
# overrides them (`models: {sonnet: {kind: anthropic, model: claude-sonnet-4-5}}`).
def same_host(one: str, other: str) -> bool:
    return bool(one and other) and where(one) == where(other)


def place(source: Path | None, section: str, key: str | None) -> str:
    """`file:line` of `key` inside the `section:` mapping of a YAML file (or a ROLE.md's front
    matter), found in its text: the line a person would go to."""
    if source is None:
        return "the role's model" if section == "model" else section
    from sdd_git.paths import display

    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return display(source)
    head = re.compile(rf"^\s*{re.escape(section)}\s*:")
    start = next((n for n, line in enumerate(lines) if head.match(line)), None)
    if start is None:
        return f"{display(source)}:1"
    if key is not None:
        pattern = re.compile(rf"(^|[\s{{,]){re.escape(key)}\s*:")
        first = lines[start].split(":", 1)[1]
        if pattern.search(first):
            return f"{display(source)}:{start + 1}"
        for n in range(start + 1, len(lines)):
            if pattern.search(lines[n]):
                return f"{display(source)}:{n + 1}"
    return f"{display(source)}:{start + 1}"
