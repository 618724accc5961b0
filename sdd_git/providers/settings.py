"""A provider's settings as `settings_for` resolved them: what the provider modules are made
from, and what `sdd provider show` prints. Below `select` and the providers alike, so the
arrows point one way: select -> (openai, anthropic) -> settings."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sdd_git.netaddress import is_local

DEFAULT_BASE_URL = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://localhost:11434/v1",
}
OLLAMA_PORT = 11434
LOCAL_CONTEXT = 8192  # tokens assumed for a local server's model unless `context` says
REMOTE_CONTEXT = 128_000  # tokens assumed for a hosted model unless `context` says
DEFAULT_TIMEOUT = 120.0
DEFAULT_RETRIES = 2  # tries after the first, for 429, 5xx and resets
# `$NAME` or `${NAME}` in a header's value: read from the environment when the run starts.
HEADER_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def variables_in(text: str) -> list[str]:
    """The variables a header's value names (`Bearer ${TOKEN}` -> TOKEN), in order."""
    return [m.group(1) or m.group(2) for m in HEADER_VARIABLE.finditer(text)]


@dataclass(frozen=True)
class ProviderSettings:
    kind: str  # openai, anthropic, ollama or script
    model: str
    base_url: str | None
    key_env: str  # the variable whose value is sent; "" for none
    script: Path | None = None
    shared_key: bool = True  # SDD_API_KEY may go (the person's own server); False otherwise
    timeout: float = DEFAULT_TIMEOUT  # seconds to wait for an answer
    retries: int = DEFAULT_RETRIES  # tries after the first (so 2 means 3 attempts)
    temperature: float | None = None
    max_tokens: int | None = None
    headers: tuple[tuple[str, str], ...] = ()  # extra headers; values may be secrets
    tool_choice: str = "auto"  # sent whenever tools are offered
    num_ctx: int | None = None  # Ollama's options.num_ctx
    context_size: int | None = None  # as configured; `context` has the default applied
    no_key: bool = False  # api_key_env: none
    listed_keys: tuple[tuple[str, tuple[str, ...]], ...] = ()  # provider.keys, for `show`
    # Anthropic's prompt cache breakpoints (`cache: off` sends none). OpenAI-compatible servers
    # cache a repeated prefix on their own, so there it changes nothing.
    cache: bool = True
    # the model key `sdd keys set NAME` stored for this destination's host: sent when no
    # variable gives one, and only there
    stored_key: str = ""

    def _from_keyring(self) -> str | None:
        if not self.stored_key or self.no_key:
            return None
        from sdd_git.secretstore import model_key

        found = (model_key(self.stored_key) or "").strip()
        return found or None

    @property
    def key(self) -> str | None:
        if self.no_key:
            return None
        if self.shared_key and os.environ.get("SDD_API_KEY"):
            return os.environ["SDD_API_KEY"]
        from_env = os.environ.get(self.key_env) if self.key_env else None
        return from_env or self._from_keyring()

    @property
    def header_variables(self) -> list[str]:
        """The variables the headers name (`api-key: $AZURE_KEY`): keys too, masked everywhere
        and kept out of every child process."""
        return list(dict.fromkeys(v for _, text in self.headers for v in variables_in(text)))

    @property
    def key_source(self) -> str | None:
        """The name of the variable whose value is sent (never the value), or None."""
        if self.no_key:
            return None
        if self.shared_key and os.environ.get("SDD_API_KEY"):
            return "SDD_API_KEY"
        if self.stored_key and not (self.key_env and os.environ.get(self.key_env)):
            return f"keyring:{self.stored_key}"
        return self.key_env or None

    @property
    def url(self) -> str:
        """Where requests go: base_url, or the kind's own service."""
        return str(self.base_url or DEFAULT_BASE_URL.get(self.kind, ""))

    @property
    def host(self) -> str:
        return host_text(self.url) if self.url else ""

    @property
    def local(self) -> bool:
        """The server runs on this machine or the local network (Ollama, llama.cpp, LM Studio)."""
        return bool(self.url) and is_local(self.url)

    @property
    def ollama(self) -> bool:
        return self.kind == "ollama" or (bool(self.url) and where(self.url)[1] == OLLAMA_PORT)

    @property
    def context(self) -> int:
        """The model's context size in tokens, for the runner's budget: as configured, else
        8192 for a local server (a small model's usual window) and 128000 for a hosted one."""
        if self.context_size is not None:
            return self.context_size
        return LOCAL_CONTEXT if self.local else REMOTE_CONTEXT

    @property
    def attempts(self) -> int:
        return self.retries + 1

    def describe(self) -> dict[str, Any]:
        """What `sdd provider show` prints: names of variables, never their values; header
        values masked (they may be secrets)."""
        source = self.key_source
        return {
            "provider": self.kind,
            "model": self.model or None,
            "base_url": self.url or None,
            "key": {
                "variable": source,
                "host": self.host if source else None,
                "set": bool(source and (os.environ.get(source) or self._from_keyring())),
                "none": self.no_key,
            },
            "keys": {host: list(names) for host, names in self.listed_keys},
            "timeout": self.timeout,
            "retries": self.retries,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "headers": {
                name: text.strip() if _only_variable(text) else "[secret]"
                for name, text in self.headers
            },
            "tool_choice": self.tool_choice,
            "num_ctx": self.num_ctx if self.ollama else None,
            "context": self.context if self.kind != "script" else None,
            "cache": self.cache,
            "script": str(self.script) if self.script else None,
        }


def _only_variable(text: str) -> bool:
    """The value is just `$NAME` (its name is shown; a written-out value may be a key)."""
    found = HEADER_VARIABLE.fullmatch(text.strip())
    return found is not None


def where(url: str, *, default_port: bool = True) -> tuple[str, int | None]:
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


def host_text(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"//{url}")
    return parts.netloc.rpartition("@")[2].lower() or url
