"""Helpers for runs against the scripted provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.root import Root
from sdd_git.runner.runlog import read_events


def script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[dict[str, Any]], name: str = "s"
) -> Path:
    """Write a replay file, point SDD_PROVIDER at it, and record a transcript beside it."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"calls": calls}, sort_keys=False))
    monkeypatch.setenv("SDD_PROVIDER", f"script:{path}")
    monkeypatch.setenv("SDD_SCRIPT_TRANSCRIPT", str(tmp_path / f"{name}.transcript.jsonl"))
    return path


def transcript(tmp_path: Path, name: str = "s") -> list[dict[str, Any]]:
    path = tmp_path / f"{name}.transcript.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def events(root: Root, run_id: str) -> list[dict[str, Any]]:
    return read_events(root.sdd / "role-runs" / f"{run_id}.jsonl")


def kinds(root: Root, run_id: str) -> list[str]:
    return [str(e["event"]) for e in events(root, run_id)]


def write_call(path: str, content: str = "x\n", purpose: str = "because") -> dict[str, Any]:
    return {"tool": "write_file", "args": {"path": path, "content": content, "purpose": purpose}}


def accepted_change(root: Root) -> str:
    """A change whose reading is accepted: the gate for code is open."""
    from sdd_git.records import acceptance, changes

    pack = changes.create(root, "I can never find last month's hotel charge.")
    acceptance.correct_reading(
        root,
        pack.id,
        "Search by month.\n\n- C1: Searching hotel lists it.\n- C2: No match says so.",
    )
    acceptance.accept_reading(root, pack.id)
    return pack.id


def add_role(root: Root, name: str, produces: str = "code", extra: str = "") -> Path:
    path = root.sdd / "roles" / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}  # the {name}\njob: Do {name} work\nlevel: 10\n"
        f"toolPolicy.delegation: deny\nproduces: {produces}\n{extra}---\nRules of {name}.\n"
    )
    from tests.trusthelp import confirm

    confirm(root, f".sdd/roles/{name}/ROLE.md")  # as she would, having written it herself
    return path
