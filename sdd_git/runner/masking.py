"""One masker for every line that leaves the runner: run logs, conversations, messages to a model.

It hides each secret's exact value and the forms it commonly travels in (base64, URL-encoded,
JSON-escaped), line by line for multi-line secrets.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

MASK = "[secret]"
_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)


class Masker:
    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if not secret or len(secret) < 8:
                continue
            for part in [secret, *secret.splitlines()]:
                if len(part) < 8:
                    continue
                forms.update(_forms(part))
        # Longest first, so a form that contains another is replaced whole.
        ordered = sorted(forms, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(f) for f in ordered)) if ordered else None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(MASK, text)


def _forms(secret: str) -> set[str]:
    encoded = secret.encode()
    return {
        secret,
        base64.b64encode(encoded).decode(),
        base64.b64encode(encoded).decode().rstrip("="),
        base64.urlsafe_b64encode(encoded).decode().rstrip("="),
        quote(secret, safe=""),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
    }


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def child_environment(
    base: Mapping[str, str], run_id: str, extra_secret_names: Iterable[str] = ()
) -> dict[str, str]:
    """The environment of a run's child processes: no provider or connector secrets, and
    SDD_RUN_ID, which makes every person command refuse to run."""
    drop = set(extra_secret_names) | {"SDD_API_KEY"}
    env = {k: v for k, v in base.items() if k not in drop and not is_secret_name(k)}
    env["SDD_RUN_ID"] = run_id
    return env


def secrets_from_environment(names: Iterable[str]) -> list[str]:
    return [os.environ[name] for name in names if os.environ.get(name)]
