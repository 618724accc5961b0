"""Shared pieces of the connector core's tests: a file keyring (so no test ever touches the
person's real keyring), config writing, and scripted connectors with their call logs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
import yaml
from keyring.backend import KeyringBackend

from sdd_git.root import Root

GH_TOKEN = "ghp_" + "T0kenForTests" + "x" * 23  # the shape of a classic GitHub token
TOKEN_VARIABLE = "GH_PAT_FOR_TEST"  # not secret by its name: only the config says it is


class FileKeyring(KeyringBackend):
    """A keyring in a JSON file under $HOME (each test has its own HOME)."""

    priority = 1

    @staticmethod
    def _path() -> Path:
        return Path(os.environ["HOME"]) / ".test-keyring.json"

    def _load(self) -> dict[str, str]:
        path = self._path()
        return json.loads(path.read_text()) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if data.pop(f"{service}/{username}", None) is None:
            from keyring.errors import PasswordDeleteError

            raise PasswordDeleteError("not there")
        self._path().write_text(json.dumps(data))


@pytest.fixture(autouse=True)
def file_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test of the core gets a file keyring of its own (also its child processes)."""
    before = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())  # type: ignore[no-untyped-call]
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.connectors.core_support.FileKeyring")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    yield FileKeyring._path()
    keyring.set_keyring(before)


def configure(root: Root, **sections: Any) -> None:
    """Merge top-level sections (`connectors=`, `deploy=`) into `.sdd/config.yaml`."""
    data = yaml.safe_load(root.config.read_text()) or {}
    data.update(sections)
    root.config.write_text(yaml.safe_dump(data, sort_keys=False))
    from tests.trusthelp import confirm

    confirm(root, ".sdd/config.yaml")  # as she would, having written it herself


def scripted(
    tmp_path: Path,
    name: str,
    operations: dict[str, Any],
    *,
    like: str | None = "github",
    send_draft: dict[str, Any] | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """A scripted connector's config entry, its script written under tmp_path (outside the
    product, so nothing of it lands in the product's files)."""
    path = tmp_path / f"{name}.script.yaml"
    script: dict[str, Any] = {"operations": operations}
    if send_draft is not None:
        script["send_draft"] = send_draft
    path.write_text(yaml.safe_dump(script, sort_keys=False))
    entry: dict[str, Any] = {"kind": "script", "file": str(path), **settings}
    if like is not None:
        entry["like"] = like
    return entry


def calls(tmp_path: Path, name: str) -> list[dict[str, Any]]:
    """The calls a scripted connector got, in order."""
    path = tmp_path / f"{name}.script.yaml.calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]
