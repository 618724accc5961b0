"""Her plan is hers once drafted (CONTRACT §9, issue 22.4): an existing `plan.yaml` that is not
accepted, drafted or edited by her after an acceptance, is never redrafted by `sdd work`. It
waits as a plan stop: exit 3, no model call, the file byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.network.test_drive import SUMMARY, money, node, node_runs  # noqa: F401 (a fixture)
from tests.runner.scripted import script, transcript


def lead_drafts(
    root: Root, change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[dict[str, Any]]:
    """A script where every run of the lead drafts a plan of its own (so a redraft would
    show), and the expenses owner returns its result."""
    draft = {
        "tool": "draft_plan",
        "args": {"change": change, "nodes": [node("N1", "expenses-dev", "expenses")]},
    }
    calls = [
        {"role": "money-lead", "tool_calls": [draft]},
        {"role": "money-lead", "say": "Plan drafted."},
        {"role": "expenses-dev", "tool_calls": [SUMMARY]},
        {"role": "expenses-dev", "say": "Done."},
    ]
    script(tmp_path, monkeypatch, calls)
    return calls


def her_edit(root: Root, change: str) -> bytes:
    path = root.path / "changes" / change / "plan.yaml"
    text = path.read_text(encoding="utf-8").replace("Do N1", "Do N1, the way she wants it")
    assert "the way she wants it" in text
    path.write_text(text + "# her own note\n", encoding="utf-8")
    return path.read_bytes()


def test_a_drafted_plan_she_edited_is_never_redrafted_and_waits_as_a_plan_stop(
    sdd: SddRunner,
    money: tuple[Root, str],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, change = money
    lead_drafts(root, change, tmp_path, monkeypatch)
    first = sdd("work", change, "--json")
    assert first.code == 3, first.stderr
    assert json.loads(first.stdout)["stop"]["kind"] == "plan"
    calls = len(transcript(tmp_path))
    mine = her_edit(root, change)  # her correction, before any acceptance
    again = sdd("work", change, "--json")
    assert again.code == 3, again.stderr
    shown = json.loads(again.stdout)
    assert (
        shown["stop"]["kind"] == "plan" and f"sdd accept plan {change}" in shown["stop"]["action"]
    )
    assert len(transcript(tmp_path)) == calls  # no model call
    assert (root.path / "changes" / change / "plan.yaml").read_bytes() == mine
    assert sdd("work", change, "--json").code == 3  # and it goes on waiting, the same stop
    assert len(transcript(tmp_path)) == calls
    assert shown["stop"]["id"] in sdd("stops").stdout  # a stop like any other


def test_a_plan_she_edited_after_accepting_it_waits_for_her_and_is_never_redrafted(
    sdd: SddRunner,
    money: tuple[Root, str],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, change = money
    lead_drafts(root, change, tmp_path, monkeypatch)
    assert sdd("work", change).code == 3
    assert sdd("accept", "plan", change).code == 0
    calls = len(transcript(tmp_path))
    mine = her_edit(root, change)  # the accept-plan decision holds the sha256 of the old bytes
    waiting = sdd("work", change)
    assert waiting.code == 3, waiting.stdout + waiting.stderr
    assert "STOP" in waiting.stdout and f"sdd accept plan {change}" in waiting.stdout
    assert len(transcript(tmp_path)) == calls  # neither the lead nor a node was called
    assert (root.path / "changes" / change / "plan.yaml").read_bytes() == mine
    assert node_runs(root) == {}
    assert sdd("accept", "plan", change).code == 0  # she accepts her own plan: it runs
    done = sdd("work", change, "--json")
    assert done.code == 0, done.stdout
    assert (root.path / "changes" / change / "plan.yaml").read_bytes() == mine
    (ran,) = node_runs(root)["N1"]
    assert ran[0]["task"] == "Do N1, the way she wants it"
